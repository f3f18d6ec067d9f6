package mcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func fiveTools() []json.RawMessage {
	var out []json.RawMessage
	for i := range 5 {
		out = append(out, tool(fmt.Sprintf("t%d", i)))
	}
	return out
}

// listPage fetches one tools/list page; cursor "" means the first page.
func listPage(t *testing.T, c *http.Client, s *Server, cursor any) (names []string, next string, r result) {
	t.Helper()
	var params map[string]any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	r = post(t, c, s, modernHeader("tools/list"), modernMsg(1, "tools/list", params))
	if r.status != 200 {
		return nil, "", r
	}
	res := r.result(t)
	var tools []struct{ Name string }
	_ = json.Unmarshal(res["tools"], &tools)
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	_ = json.Unmarshal(res["nextCursor"], &next)
	return names, next, r
}

func TestPaging(t *testing.T) {
	s := startServer(t, Options{Tools: fiveTools(), PageSize: 2})
	c := newClient(t)
	var all []string
	cursor, pages := "", 0
	seen := map[string]bool{}
	for {
		names, next, r := listPage(t, c, s, cursor)
		if r.status != 200 {
			t.Fatalf("page %d: %d %s", pages, r.status, r.body)
		}
		if res := r.result(t); res["ttlMs"] == nil || res["cacheScope"] == nil {
			t.Fatalf("page without cache hints: %s", r.body)
		}
		all = append(all, names...)
		pages++
		if next == "" {
			break
		}
		if seen[next] || strings.Contains(next, "2") && len(next) < 3 {
			t.Fatalf("cursor %q reused or not opaque", next)
		}
		seen[next] = true
		cursor = next
	}
	if pages != 3 || strings.Join(all, ",") != "t0,t1,t2,t3,t4" {
		t.Fatalf("pages %d tools %v", pages, all)
	}
	// Cursors are stable: the first page names the same next cursor again.
	if _, next, _ := listPage(t, c, s, ""); !seen[next] {
		t.Fatalf("first page cursor %q changed", next)
	}
	wantNoViolations(t, s.Handler)

	for _, bad := range []any{"not-a-cursor", 7} {
		s.Reset()
		_, _, r := listPage(t, c, s, bad)
		wantStatusCode(t, r, 400, -32602)
		if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0].Violation, "cursor") {
			t.Fatalf("cursor %v: violations %+v", bad, v)
		}
	}
}

func TestCursorLoop(t *testing.T) {
	s := startServer(t, Options{Tools: fiveTools(), PageSize: 2, Fault: FaultCursorLoop})
	c := newClient(t)
	_, first, _ := listPage(t, c, s, "")
	_, second, _ := listPage(t, c, s, first)
	_, third, _ := listPage(t, c, s, second)
	if first == "" || first != second || second != third {
		t.Fatalf("cursors %q %q %q", first, second, third)
	}
	wantNoViolations(t, s.Handler)
}
