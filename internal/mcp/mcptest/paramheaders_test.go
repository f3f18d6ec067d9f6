package mcptest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParamHeaderChecks: the mock mirrors the spec's Mcp-Param-* rules on
// tools/call: a present argument needs its header, decoded equal to it; an
// absent or null one must have none.
func TestParamHeaderChecks(t *testing.T) {
	def := json.RawMessage(`{"name":"route","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}}`)
	for _, tc := range []struct {
		name    string
		args    map[string]any
		headers map[string]string
		why     string // "" for accepted
	}{
		{"all sent", map[string]any{"region": "Hello, 世界", "n": 42, "opts": map[string]any{"dry": true}},
			map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-N": "42", "Mcp-Param-Dry": "true"}, ""},
		{"absent and null omitted", map[string]any{"region": nil}, nil, ""},
		{"missing", map[string]any{"region": "eu"}, nil, "Mcp-Param-Region missing"},
		{"mismatch", map[string]any{"n": 42}, map[string]string{"Mcp-Param-N": "41"}, "does not match"},
		{"sent for absent", map[string]any{}, map[string]string{"Mcp-Param-Region": "eu"}, "absent or null"},
		{"raw non-ASCII", map[string]any{"region": "é"}, map[string]string{"Mcp-Param-Region": "é"}, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, Options{Tools: []json.RawMessage{def}})
			c := newClient(t)
			h := callHeader("route")
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			r := post(t, c, s, h, modernMsg(1, "tools/call", map[string]any{"name": "route", "arguments": tc.args}))
			if tc.why == "" {
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				wantNoViolations(t, s.Handler)
				return
			}
			wantStatusCode(t, r, 400, -32020)
			if err := s.CheckNoViolations(); err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("violation %v, want %q", err, tc.why)
			}
		})
	}
}
