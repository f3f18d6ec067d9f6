package mcptest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func nameHeader(method, name string) http.Header {
	h := modernHeader(method)
	h.Set("Mcp-Name", name)
	return h
}

func TestModernGetAndRead(t *testing.T) {
	s := startServer(t, Options{
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"summarise"}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"orders://größe","name":"g"}`)},
	})
	c := newClient(t)
	r := post(t, c, s, nameHeader("prompts/get", "summarise"), modernMsg(1, "prompts/get", map[string]any{"name": "summarise", "arguments": map[string]any{"a": "b"}}))
	res := r.result(t)
	if r.status != 200 || !strings.Contains(string(res["messages"]), `"user"`) || string(res["resultType"]) != `"complete"` {
		t.Fatalf("get: %s", r.body)
	}
	if _, ok := res["ttlMs"]; ok {
		t.Fatalf("a prompts/get result is not cacheable: %s", r.body)
	}
	// The uri travels encoded; the mock decodes before comparing.
	r = post(t, c, s, nameHeader("resources/read", "=?base64?b3JkZXJzOi8vZ3LDtsOfZQ==?="), modernMsg(2, "resources/read", map[string]any{"uri": "orders://größe"}))
	res = r.result(t)
	if r.status != 200 || !strings.Contains(string(res["contents"]), `"text"`) || string(res["cacheScope"]) != `"public"` {
		t.Fatalf("read: %d %s", r.status, r.body)
	}
	// Unknown names are protocol errors, not client violations.
	r = post(t, c, s, nameHeader("prompts/get", "nope"), modernMsg(3, "prompts/get", map[string]any{"name": "nope"}))
	wantStatusCode(t, r, 400, -32602)
	r = post(t, c, s, nameHeader("resources/read", "x://y"), modernMsg(4, "resources/read", map[string]any{"uri": "x://y"}))
	wantStatusCode(t, r, 400, -32602)
	wantNoViolations(t, s.Handler)
}

func TestModernGetAndReadViolations(t *testing.T) {
	s := startServer(t, Options{Prompts: []json.RawMessage{json.RawMessage(`{"name":"p"}`)}, Resources: []json.RawMessage{json.RawMessage(`{"uri":"a://b","name":"b"}`)}})
	c := newClient(t)
	for _, tc := range []struct {
		h      http.Header
		msg    map[string]any
		status int
		code   int
	}{
		{modernHeader("prompts/get"), modernMsg(1, "prompts/get", map[string]any{"name": "p"}), 400, -32020},
		{nameHeader("prompts/get", "q"), modernMsg(2, "prompts/get", map[string]any{"name": "p"}), 400, -32020},
		{nameHeader("resources/read", "a://c"), modernMsg(3, "resources/read", map[string]any{"uri": "a://b"}), 400, -32020},
		{nameHeader("prompts/get", "p"), modernMsg(4, "prompts/get", map[string]any{"name": "p", "arguments": map[string]any{"n": 1}}), 400, -32602},
	} {
		r := post(t, c, s, tc.h, tc.msg)
		wantStatusCode(t, r, tc.status, tc.code)
	}
	if n := len(s.Violations()); n != 4 {
		t.Fatalf("%d violations, want 4", n)
	}
}

func TestGetAndReadKnobs(t *testing.T) {
	s := startServer(t, Options{
		Prompts: []json.RawMessage{json.RawMessage(`{"name":"p"}`)},
		GetPrompt: func(string, json.RawMessage) (json.RawMessage, *RPCError) {
			return json.RawMessage(`{"messages":"not an array"}`), nil
		},
		ReadResource: func(string) (json.RawMessage, *RPCError) { return nil, &RPCError{Code: -32602, Message: "gone"} },
	})
	c := newClient(t)
	r := post(t, c, s, nameHeader("prompts/get", "p"), modernMsg(1, "prompts/get", map[string]any{"name": "p"}))
	if res := r.result(t); string(res["messages"]) != `"not an array"` {
		t.Fatalf("knob: %s", r.body)
	}
	r = post(t, c, s, nameHeader("resources/read", "a://b"), modernMsg(2, "resources/read", map[string]any{"uri": "a://b"}))
	wantStatusCode(t, r, 400, -32602)
}
