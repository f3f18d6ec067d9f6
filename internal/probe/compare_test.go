package probe

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
)

// TestCompareSetsRemembersOnlyWhatWasServed: a manifest remembers the
// drifted tools' findings between runs (manifest.Compared), and a run
// served another definition, or the declared one again, gets that
// definition's findings — the same as a manifest that remembers nothing —
// never the previous run's.
func TestCompareSetsRemembersOnlyWhatWasServed(t *testing.T) {
	declared, err := manifest.Parse([]byte(`{"tools":[
		{"name":"a","description":"adds","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}},
		{"name":"b","description":"keeps","inputSchema":{"type":"object"}}]}`), ".json")
	if err != nil {
		t.Fatal(err)
	}
	served := func(a string) []mcp.Tool {
		var out []mcp.Tool
		for _, raw := range []string{a, `{"name":"b","description":"keeps","inputSchema":{"type":"object"}}`} {
			tl, err := mcp.ParseTool(json.RawMessage(raw))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tl)
		}
		return out
	}
	collect := func(m *manifest.Manifest, s []mcp.Tool) []catalogue.Finding {
		var fs []catalogue.Finding
		for f := range compareSets(m, s, false, "manifest") {
			fs = append(fs, f)
		}
		return fs
	}
	retyped := served(`{"name":"a","description":"adds","inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}`)
	reworded := served(`{"name":"a","description":"adds numbers","inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}`)
	asDeclared := served(`{"name":"a","description":"adds","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`)
	for n, s := range [][]mcp.Tool{retyped, retyped, reworded, retyped, asDeclared, retyped, asDeclared} {
		got := collect(declared, s)
		want := collect(&manifest.Manifest{Path: declared.Path, Tools: declared.Tools}, s)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: the remembering manifest found\n%v\nwant (nothing remembered)\n%v", n, got, want)
		}
		if drifted := len(want) > 0; drifted != (n != 4 && n != 6) {
			t.Fatalf("run %d: findings %v", n, want)
		}
	}
}
