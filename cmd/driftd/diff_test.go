package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	oldManifest = `{"tools":[
 {"name":"search","description":"Search.","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","maximum":100}},"required":["q"]},
  "outputSchema":{"type":"object","properties":{"hits":{"type":"array"},"total":{"type":"integer"}}}},
 {"name":"debug_dump","inputSchema":{"type":"object"}}]}`
	newManifest = `{"tools":[
 {"name":"search","description":"Search.","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","maximum":50}},"required":["q"]},
  "outputSchema":{"type":"object","properties":{"hits":{"type":"array"}}},"annotations":{"destructiveHint":true}},
 {"name":"debug_dump","inputSchema":{"type":"object"}},
 {"name":"debug_trace","inputSchema":{"type":"object"}}]}`
)

type diffReport struct {
	Findings     []catalogue.Finding     `json:"findings"`
	Ignored      []catalogue.Finding     `json:"ignored"`
	StaleIgnores []catalogue.StaleIgnore `json:"stale_ignores"`
}

func diffJSON(t *testing.T, args ...string) (int, diffReport, string) {
	t.Helper()
	code, stdout, stderr := driftd(t, append([]string{"diff", "--json"}, args...)...)
	var rep diffReport
	if code != exitUsage {
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("exit %d, not a report: %v\n%s%s", code, err, stdout, stderr)
		}
	}
	return code, rep, stderr
}

func TestDiffCommand(t *testing.T) {
	old, updated := writeFile(t, "old.json", oldManifest), writeFile(t, "new.yaml.json", newManifest)
	code, rep, _ := diffJSON(t, old, updated)
	if code != exitFindings {
		t.Fatalf("exit %d, want 1", code)
	}
	got := map[string]bool{}
	for _, f := range rep.Findings {
		got[f.Rule+" "+f.Grade+" "+f.Pointer] = true
	}
	for _, want := range []string{
		"MCP-DRIFT-SCHEMA BRK-INPUT-BOUND-TIGHTENED /properties/limit/maximum",
		"MCP-DRIFT-SCHEMA BRK-OUTPUT-PROPERTY-REMOVED /properties/total",
		"MCP-DRIFT-TOOL-UNDECLARED  ",
	} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, catalogue.DriftAnnotation) {
			t.Errorf("explicit default destructiveHint reported as drift: %s", k)
		}
	}
	if code, _, _ := diffJSON(t, old, old); code != exitOK {
		t.Fatalf("a manifest against itself exited %d", code)
	}
	code, out, _ := driftd(t, "diff", old, updated)
	if code != exitFindings || !strings.Contains(out, "ERROR (2)") || !strings.Contains(out, "search /properties/limit/maximum: inputSchema: maximum 100 → maximum 50 [CHG-BOUND-TIGHTENED, BRK-INPUT-BOUND-TIGHTENED]") {
		t.Fatalf("text diff exit %d:\n%s", code, out)
	}
}

func TestDiffPolicyFlags(t *testing.T) {
	old, updated := writeFile(t, "old.json", oldManifest), writeFile(t, "new.json", newManifest)
	ignore := writeFile(t, "ignore.yaml", `
ignore:
  - rule: MCP-DRIFT-TOOL-UNDECLARED
    tool: "debug_*"
    reason: debug tools are intentionally undeclared
  - tool: never_matches
    reason: stale on purpose
severity:
  BRK-OUTPUT-PROPERTY-REMOVED: WARN
`)
	code, rep, _ := diffJSON(t, old, updated, "--ignore-file", ignore, "--severity", "BRK-INPUT-BOUND-TIGHTENED=OFF")
	if code != exitOK {
		t.Fatalf("exit %d with every ERROR downgraded or off; findings %+v", code, rep.Findings)
	}
	if len(rep.Ignored) != 1 || rep.Ignored[0].Tool != "debug_trace" || rep.Ignored[0].IgnoreReason == "" {
		t.Fatalf("ignored = %+v", rep.Ignored)
	}
	if len(rep.StaleIgnores) != 1 || rep.StaleIgnores[0].Why != "matched no finding" {
		t.Fatalf("stale = %+v", rep.StaleIgnores)
	}
	if code, _, _ := diffJSON(t, old, updated, "--ignore-file", ignore, "--fail-on", "WARN"); code != exitFindings {
		t.Fatalf("--fail-on WARN: exit %d", code)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ignore-file", writeFile(t, "bad.yaml", "ignore:\n  - rule: MCP-DRIFT-TOOL-MISSING\n")}, "bad.yaml:2: ignore[0].reason: required: say why the finding is acceptable\n"},
		{[]string{"--ignore-file", writeFile(t, "typo.yaml", "ignores: []\n")}, "typo.yaml:1: ignores: unknown field; did you mean ignore?\n"},
		{[]string{"--ignore-file", "/nonexistent.yaml"}, "--ignore-file: open /nonexistent.yaml: no such file"},
		{[]string{"--severity", "MCP-NOPE=ERROR"}, `--severity MCP-NOPE=ERROR: "MCP-NOPE" is not a rule`},
		{[]string{"--severity", "MCP-DRIFT-TITEL=OFF"}, `--severity MCP-DRIFT-TITEL=OFF: "MCP-DRIFT-TITEL" is not a rule or BRK-* grade id (see driftd rules); did you mean MCP-DRIFT-TITLE?` + "\n"},
		// Every problem in one pass: the file's, then the flags'.
		{[]string{"--ignore-file", writeFile(t, "typo2.yaml", "ignores: []\n"), "--severity", "MCP-DRIFT-TITLE=LOUD"}, "typo2.yaml:1: ignores: unknown field; did you mean ignore?\n" +
			`--severity MCP-DRIFT-TITLE=LOUD: "LOUD" is not ERROR, WARN, INFO or OFF` + "\n"},
		{[]string{"--severity", "novalue"}, "want RULE=LEVEL"},
	} {
		code, _, stderr := diffJSON(t, append([]string{old, updated}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestCheckWithIgnoreFile(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "debug_x")})
	defer srv.Close()
	ignore := writeFile(t, "ignore.yaml", "ignore:\n  - {rule: MCP-DRIFT-TOOL-UNDECLARED, tool: debug_*, reason: debug}\n")
	code, stdout, stderr := driftd(t, "check", writeManifest(t, "a"), "--base-url", srv.URL, "--ignore-file", ignore, "--fail-on", "WARN")
	if code != exitOK || !strings.Contains(stdout, "ignored (1)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
}
