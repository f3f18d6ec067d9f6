package mcptest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestModernDiscover(t *testing.T) {
	s := startServer(t, Options{})
	c := newClient(t)
	r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d type %q body %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if string(r.msg["id"]) != "1" || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("id %s session %q", r.msg["id"], r.header.Get("Mcp-Session-Id"))
	}
	var res struct {
		SupportedVersions []string                     `json:"supportedVersions"`
		Capabilities      map[string]map[string]bool   `json:"capabilities"`
		ResultType        string                       `json:"resultType"`
		TTLMs             *int                         `json:"ttlMs"`
		CacheScope        string                       `json:"cacheScope"`
		Meta              map[string]map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal(r.msg["result"], &res); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.SupportedVersions, []string{"2026-07-28", "2025-11-25"}) ||
		res.Capabilities["tools"]["listChanged"] || res.ResultType != "complete" ||
		res.TTLMs == nil || *res.TTLMs != 0 || res.CacheScope != "public" {
		t.Fatalf("discover result %s", r.msg["result"])
	}
	if si := res.Meta["io.modelcontextprotocol/serverInfo"]; si["name"] != "mcptest" || si["version"] != "0.0.0" {
		t.Fatalf("serverInfo %v", si)
	}
	wantNoViolations(t, s.Handler)
	if s.Count("server/discover") != 1 {
		t.Fatalf("count %d", s.Count("server/discover"))
	}
}

func TestModernToolsList(t *testing.T) {
	s := startServer(t, Options{Tools: []json.RawMessage{tool("a"), tool("b")}})
	c := newClient(t)
	r := post(t, c, s, modernHeader("tools/list"), modernMsg("x", "tools/list", nil))
	res := r.result(t)
	var tools []map[string]any
	_ = json.Unmarshal(res["tools"], &tools)
	if r.status != 200 || len(tools) != 2 || tools[0]["name"] != "a" || tools[1]["name"] != "b" {
		t.Fatalf("tools %s", r.body)
	}
	if _, ok := res["nextCursor"]; ok || string(res["resultType"]) != `"complete"` || string(res["ttlMs"]) != "0" {
		t.Fatalf("result %s", r.body)
	}
	if string(r.msg["id"]) != `"x"` {
		t.Fatalf("id %s", r.msg["id"])
	}
	// Drift mid-test.
	s.SetTools([]json.RawMessage{tool("c")})
	r = post(t, c, s, modernHeader("tools/list"), modernMsg(2, "tools/list", nil))
	if !strings.Contains(string(r.msg["result"]), `"c"`) || strings.Contains(string(r.msg["result"]), `"a"`) {
		t.Fatalf("after SetTools: %s", r.body)
	}
	wantNoViolations(t, s.Handler)
}

func callHeader(name string) http.Header {
	h := modernHeader("tools/call")
	h.Set("Mcp-Name", name)
	return h
}

