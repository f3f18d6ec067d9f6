package format

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

var update = flag.Bool("update", false, "rewrite golden files")

// scenario is driftd diff testdata/old.json testdata/new.yaml with an
// ignore that matches and one that is stale: every severity, an ignored
// finding and a stale ignore, located in a JSON and a YAML file.
func scenario(t *testing.T) *Run {
	t.Helper()
	read := func(name string) (File, *manifest.Manifest) {
		path := filepath.Join("testdata", name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := manifest.FromBytes(path, b)
		if err != nil {
			t.Fatal(err)
		}
		return File{Path: path, Bytes: b}, m
	}
	oldFile, old := read("old.json")
	newFile, updated := read("new.yaml")
	policy, err := catalogue.NewPolicy(nil, []catalogue.Ignore{
		{Rule: catalogue.DriftToolUndeclared, Tool: "debug_*", Reason: "debug tools are served on purpose"},
		{Rule: catalogue.DriftToolMissing, Tool: "refund_order", Reason: "refunds were retired"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := probe.Diff("orders", old, updated, probe.Options{Version: "1.2.3", Policy: policy})
	rep.StartedAt, rep.DurationSeconds = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), 0.042
	for _, sev := range catalogue.Severities {
		if rep.Summary.Of(sev) == 0 {
			t.Fatalf("the scenario has no %s finding", sev)
		}
	}
	if len(rep.Ignored) != 1 || len(rep.StaleIgnores) != 1 {
		t.Fatalf("the scenario has %d ignored and %d stale ignores, want 1 and 1", len(rep.Ignored), len(rep.StaleIgnores))
	}
	wd, _ := os.Getwd()
	return &Run{
		Report: rep, Command: "diff", Declared: DeclaredOf(old), Files: []File{newFile, oldFile},
		FailOn: catalogue.Error, Version: "1.2.3", WorkDir: wd,
	}
}

// failedRun is a check whose probe failed: nothing compared.
func failedRun() *Run {
	rep := &probe.Report{
		Target: "orders", BaseURL: "http://127.0.0.1:1/mcp", Success: false,
		FailureReason: mcp.ReasonConnect, FailureMessage: "server/discover: connection refused",
		StartedAt: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), DurationSeconds: 0.001,
		Findings: []catalogue.Finding{}, Ignored: []catalogue.Finding{}, StaleIgnores: []catalogue.StaleIgnore{},
	}
	return &Run{
		Report: rep, Command: "check", Declared: Declared{mcp.KindTool: {"search_orders", "get_order"}},
		Files: []File{{Path: "testdata/old.json"}}, FailOn: catalogue.Error, Version: "1.2.3",
	}
}

var renderers = map[string]func(*bytes.Buffer, *Run) error{
	"sarif":     func(b *bytes.Buffer, r *Run) error { return SARIF(b, r) },
	"junit.xml": func(b *bytes.Buffer, r *Run) error { return JUnit(b, r) },
	"md":        func(b *bytes.Buffer, r *Run) error { return Markdown(b, r) },
}

func render(t *testing.T, ext string, run *Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := renderers[ext](&b, run); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden pins each format's output for the scenario and for a failed
// probe; go test ./internal/format -update rewrites the files.
func TestGolden(t *testing.T) {
	runs := map[string]func() *Run{"diff": func() *Run { return scenario(t) }, "failed": failedRun}
	for name, mk := range runs {
		for ext := range renderers {
			t.Run(name+"."+ext, func(t *testing.T) {
				got := render(t, ext, mk())
				path := filepath.Join("testdata", "golden", name+"."+ext)
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/format -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the output (go test ./internal/format -update):\n%s", path, got)
				}
			})
		}
	}
}
