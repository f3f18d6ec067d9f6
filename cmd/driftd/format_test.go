package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/format"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

func TestFormatFlags(t *testing.T) {
	old, updated := writeFile(t, "old.json", oldManifest), writeFile(t, "new.json", newManifest)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"json alias", []string{"--json"}, exitFindings, `"findings": [`},
		{"json both", []string{"--json", "--format", "json"}, exitFindings, `"findings": [`},
		{"disagreeing", []string{"--json", "--format", "sarif"}, exitUsage, "--json is --format json; it cannot go with --format sarif"},
		{"unknown", []string{"--format", "html"}, exitUsage, `--format "html": want text, json, sarif, junit, markdown`},
		{"sarif", []string{"--format", "sarif"}, exitFindings, `"version": "2.1.0"`},
		{"junit", []string{"--format", "JUnit"}, exitFindings, `<testsuites name="driftd diff"`},
		{"markdown", []string{"--format", "markdown"}, exitFindings, "### ❌ driftd diff `diff`: failed"},
		{"markdown below fail-on", []string{"--format", "markdown", "--fail-on", "ERROR", "--severity", "MCP-DRIFT-SCHEMA=WARN", "--severity", "BRK-INPUT-BOUND-TIGHTENED=WARN", "--severity", "BRK-OUTPUT-PROPERTY-REMOVED=WARN"}, exitOK, "passed: no finding at or above ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := driftd(t, append(append([]string{"diff"}, tc.args...), old, updated)...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Fatalf("exit %d (want %d); want %q in output\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}

// TestOutputFile: --output writes the chosen format to the file, prints
// nothing, and keeps the exit code.
func TestOutputFile(t *testing.T) {
	old, updated := writeFile(t, "old.json", oldManifest), writeFile(t, "new.json", newManifest)
	out := filepath.Join(t.TempDir(), "driftd.junit.xml")
	code, stdout, stderr := driftd(t, "diff", old, updated, "--format", "junit", "--output", out)
	if code != exitFindings || stdout != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc format.JUnitSuites
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Failures == 0 {
		t.Fatalf("%v; failures %d in\n%s", err, doc.Failures, b)
	}
	// A report is for its readers: a new file is 0644, a replaced one
	// keeps its mode.
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o644 {
		t.Fatalf("new --output file has mode %v, want 0644", fi.Mode().Perm())
	}
	if err := os.Chmod(out, 0o640); err != nil {
		t.Fatal(err)
	}
	driftd(t, "diff", old, updated, "--format", "junit", "--output", out)
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o640 {
		t.Fatalf("replaced --output file has mode %v, want its old 0640", fi.Mode().Perm())
	}
	code, _, stderr = driftd(t, "diff", old, updated, "--output", filepath.Join(t.TempDir(), "no", "such", "dir", "x"))
	if code != exitUsage || stderr == "" {
		t.Fatalf("unwritable --output: exit %d, stderr %q", code, stderr)
	}
}

// TestCheckSARIF runs check against the strict mock: the missing tool is
// located on its line of the manifest, relative to the working directory,
// and a failed probe is an unsuccessful invocation with exit code 3.
func TestCheckSARIF(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	dir := t.TempDir()
	manifest := "{\n  \"tools\": [\n    {\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}},\n    {\"name\": \"gone\", \"inputSchema\": {\"type\": \"object\"}}\n  ]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	type log struct {
		Runs []struct {
			Invocations []struct {
				ExecutionSuccessful bool `json:"executionSuccessful"`
			} `json:"invocations"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
						Region           struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	code, stdout, stderr := driftd(t, "check", filepath.Join(dir, "tools.json"), "--base-url", srv.URL, "--format", "sarif")
	var l log
	if err := json.Unmarshal([]byte(stdout), &l); err != nil || code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, %v, stderr %q\n%s", code, err, stderr, stdout)
	}
	found := false
	for _, r := range l.Runs[0].Results {
		if r.RuleID == "MCP-DRIFT-TOOL-MISSING" {
			p := r.Locations[0].PhysicalLocation
			found = p.ArtifactLocation.URI == "tools.json" && p.Region.StartLine == 4
			if !found {
				t.Errorf("missing tool at %s:%d, want tools.json:4", p.ArtifactLocation.URI, p.Region.StartLine)
			}
		}
	}
	if !found || !l.Runs[0].Invocations[0].ExecutionSuccessful {
		t.Fatalf("no located MCP-DRIFT-TOOL-MISSING, or an unsuccessful run:\n%s", stdout)
	}
	code, stdout, _ = driftd(t, "check", "tools.json", "--base-url", "http://127.0.0.1:1/mcp", "--timeout", "2s", "--format", "sarif")
	l = log{}
	if err := json.Unmarshal([]byte(stdout), &l); err != nil || code != exitNoProbe || l.Runs[0].Invocations[0].ExecutionSuccessful {
		t.Fatalf("unreachable: exit %d, %v\n%s", code, err, stdout)
	}
}
