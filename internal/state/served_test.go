package state

import (
	"encoding/json"
	"testing"
)

// TestDecodeDef: definitions decode as the probe parses them; only a usable
// name over valid JSON can be compared.
func TestDecodeDef(t *testing.T) {
	cases := []struct {
		raw  string
		ok   bool
		name string
		desc string
	}{
		{`{"name":"a","description":"d","inputSchema":{"type":"object"}}`, true, "a", "d"},
		{`{"name":"a","description":5}`, true, "a", ""}, // a wrongly typed field is left empty
		{`{"name":5}`, false, "", ""},
		{`{"title":"no name"}`, false, "", ""},
		{`[1]`, false, "", ""},
		{`{"name":"a"`, false, "", ""},
		{``, false, "", ""},
	}
	for _, c := range cases {
		d, ok := decodeDef(json.RawMessage(c.raw))
		if ok != c.ok || (ok && (d.Name != c.name || d.Description != c.desc)) {
			t.Errorf("decodeDef(%s) = %+v, %v; want name %q desc %q, %v", c.raw, d, ok, c.name, c.desc, c.ok)
		}
	}
}
