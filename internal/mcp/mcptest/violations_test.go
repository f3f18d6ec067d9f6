package mcptest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// vcase is one malformed modern request and the spec's answer to it.
type vcase struct {
	name     string
	httpVerb string
	header   func(http.Header)
	msg      func(map[string]any)
	raw      []byte // replaces the body when set
	status   int
	code     int
	why      string // substring of the recorded violation
	nullID   bool   // the error must carry id null
}

func metaOf(m map[string]any) map[string]any {
	return m["params"].(map[string]any)["_meta"].(map[string]any)
}

var violationCases = []vcase{
	{name: "missing MCP-Protocol-Version", header: func(h http.Header) { h.Del("MCP-Protocol-Version") },
		status: 400, code: -32020, why: "MCP-Protocol-Version missing"},
	{name: "MCP-Protocol-Version differs from _meta", header: func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-11-25") },
		status: 400, code: -32020, why: "does not match _meta protocolVersion"},
	{name: "missing Mcp-Method", header: func(h http.Header) { h.Del("Mcp-Method") },
		status: 400, code: -32020, why: "Mcp-Method missing"},
	{name: "mismatched Mcp-Method", header: func(h http.Header) { h.Set("Mcp-Method", "tools/list") },
		status: 400, code: -32020, why: "Mcp-Method \"tools/list\" does not match"},
	{name: "Mcp-Method differs in case", header: func(h http.Header) { h.Set("Mcp-Method", "Tools/Call") },
		status: 400, code: -32020, why: "does not match"},
	{name: "missing Mcp-Name", header: func(h http.Header) { h.Del("Mcp-Name") },
		status: 400, code: -32020, why: "Mcp-Name missing"},
	{name: "mismatched Mcp-Name", header: func(h http.Header) { h.Set("Mcp-Name", "other") },
		status: 400, code: -32020, why: "does not match params.name"},
	{name: "unencoded non-ASCII Mcp-Name", header: func(h http.Header) { h.Set("Mcp-Name", "Hello, 世界") },
		msg:    func(m map[string]any) { m["params"].(map[string]any)["name"] = "Hello, 世界" },
		status: 400, code: -32020, why: "Mcp-Name \"Hello, 世界\" invalid"},
	{name: "plain Mcp-Name that looks like the sentinel", header: func(h http.Header) { h.Set("Mcp-Name", "=?base64?abc?=") },
		msg:    func(m map[string]any) { m["params"].(map[string]any)["name"] = "=?base64?abc?=" },
		status: 400, code: -32020, why: "invalid"},
	{name: "plain sentinel-like Mcp-Name with a decodable payload", header: func(h http.Header) { h.Set("Mcp-Name", "=?base64?SGk=?=") },
		msg:    func(m map[string]any) { m["params"].(map[string]any)["name"] = "=?base64?SGk=?=" },
		status: 400, code: -32020, why: "does not match"},
	{name: "_meta beside params", msg: func(m map[string]any) {
		m["_meta"] = metaOf(m)
		delete(m["params"].(map[string]any), "_meta")
	}, status: 400, code: -32600, why: `unexpected top-level member "_meta"`},
	{name: "params without _meta", msg: func(m map[string]any) { delete(m["params"].(map[string]any), "_meta") },
		status: 400, code: -32602, why: "params._meta missing"},
	{name: "no params", msg: func(m map[string]any) { delete(m, "params") },
		status: 400, code: -32602, why: "params missing"},
	{name: "missing clientCapabilities", msg: func(m map[string]any) { delete(metaOf(m), "io.modelcontextprotocol/clientCapabilities") },
		status: 400, code: -32602, why: "clientCapabilities missing"},
	{name: "clientCapabilities not an object", msg: func(m map[string]any) { metaOf(m)["io.modelcontextprotocol/clientCapabilities"] = []int{} },
		status: 400, code: -32602, why: "clientCapabilities must be an object"},
	{name: "missing protocolVersion in _meta", msg: func(m map[string]any) { delete(metaOf(m), "io.modelcontextprotocol/protocolVersion") },
		status: 400, code: -32602, why: "protocolVersion missing"},
	{name: "clientInfo without version", msg: func(m map[string]any) { metaOf(m)["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "x"} },
		status: 400, code: -32602, why: "clientInfo version must be a string"},
	{name: "wrong Content-Type", header: func(h http.Header) { h.Set("Content-Type", "text/plain") },
		status: 415, code: -32600, why: "Content-Type"},
	{name: "Accept without text/event-stream", header: func(h http.Header) { h.Set("Accept", "application/json") },
		status: 406, code: -32600, why: "Accept"},
	{name: "Accept with wildcard only", header: func(h http.Header) { h.Set("Accept", "*/*") },
		status: 406, code: -32600, why: "Accept"},
	{name: "batch array", raw: []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]`),
		status: 400, code: -32600, why: "batch", nullID: true},
	{name: "null id", msg: func(m map[string]any) { m["id"] = nil },
		status: 400, code: -32600, why: "id must not be null", nullID: true},
	{name: "fractional id", msg: func(m map[string]any) { m["id"] = 1.5 },
		status: 400, code: -32600, why: "id must be a string or an integer", nullID: true},
	{name: "notification", msg: func(m map[string]any) { delete(m, "id") },
		status: 400, code: -32600, why: "notification", nullID: true},
	{name: "jsonrpc 1.0", msg: func(m map[string]any) { m["jsonrpc"] = "1.0" },
		status: 400, code: -32600, why: "jsonrpc"},
	{name: "invalid JSON", raw: []byte(`{"jsonrpc":`), status: 400, code: -32700, why: "not valid JSON", nullID: true},
	{name: "oversized body", raw: append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), 1<<20)...), `"}`...),
		status: 413, code: -32600, why: "1 MiB", nullID: true},
	{name: "GET", httpVerb: http.MethodGet, status: 405, code: -32600, why: "GET", nullID: true},
	{name: "DELETE", httpVerb: http.MethodDelete, status: 405, code: -32600, why: "DELETE", nullID: true},
	{name: "foreign Origin", header: func(h http.Header) { h.Set("Origin", "http://evil.example") },
		status: 403, code: -32600, why: "Origin"},
}

func TestModernViolations(t *testing.T) {
	s := startServer(t, Options{Tools: []json.RawMessage{tool("echo"), tool("Hello, 世界"), tool("=?base64?abc?="), tool("=?base64?SGk=?=")}})
	c := newClient(t)
	for _, tc := range violationCases {
		t.Run(tc.name, func(t *testing.T) {
			s.Reset()
			h := callHeader("echo")
			msg := modernMsg(9, "tools/call", map[string]any{"name": "echo"})
			if tc.header != nil {
				tc.header(h)
			}
			if tc.msg != nil {
				tc.msg(msg)
			}
			var body any = msg
			if tc.raw != nil {
				body = tc.raw
			}
			verb := http.MethodPost
			if tc.httpVerb != "" {
				verb, body = tc.httpVerb, nil
			}
			r := do(t, c, verb, s.URL, h, body)
			wantStatusCode(t, r, tc.status, tc.code)
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			wantID := "9"
			if tc.nullID {
				wantID = "null"
			}
			if string(r.msg["id"]) != wantID {
				t.Fatalf("error id %s, want %s", r.msg["id"], wantID)
			}
			v := s.Violations()
			if len(v) != 1 || !strings.Contains(v[0].Violation, tc.why) || v[0].Status != tc.status {
				t.Fatalf("violations %+v, want one containing %q", v, tc.why)
			}
			if s.CheckNoViolations() == nil {
				t.Fatal("CheckNoViolations returned nil")
			}
		})
	}
}

func TestRequestLog(t *testing.T) {
	s := startServer(t, Options{})
	c := newClient(t)
	post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	post(t, c, s, modernHeader("server/discover"), []byte("garbage"))
	do(t, c, http.MethodPost, s.BaseURL()+"/other", modernHeader("x"), nil)
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Method != "server/discover" || reqs[0].Status != 200 || reqs[0].Conn != 1 ||
		reqs[0].Header.Get("Mcp-Method") != "server/discover" || !bytes.Contains(reqs[0].Body, []byte("_meta")) {
		t.Fatalf("log %+v", reqs)
	}
	if reqs[2].Path != "/other" || reqs[2].Status != 404 || reqs[2].Violation != "" {
		t.Fatalf("other path %+v", reqs[2])
	}
	if s.Count("") != 2 || s.Count("server/discover") != 1 {
		t.Fatalf("counts %d %d", s.Count(""), s.Count("server/discover"))
	}
	s.Reset()
	if len(s.Requests()) != 0 || s.Count("") != 0 {
		t.Fatal("Reset did not clear the log")
	}
}
