package probe

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
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
		return parseTools(t, json.RawMessage(a), json.RawMessage(`{"name":"b","description":"keeps","inputSchema":{"type":"object"}}`))
	}
	collect := func(m *manifest.Manifest, s []mcp.Tool) []catalogue.Finding {
		var fs []catalogue.Finding
		for f := range compareSets(nil, m, s, false, "manifest") {
			fs = append(fs, f)
		}
		return fs
	}
	retyped := served(`{"name":"a","description":"adds","inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}`)
	reworded := served(`{"name":"a","description":"adds numbers","inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}`)
	asDeclared := served(`{"name":"a","description":"adds","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`)
	// Each definition is served three runs in a row: a drifted tool's
	// findings are kept at the second and read back at the third.
	var runs [][]mcp.Tool
	for _, s := range [][]mcp.Tool{retyped, reworded, retyped, asDeclared, retyped, asDeclared} {
		runs = append(runs, s, s, s)
	}
	for n, s := range runs {
		got := collect(declared, s)
		want := collect(&manifest.Manifest{Path: declared.Path, Tools: declared.Tools}, s)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: the remembering manifest found\n%v\nwant (nothing remembered)\n%v", n, got, want)
		}
		if drifted := len(want) > 0; drifted != (&s[0] != &asDeclared[0]) {
			t.Fatalf("run %d: findings %v", n, want)
		}
	}
}

// TestRememberedFindingsOutliveTheBodies: the findings a manifest keeps
// (manifest.Compared) are read by later runs, after the daemon has taken
// back and zeroed the response buffers of the run that made them
// (mcp.Bodies): they must hold copies, never the served bytes.
func TestRememberedFindingsOutliveTheBodies(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: benchgen.Tools(5, true)})
	defer srv.Close()
	declared := benchManifest(t, 5)
	messages := func(m *manifest.Manifest) []string {
		bodies := &mcp.Bodies{}
		defer bodies.Release()
		rep := Run(context.Background(), Prepare(config.NewTarget("t", srv.URL), m), Options{Version: "test", Bodies: bodies})
		if !rep.Success {
			t.Fatal(rep.FailureMessage)
		}
		var out []string
		for _, f := range rep.Findings {
			out = append(out, f.Rule+" "+f.Tool+" "+f.Pointer+" "+f.Message)
		}
		return out
	}
	want := messages(&manifest.Manifest{Path: declared.Path, Tools: declared.Tools})
	if len(want) < 5 {
		t.Fatalf("the drifted tools gave %d findings: %q", len(want), want)
	}
	for run := range 4 { // kept at the second, read back at the third and fourth
		if got := messages(declared); !slices.Equal(got, want) {
			t.Fatalf("run %d: %q\nwant %q", run, got, want)
		}
	}
}
