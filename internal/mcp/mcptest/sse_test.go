package mcptest

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSSEFraming(t *testing.T) {
	s := startServer(t, Options{SSE: true, Tools: fiveTools()})
	c := newClient(t)
	r := post(t, c, s, modernHeader("tools/list"), modernMsg(3, "tools/list", nil))
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || r.header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("status %d header %v", r.status, r.header)
	}
	raw := string(r.body)
	if strings.Contains(raw, "\nid:") || strings.HasPrefix(raw, "id:") {
		t.Fatalf("modern stream carries event ids:\n%s", raw)
	}
	comments, events := sseEvents(t, r.body)
	if len(comments) == 0 || len(events) != 3 || events[0] != "" {
		t.Fatalf("comments %q events %q", comments, events)
	}
	var note struct{ Method string }
	if json.Unmarshal([]byte(events[1]), &note) != nil || note.Method != "notifications/message" {
		t.Fatalf("notification event %q", events[1])
	}
	var resp struct {
		ID     int
		Result struct{ Tools []json.RawMessage }
	}
	if err := json.Unmarshal([]byte(events[2]), &resp); err != nil || resp.ID != 3 || len(resp.Result.Tools) != 5 {
		t.Fatalf("response event %q: %v", events[2], err)
	}
	if !strings.Contains(events[2], "\n") {
		t.Fatal("response event is not split over several data: lines")
	}

	// A progressToken asks for progress notifications instead.
	msg := modernMsg(4, "server/discover", nil)
	metaOf(msg)["progressToken"] = "p1"
	_, events = sseEvents(t, post(t, c, s, modernHeader("server/discover"), msg).body)
	if len(events) != 3 || !strings.Contains(events[1], `"notifications/progress"`) || !strings.Contains(events[1], `"p1"`) {
		t.Fatalf("events %q", events)
	}

	// Rejections stay plain JSON.
	h := modernHeader("server/discover")
	h.Del("Mcp-Method")
	if r := post(t, c, s, h, modernMsg(5, "server/discover", nil)); r.header.Get("Content-Type") != "application/json" || r.rpcCode() != -32020 {
		t.Fatalf("rejection: %v %s", r.header, r.body)
	}
}

func TestSSELegacyPriming(t *testing.T) {
	s := startServer(t, Options{SSE: true, Legacy: true})
	c := newClient(t)
	r := post(t, c, s, legacyHeader(""), legacyMsg(1, "initialize", initParams("2025-11-25")))
	if !strings.Contains(string(r.body), "id: 0\ndata:\n\n") {
		t.Fatalf("no legacy priming event:\n%s", r.body)
	}
	_, events := sseEvents(t, r.body)
	if len(events) != 3 || !strings.Contains(events[2], `"protocolVersion": "2025-11-25"`) {
		t.Fatalf("events %q", events)
	}
}
