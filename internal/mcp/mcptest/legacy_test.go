package mcptest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func wantViolation(t *testing.T, h *Handler, why string) {
	t.Helper()
	v := h.Violations()
	if len(v) == 0 || !strings.Contains(v[len(v)-1].Violation, why) {
		t.Fatalf("want violation %q, got %+v", why, v)
	}
	h.Reset()
}

func TestLegacyStateless(t *testing.T) {
	s := startServer(t, Options{Legacy: true, Tools: []json.RawMessage{tool("a")}})
	c := newClient(t)

	// driftd's modern probe gets go-sdk <=1.6's plain-text refusal.
	r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	want := "Bad Request: Unsupported protocol version (supported versions: 2025-11-25,2025-06-18,2025-03-26,2024-11-05)\n"
	if r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") || string(r.body) != want {
		t.Fatalf("modern probe: %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	// Without the header, server/discover is just an unknown method.
	r = post(t, c, s, legacyHeader(""), modernMsg(2, "server/discover", nil))
	wantStatusCode(t, r, 200, -32601)

	r = post(t, c, s, legacyHeader(""), legacyMsg(3, "initialize", initParams("2025-11-25")))
	res := r.result(t)
	if r.status != 200 || string(res["protocolVersion"]) != `"2025-11-25"` || r.header.Get("Mcp-Session-Id") != "" ||
		!strings.Contains(string(res["serverInfo"]), "mcptest") || string(res["capabilities"]) != `{"tools":{"listChanged":false}}` {
		t.Fatalf("initialize: %d %v %s", r.status, r.header, r.body)
	}
	// An unknown requested version is answered with the newest supported.
	r = post(t, c, s, legacyHeader(""), legacyMsg(4, "initialize", initParams("2024-01-01")))
	if res := r.result(t); string(res["protocolVersion"]) != `"2025-11-25"` {
		t.Fatalf("negotiation: %s", r.body)
	}
	if r = post(t, c, s, legacyHeader("2025-11-25"), legacyMsg(nil, "notifications/initialized", nil)); r.status != 202 || len(r.body) != 0 {
		t.Fatalf("initialized: %d %q", r.status, r.body)
	}
	r = post(t, c, s, legacyHeader("2025-11-25"), legacyMsg(5, "tools/list", nil))
	res = r.result(t)
	if r.status != 200 || !strings.Contains(string(res["tools"]), `"a"`) {
		t.Fatalf("tools/list: %s", r.body)
	}
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := res[k]; ok {
			t.Fatalf("legacy result carries %s: %s", k, r.body)
		}
	}
	r = post(t, c, s, legacyHeader("2025-11-25"), legacyMsg(6, "ping", nil))
	if r.status != 200 || string(r.msg["result"]) != "{}" {
		t.Fatalf("ping: %s", r.body)
	}
	if r = do(t, c, http.MethodGet, s.URL, legacyHeader("2025-11-25"), nil); r.status != 405 {
		t.Fatalf("GET: %d", r.status)
	}
	wantNoViolations(t, s.Handler)

	r = post(t, c, s, legacyHeader(""), legacyMsg(7, "tools/list", nil))
	wantStatusCode(t, r, 400, -32600)
	wantViolation(t, s.Handler, "MCP-Protocol-Version missing")

	p := initParams("2025-11-25")
	delete(p, "clientInfo")
	r = post(t, c, s, legacyHeader(""), legacyMsg(8, "initialize", p))
	wantStatusCode(t, r, 400, -32602)
	wantViolation(t, s.Handler, "clientInfo")
}

