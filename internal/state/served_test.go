package state

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/sanitize"
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

// TestBoundedNames: a megabyte-long served name is keyed by its bounded
// form; ordinary names and the caller's slice are left alone.
func TestBoundedNames(t *testing.T) {
	long := strings.Repeat("n", 1<<20)
	served := []Tool{mkTool("a"), {Name: long, Raw: json.RawMessage(`{"name":"x"}`)}}
	got := boundedNames(served)
	if got[0].Name != "a" || len(got[1].Name) > sanitize.MaxName || served[1].Name != long {
		t.Fatalf("names %q…, %d bytes; caller's %d bytes", got[0].Name, len(got[1].Name), len(served[1].Name))
	}
	plain := []Tool{mkTool("a")}
	if out := boundedNames(plain); &out[0] != &plain[0] {
		t.Error("a set of ordinary names was copied")
	}
}
