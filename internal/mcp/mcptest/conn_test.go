package mcptest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func toolNames(t *testing.T, r result) string {
	t.Helper()
	var tools []struct{ Name string }
	_ = json.Unmarshal(r.result(t)["tools"], &tools)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

func TestPerConnectionVariance(t *testing.T) {
	s := startServer(t, Options{
		Tools:          []json.RawMessage{tool("a"), tool("b")},
		OtherConnTools: []json.RawMessage{tool("a"), tool("x")},
	})
	first, second := newClient(t), newClient(t)
	list := func(c *http.Client) string {
		return toolNames(t, post(t, c, s, modernHeader("tools/list"), modernMsg(1, "tools/list", nil)))
	}
	if got := list(first); got != "a,b" {
		t.Fatalf("first connection: %s", got)
	}
	if got := list(second); got != "a,x" {
		t.Fatalf("second connection: %s", got)
	}
	if got := list(first); got != "a,b" {
		t.Fatalf("first connection reused: %s", got)
	}
	reqs := s.Requests()
	if reqs[0].Conn != 1 || reqs[1].Conn != 2 || reqs[2].Conn != 1 {
		t.Fatalf("conns %d %d %d", reqs[0].Conn, reqs[1].Conn, reqs[2].Conn)
	}

	s.SetOptions(func(o *Options) { o.OtherConnTools, o.ReverseOtherConns = nil, true })
	if got := list(second); got != "b,a" {
		t.Fatalf("reversed: %s", got)
	}
	if got := list(first); got != "a,b" {
		t.Fatalf("first connection after reverse: %s", got)
	}
	wantNoViolations(t, s.Handler)
}

func TestHandlerStandalone(t *testing.T) {
	h := NewHandler(Options{Tools: []json.RawMessage{tool("a")}})
	ts := httptest.NewServer(h)
	defer ts.Close()
	r := do(t, newClient(t), http.MethodPost, ts.URL+"/any/path", modernHeader("tools/list"), modernMsg(1, "tools/list", nil))
	if r.status != 200 || toolNames(t, r) != "a" {
		t.Fatalf("standalone: %d %s", r.status, r.body)
	}
	wantNoViolations(t, h)
}

func TestNoLog(t *testing.T) {
	s := startServer(t, Options{Tools: []json.RawMessage{tool("a")}, NoLog: true})
	for _, c := range []*http.Client{newClient(t), newClient(t)} {
		if got := toolNames(t, post(t, c, s, modernHeader("tools/list"), modernMsg(1, "tools/list", nil))); got != "a" {
			t.Fatalf("tools: %s", got)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Fatalf("%d requests logged, want none", n)
	}
}