func TestModernToolsCall(t *testing.T) {
	s := startServer(t, Options{Tools: []json.RawMessage{tool("echo"), tool("Hello, 世界")}})
	c := newClient(t)
	r := post(t, c, s, callHeader("echo"), modernMsg(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}))
	res := r.result(t)
	if r.status != 200 || string(res["content"]) != "[]" || string(res["resultType"]) != `"complete"` {
		t.Fatalf("call: %s", r.body)
	}
	if _, ok := res["ttlMs"]; ok {
		t.Fatalf("tools/call result is not cacheable: %s", r.body)
	}

	// The spec's encoding example is accepted.
	r = post(t, c, s, callHeader("=?base64?SGVsbG8sIOS4lueVjA==?="), modernMsg(2, "tools/call", map[string]any{"name": "Hello, 世界"}))
	if r.status != 200 || r.msg["result"] == nil {
		t.Fatalf("encoded name: %d %s", r.status, r.body)
	}

	// Unknown tool is a protocol error, not a client violation.
	r = post(t, c, s, callHeader("nope"), modernMsg(3, "tools/call", map[string]any{"name": "nope"}))
	wantStatusCode(t, r, 400, -32602)
	wantNoViolations(t, s.Handler)

	s.SetOptions(func(o *Options) {
		o.CallTool = func(name string, args json.RawMessage) (json.RawMessage, *RPCError) {
			if name == "fail" {
				return nil, &RPCError{Code: -32603, Message: "internal"}
			}
			return json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"big":12345678901234567890}`), nil
		}
	})
	r = post(t, c, s, callHeader("any"), modernMsg(4, "tools/call", map[string]any{"name": "any"}))
	if res := r.result(t); !strings.Contains(string(res["content"]), "hi") || string(res["big"]) != "12345678901234567890" || res["_meta"] == nil {
		t.Fatalf("CallTool result: %s", r.body)
	}
	r = post(t, c, s, callHeader("fail"), modernMsg(5, "tools/call", map[string]any{"name": "fail"}))
	wantStatusCode(t, r, 500, -32603)
	wantNoViolations(t, s.Handler)
}

func TestModernUnknownMethod(t *testing.T) {
	s := startServer(t, Options{})
	c := newClient(t)
	for _, m := range []string{"ping", "initialize", "resources/list"} {
		r := post(t, c, s, modernHeader(m), modernMsg(1, m, nil))
		wantStatusCode(t, r, 404, -32601)
	}
	wantNoViolations(t, s.Handler)
}

func TestModernUnsupportedVersion(t *testing.T) {
	s := startServer(t, Options{})
	c := newClient(t)
	msg := modernMsg(7, "server/discover", nil)
	msg["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/protocolVersion"] = "1900-01-01"
	h := modernHeader("server/discover")
	h.Set("MCP-Protocol-Version", "1900-01-01")
	r := post(t, c, s, h, msg)
	wantStatusCode(t, r, 400, -32022)
	if !strings.Contains(string(r.body), `"data":{"requested":"1900-01-01","supported":["2026-07-28","2025-11-25"]}`) {
		t.Fatalf("data: %s", r.body)
	}

	// A server not listing 2026-07-28 refuses even server/discover.
	s.SetOptions(func(o *Options) { o.SupportedVersions = []string{"2025-11-25"} })
	r = post(t, c, s, modernHeader("server/discover"), modernMsg(8, "server/discover", nil))
	wantStatusCode(t, r, 400, -32022)
	if !strings.Contains(string(r.body), `"supported":["2025-11-25"]`) {
		t.Fatalf("data: %s", r.body)
	}
	wantNoViolations(t, s.Handler)
}

func TestRejectFirstModern(t *testing.T) {
	s := startServer(t, Options{RejectFirstModern: true})
	c := newClient(t)
	r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	wantStatusCode(t, r, 400, -32022)
	if !strings.Contains(string(r.body), `"requested":"2026-07-28"`) {
		t.Fatalf("data: %s", r.body)
	}
	r = post(t, c, s, modernHeader("server/discover"), modernMsg(2, "server/discover", nil))
	if r.status != 200 {
		t.Fatalf("retry: %d %s", r.status, r.body)
	}
	wantNoViolations(t, s.Handler)
}

func TestAuth(t *testing.T) {
	s := startServer(t, Options{BearerToken: "sekret", Challenge: `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`})
	c := newClient(t)
	r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil))
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "resource_metadata") {
		t.Fatalf("no token: %d %v", r.status, r.header)
	}
	h := modernHeader("server/discover")
	h.Set("Authorization", "Bearer sekret")
	if r = post(t, c, s, h, modernMsg(2, "server/discover", nil)); r.status != 200 {
		t.Fatalf("with token: %d %s", r.status, r.body)
	}
	s.SetOptions(func(o *Options) { o.AuthStatus, o.Challenge = 403, "" })
	h.Set("Authorization", "Bearer wrong")
	r = post(t, c, s, h, modernMsg(3, "server/discover", nil))
	if r.status != 403 || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("wrong token: %d %v", r.status, r.header)
	}
	wantNoViolations(t, s.Handler)
}

func TestModernResultKnobs(t *testing.T) {
	ttl := -1
	s := startServer(t, Options{ResultType: "bogus", TTLMs: &ttl, CacheScope: "none", ServerName: "n", ServerVersion: "v"})
	c := newClient(t)
	res := post(t, c, s, modernHeader("tools/list"), modernMsg(1, "tools/list", nil)).result(t)
	if string(res["resultType"]) != `"bogus"` || string(res["ttlMs"]) != "-1" || string(res["cacheScope"]) != `"none"` ||
		!strings.Contains(string(res["_meta"]), `{"name":"n","version":"v"}`) {
		t.Fatalf("knobs: %v", res)
	}
	s.SetOptions(func(o *Options) { o.OmitCacheHints, o.OmitResultType, o.OmitServerInfo = true, true, true })
	res = post(t, c, s, modernHeader("server/discover"), modernMsg(2, "server/discover", nil)).result(t)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := res[k]; ok {
			t.Fatalf("%s not omitted: %v", k, res)
		}
	}
}

func TestModernServesLegacyTraffic(t *testing.T) {
	s := startServer(t, Options{Tools: []json.RawMessage{tool("a")}})
	c := newClient(t)
	r := post(t, c, s, legacyHeader(""), legacyMsg(1, "initialize", initParams("2025-11-25")))
	if r.status != 200 || !strings.Contains(string(r.msg["result"]), `"protocolVersion":"2025-11-25"`) || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize: %d %v %s", r.status, r.header, r.body)
	}
	if r = post(t, c, s, legacyHeader("2025-11-25"), legacyMsg(nil, "notifications/initialized", nil)); r.status != 202 {
		t.Fatalf("initialized: %d", r.status)
	}
	r = post(t, c, s, legacyHeader("2025-11-25"), legacyMsg(2, "tools/list", nil))
	if res := r.result(t); res["resultType"] != nil || res["tools"] == nil {
		t.Fatalf("legacy tools/list: %s", r.body)
	}
	r = post(t, c, s, legacyHeader("2025-06-18"), legacyMsg(3, "tools/list", nil))
	wantStatusCode(t, r, 400, -32022)
	wantNoViolations(t, s.Handler)

	// A modern-only server has no initialize and says what it speaks.
	s.SetOptions(func(o *Options) { o.SupportedVersions = []string{"2026-07-28"} })
	r = post(t, c, s, legacyHeader(""), legacyMsg(4, "initialize", initParams("2025-11-25")))
	wantStatusCode(t, r, 404, -32601)
	if !strings.Contains(string(r.body), `"supported":["2026-07-28"]`) {
		t.Fatalf("initialize on modern-only: %s", r.body)
	}
}

func TestParamHeaders(t *testing.T) {
	tl := json.RawMessage(`{"name":"q","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}}`)
	s := startServer(t, Options{Tools: []json.RawMessage{tl}})
	c := newClient(t)
	args := map[string]any{"region": "eu west", "n": 42, "opts": map[string]any{"dry": true}}
	h := callHeader("q")
	h.Set("Mcp-Param-Region", "eu west")
	h.Set("Mcp-Param-N", "42")
	h.Set("Mcp-Param-Dry", "true")
	if r := post(t, c, s, h, modernMsg(1, "tools/call", map[string]any{"name": "q", "arguments": args})); r.status != 200 {
		t.Fatalf("good headers: %d %s", r.status, r.body)
	}
	wantNoViolations(t, s.Handler)

	for _, tc := range []struct{ header, value, why string }{
		{"Mcp-Param-Region", "", "Mcp-Param-Region missing"},
		{"Mcp-Param-N", "41", "does not match"},
		{"Mcp-Param-Dry", "=?base64?dHJ1ZQ==?=", ""}, // encoded "true" is fine
	} {
		h2 := h.Clone()
		if tc.value == "" {
			h2.Del(tc.header)
		} else {
			h2.Set(tc.header, tc.value)
		}
		s.Reset()
		r := post(t, c, s, h2, modernMsg(2, "tools/call", map[string]any{"name": "q", "arguments": args}))
		v := s.Violations()
		if tc.why == "" {
			if r.status != 200 || len(v) != 0 {
				t.Fatalf("%s=%s: %d %s", tc.header, tc.value, r.status, r.body)
			}
			continue
		}
		wantStatusCode(t, r, 400, -32020)
		if len(v) != 1 || !strings.Contains(v[0].Violation, tc.why) {
			t.Fatalf("%s: violations %+v", tc.header, v)
		}
	}
}
