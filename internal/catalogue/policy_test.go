package catalogue

import (
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/schema"
)

func policyFindings() []Finding {
	fs := []Finding{
		{Rule: DriftToolUndeclared, Severity: Warn, Tool: "debug_dump"},
		{Rule: DriftToolUndeclared, Severity: Warn, Tool: "orders"},
		{Rule: DriftSchema, Severity: Error, Tool: "search", Pointer: "/properties/limit", Change: schema.ChgBoundTightened, Grade: BrkInputBoundTightened, Direction: "input"},
		{Rule: DriftSchema, Severity: Warn, Tool: "search", Pointer: "/anyOf", Change: schema.ChgCompositionChanged, Grade: BrkUnprovable, Direction: "input"},
		{Rule: ConfServerInfo, Severity: Info},
	}
	for i := range fs {
		fs[i].Fingerprint = Fingerprint("t", fs[i])
	}
	return fs
}

func rules(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+"/"+f.Tool+"/"+string(f.Severity))
	}
	return strings.Join(out, " ")
}

func TestPolicySeverityOverrides(t *testing.T) {
	p, err := NewPolicy(map[string]string{
		DriftToolUndeclared: "error",
		BrkUnprovable:       "ERROR",
		ConfServerInfo:      "OFF",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, _ := p.Apply(policyFindings(), time.Now())
	want := "MCP-DRIFT-TOOL-UNDECLARED/debug_dump/ERROR MCP-DRIFT-TOOL-UNDECLARED/orders/ERROR MCP-DRIFT-SCHEMA/search/ERROR MCP-DRIFT-SCHEMA/search/ERROR"
	if got := rules(kept); got != want {
		t.Fatalf("kept = %s\nwant   %s", got, want)
	}
	// A grade override beats the rule's.
	p, _ = NewPolicy(map[string]string{DriftSchema: "INFO", BrkInputBoundTightened: "WARN"}, nil)
	kept, _, _ = p.Apply(policyFindings()[2:4], time.Now())
	if got := rules(kept); got != "MCP-DRIFT-SCHEMA/search/WARN MCP-DRIFT-SCHEMA/search/INFO" {
		t.Fatalf("kept = %s", got)
	}
}

func TestPolicyIgnores(t *testing.T) {
	fs := policyFindings()
	now := time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		ig      Ignore
		ignored string
		stale   string
	}{
		{"rule and tool glob", Ignore{Rule: DriftToolUndeclared, Tool: "debug_*", Reason: "debug tools"}, "MCP-DRIFT-TOOL-UNDECLARED/debug_dump/WARN", ""},
		{"family prefix", Ignore{Rule: "MCP-CONF-*", Reason: "r"}, "MCP-CONF-SERVER-INFO//INFO", ""},
		{"pointer prefix", Ignore{Tool: "search", Pointer: "/properties", Reason: "r"}, "MCP-DRIFT-SCHEMA/search/ERROR", ""},
		{"fingerprint", Ignore{Fingerprint: fs[1].Fingerprint, Reason: "r"}, "MCP-DRIFT-TOOL-UNDECLARED/orders/WARN", ""},
		{"expires today still matches", Ignore{Tool: "orders", Reason: "r", Expires: "2027-01-10"}, "MCP-DRIFT-TOOL-UNDECLARED/orders/WARN", ""},
		{"expired", Ignore{Tool: "orders", Reason: "r", Expires: "2027-01-09"}, "", "expired on 2027-01-09"},
		{"matched nothing", Ignore{Tool: "nope", Reason: "r"}, "", "matched no finding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(nil, []Ignore{tc.ig})
			if err != nil {
				t.Fatal(err)
			}
			kept, ignored, stale := p.Apply(fs, now)
			if got := rules(ignored); got != tc.ignored {
				t.Fatalf("ignored = %q, want %q", got, tc.ignored)
			}
			if len(kept)+len(ignored) != len(fs) {
				t.Fatalf("lost findings: %d kept + %d ignored of %d", len(kept), len(ignored), len(fs))
			}
			for _, f := range ignored {
				if f.IgnoreReason != tc.ig.Reason {
					t.Fatalf("ignore_reason = %q", f.IgnoreReason)
				}
			}
			gotStale := ""
			if len(stale) > 0 {
				gotStale = stale[0].Why
			}
			if gotStale != tc.stale {
				t.Fatalf("stale = %q, want %q", gotStale, tc.stale)
			}
		})
	}
}

func TestPolicyErrors(t *testing.T) {
	_, err := NewPolicy(map[string]string{"MCP-NOPE": "ERROR", DriftToolMissing: "LOUD"}, []Ignore{
		{Rule: DriftToolMissing},
		{Reason: "nothing to match"},
		{Rule: "MCP-DRIFT-TYPO", Reason: "r"},
		{Tool: "[", Reason: "r"},
		{Tool: "x", Reason: "r", Expires: "31/03/2027"},
	})
	for _, want := range []string{
		`"MCP-NOPE" is not a rule or BRK-* grade id`,
		`severity MCP-DRIFT-TOOL-MISSING: "LOUD" is not ERROR`,
		"ignore[0]: reason is required",
		"ignore[1]: needs at least one of",
		`ignore[2]: rule "MCP-DRIFT-TYPO" is not in the catalogue`,
		`ignore[3]: tool "["`,
		`ignore[4]: expires "31/03/2027": want YYYY-MM-DD`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestNilPolicyKeepsEverything(t *testing.T) {
	var p *Policy
	kept, ignored, stale := p.Apply(policyFindings(), time.Now())
	if len(kept) != 5 || len(ignored) != 0 || len(stale) != 0 {
		t.Fatal("nil policy changed findings")
	}
}