func TestLegacySessions(t *testing.T) {
	s := startServer(t, Options{Legacy: true, Sessions: true, Tools: []json.RawMessage{tool("a")}})
	c := newClient(t)

	// A modern header on initialize is refused like the modern probe.
	h := legacyHeader("2026-07-28")
	if r := post(t, c, s, h, legacyMsg(1, "initialize", initParams("2025-11-25"))); r.status != 400 || r.msg != nil {
		t.Fatalf("initialize with modern header: %d %s", r.status, r.body)
	}
	r := post(t, c, s, legacyHeader(""), legacyMsg(2, "initialize", initParams("2025-06-18")))
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" || strings.ContainsFunc(sid, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		t.Fatalf("initialize: %d session %q", r.status, sid)
	}
	wantNoViolations(t, s.Handler)

	sess := legacyHeader("2025-06-18")
	sess.Set("Mcp-Session-Id", sid)
	r = post(t, c, s, sess, legacyMsg(3, "tools/list", nil))
	wantStatusCode(t, r, 400, -32600)
	wantViolation(t, s.Handler, "before notifications/initialized")

	r = post(t, c, s, legacyHeader("2025-06-18"), legacyMsg(nil, "notifications/initialized", nil))
	wantStatusCode(t, r, 400, -32600)
	wantViolation(t, s.Handler, "Mcp-Session-Id missing")

	unknown := sess.Clone()
	unknown.Set("Mcp-Session-Id", "nope")
	r = post(t, c, s, unknown, legacyMsg(nil, "notifications/initialized", nil))
	wantStatusCode(t, r, 404, -32600)
	wantViolation(t, s.Handler, "unknown Mcp-Session-Id")

	if r = post(t, c, s, sess, legacyMsg(nil, "notifications/initialized", nil)); r.status != 202 {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	r = post(t, c, s, sess, legacyMsg(4, "tools/list", nil))
	if r.status != 200 || !strings.Contains(string(r.result(t)["tools"]), `"a"`) {
		t.Fatalf("tools/list: %d %s", r.status, r.body)
	}
	r = post(t, c, s, sess, legacyMsg(5, "tools/call", map[string]any{"name": "missing"}))
	wantStatusCode(t, r, 200, -32602)
	wantNoViolations(t, s.Handler)

	wrong := sess.Clone()
	wrong.Set("MCP-Protocol-Version", "2025-11-25")
	r = post(t, c, s, wrong, legacyMsg(6, "tools/list", nil))
	wantStatusCode(t, r, 400, -32600)
	wantViolation(t, s.Handler, "negotiated")

	if r = do(t, c, http.MethodDelete, s.URL, sess, nil); r.status != 200 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	r = post(t, c, s, sess, legacyMsg(7, "tools/list", nil))
	wantStatusCode(t, r, 404, -32600)
	wantViolation(t, s.Handler, "unknown Mcp-Session-Id")
}

func TestLegacyDiscoverStyles(t *testing.T) {
	s := startServer(t, Options{Legacy: true, LegacyDiscover: "method-not-found"})
	c := newClient(t)
	r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	wantStatusCode(t, r, 200, -32601)

	s.SetOptions(func(o *Options) { o.LegacyDiscover = "discover-legacy-only" })
	r = post(t, c, s, modernHeader("server/discover"), modernMsg(2, "server/discover", nil))
	res := r.result(t)
	if r.status != 200 || string(res["supportedVersions"]) != `["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]` ||
		string(res["resultType"]) != `"complete"` {
		t.Fatalf("discover: %s", r.body)
	}
	r = post(t, c, s, modernHeader("tools/list"), modernMsg(3, "tools/list", nil))
	wantStatusCode(t, r, 400, -32022)
	if !strings.Contains(string(r.body), `"supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`) {
		t.Fatalf("-32022 data: %s", r.body)
	}
	wantNoViolations(t, s.Handler)

	// The modern discover is still held to the modern header rules.
	h := modernHeader("server/discover")
	h.Del("Mcp-Method")
	r = post(t, c, s, h, modernMsg(4, "server/discover", nil))
	wantStatusCode(t, r, 400, -32020)
	wantViolation(t, s.Handler, "Mcp-Method missing")
}
