package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestParamHeadersValid(t *testing.T) {
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"dry":{"type":["boolean","null"],"x-mcp-header":"Dry-Run"},
		"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},
		"q":{"type":"string"}}}`
	hs, problems := ParamHeaders(json.RawMessage(schema))
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	var got []string
	for _, h := range hs {
		got = append(got, h.Name+"="+strings.Join(h.Path, "."))
	}
	slices.Sort(got)
	if want := []string{"Dry-Run=dry", "N=n", "Region=region", "Tenant=opts.tenant"}; !slices.Equal(got, want) {
		t.Fatalf("headers %v, want %v", got, want)
	}
}

// TestParamHeadersInvalid: each rule of the spec's x-mcp-header
// constraints is named.
func TestParamHeadersInvalid(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"properties":{"a":{"type":"string","x-mcp-header":""}}}`, "/properties/a/x-mcp-header: the header name is empty"},
		{`{"properties":{"a":{"type":"string","x-mcp-header":"Has Space"}}}`, "not an RFC 9110 token"},
		{`{"properties":{"a":{"type":"string","x-mcp-header":"Bad\r\nX-Injected: 1"}}}`, "not an RFC 9110 token"},
		{`{"properties":{"a":{"type":"string","x-mcp-header":"Zone:"}}}`, "not an RFC 9110 token"},
		{`{"properties":{"a":{"type":"string","x-mcp-header":7}}}`, "not a string"},
		{`{"properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`, "repeats the one at /properties/a/x-mcp-header"},
		{`{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, `"number"`},
		{`{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, "not a primitive"},
		{`{"properties":{"a":{"type":"array","items":{"type":"string"},"x-mcp-header":"A"}}}`, "not a primitive"},
		{`{"properties":{"a":{"x-mcp-header":"A"}}}`, "declares no type"},
		{`{"properties":{"a":{"type":["string","integer"],"x-mcp-header":"A"}}}`, "not a primitive"},
		{`{"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "/properties/a/items/x-mcp-header: the property is reached through items"},
		{`{"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`, "reached through anyOf"},
		{`{"properties":{"a":{"$ref":"#/$defs/r"}},"$defs":{"r":{"type":"string","x-mcp-header":"A"}}}`, "reached through $defs (a $ref target)"},
		{`{"properties":{"a":{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"A"}}}}`, "reached through additionalProperties"},
		{`{"if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, "reached through if"},
		{`{"type":"object","x-mcp-header":"Root"}`, "on the schema root"},
	} {
		_, problems := ParamHeaders(json.RawMessage(tc.schema))
		if len(problems) == 0 || !strings.Contains(problems[0].String(), tc.want) {
			t.Errorf("%s: problems %v, want one containing %q", tc.schema, problems, tc.want)
		}
	}
	// Data that merely mentions the keyword is no annotation.
	if hs, problems := ParamHeaders(json.RawMessage(`{"properties":{"a":{"type":"string","default":"x-mcp-header","examples":[{"x-mcp-header":"X"}]}}}`)); len(hs)+len(problems) != 0 {
		t.Errorf("headers %v, problems %v", hs, problems)
	}
}

// TestParamHeadersOnTheWire: Mcp-Param-{Name} is built in the envelope,
// with Mcp-Name's encoding and the spec's conversions, and omitted for an
// absent or null argument; legacy requests carry none.
func TestParamHeadersOnTheWire(t *testing.T) {
	s, c := newWire(t, map[string]func(http.ResponseWriter, map[string]any){"tools/call": result(`{"content":[]}`)})
	hs, _ := ParamHeaders(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"greeting":{"type":"string","x-mcp-header":"Greeting"},
		"sentinel":{"type":"string","x-mcp-header":"Sentinel"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"dry":{"type":"boolean","x-mcp-header":"Dry"},
		"gone":{"type":"string","x-mcp-header":"Gone"},
		"nil":{"type":["string","null"],"x-mcp-header":"Nil"},
		"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}}}}`))
	args := json.RawMessage(`{"region":"us-west1","greeting":"Hello, 世界","sentinel":"=?base64?x?=","n":42,"dry":false,"nil":null,"opts":{"tenant":" padded "}}`)
	sess := &Session{c: c, Era: EraModern, Version: ModernVersion}
	if _, _, err := sess.CallTool(context.Background(), "t", args, hs); err != nil {
		t.Fatal(err)
	}
	h := s.seen[0].header
	for name, want := range map[string]string{
		"Mcp-Param-Region":   "us-west1",
		"Mcp-Param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?=",
		"Mcp-Param-Sentinel": "=?base64?PT9iYXNlNjQ/eD89?=",
		"Mcp-Param-N":        "42",
		"Mcp-Param-Dry":      "false",
		"Mcp-Param-Tenant":   "=?base64?IHBhZGRlZCA=?=",
	} {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"Mcp-Param-Gone", "Mcp-Param-Nil"} {
		if _, ok := h[name]; ok {
			t.Errorf("%s sent for an absent or null argument", name)
		}
	}
	legacy := &Session{c: c, Era: EraLegacy, Version: "2025-11-25"}
	if _, _, err := legacy.CallTool(context.Background(), "t", args, hs); err != nil {
		t.Fatal(err)
	}
	for k := range s.seen[1].header {
		if strings.HasPrefix(k, HeaderParamPrefix) {
			t.Errorf("legacy request carries %s", k)
		}
	}
}
