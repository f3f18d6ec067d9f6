package mcptest

import (
	"encoding/json"
	"testing"
)

// TestItemLists: prompts, resources and templates are served, paged and
// advertised when set; a list that is not set answers -32601 and is not
// advertised.
func TestItemLists(t *testing.T) {
	prompts := []json.RawMessage{json.RawMessage(`{"name":"p1"}`), json.RawMessage(`{"name":"p2"}`), json.RawMessage(`{"name":"p3"}`)}
	s := startServer(t, Options{Tools: fiveTools(), Prompts: prompts, ResourceTemplates: []json.RawMessage{json.RawMessage(`{"name":"t","uriTemplate":"x://{y}"}`)}, PageSize: 2})
	c := newClient(t)
	r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(r.result(t)["capabilities"], &caps)
	if caps["prompts"] == nil || caps["resources"] == nil {
		t.Fatalf("capabilities %s", r.result(t)["capabilities"])
	}
	r = post(t, c, s, modernHeader("prompts/list"), modernMsg(2, "prompts/list", nil))
	res := r.result(t)
	var page []json.RawMessage
	var next string
	_ = json.Unmarshal(res["prompts"], &page)
	_ = json.Unmarshal(res["nextCursor"], &next)
	if len(page) != 2 || next == "" || res["ttlMs"] == nil {
		t.Fatalf("first prompts page: %s", r.body)
	}
	r = post(t, c, s, modernHeader("prompts/list"), modernMsg(3, "prompts/list", map[string]any{"cursor": next}))
	res = r.result(t)
	_ = json.Unmarshal(res["prompts"], &page)
	if len(page) != 1 || res["nextCursor"] != nil {
		t.Fatalf("second prompts page: %s", r.body)
	}
	// Templates set, resources not: resources/list serves an empty list.
	r = post(t, c, s, modernHeader("resources/list"), modernMsg(4, "resources/list", nil))
	if string(r.result(t)["resources"]) != "[]" {
		t.Fatalf("resources/list: %s", r.body)
	}
	wantNoViolations(t, s.Handler)

	plain := startServer(t, Options{Tools: fiveTools()})
	r = post(t, c, plain, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	caps = nil
	_ = json.Unmarshal(r.result(t)["capabilities"], &caps)
	if caps["prompts"] != nil || caps["resources"] != nil {
		t.Fatalf("capabilities without lists: %s", r.result(t)["capabilities"])
	}
	r = post(t, c, plain, modernHeader("prompts/list"), modernMsg(2, "prompts/list", nil))
	wantStatusCode(t, r, 404, -32601)
}
