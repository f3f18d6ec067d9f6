package format

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/kaptinlin/jsonschema"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/sanitize"
	"github.com/driftd/driftd/internal/schema"
)

// sarifSchemaCompiled is the vendored OASIS schema (testdata/README.md),
// compiled with driftd's own compiler, which fetches nothing.
var sarifSchemaCompiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	b, err := os.ReadFile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		return nil, err
	}
	return schema.NewCompiler().Compile(b)
})

func validateSARIF(t *testing.T, b []byte) *jsonschema.EvaluationResult {
	t.Helper()
	s, err := sarifSchemaCompiled()
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	return s.ValidateJSON(b)
}

func TestSARIFValidatesAgainstTheOfficialSchema(t *testing.T) {
	for name, run := range map[string]*Run{"scenario": scenario(t), "failed probe": failedRun()} {
		t.Run(name, func(t *testing.T) {
			out := render(t, "sarif", run)
			if res := validateSARIF(t, out); !res.IsValid() {
				list, _ := json.MarshalIndent(res.ToList(), "", "  ")
				t.Fatalf("SARIF does not validate:\n%s", list)
			}
		})
	}
}

// TestSARIFSchemaRejects shows the validation can fail: the same log with
// a level SARIF does not have, and without its version.
func TestSARIFSchemaRejects(t *testing.T) {
	out := string(render(t, "sarif", scenario(t)))
	for name, bad := range map[string]string{
		"level":   strings.Replace(out, `"level": "error"`, `"level": "fatal"`, 1),
		"version": strings.Replace(out, `"version": "2.1.0",`, ``, 1),
		"line":    strings.Replace(out, `"startLine": 13`, `"startLine": 0`, 1),
	} {
		if bad == out {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if validateSARIF(t, []byte(bad)).IsValid() {
			t.Errorf("%s: a broken log validates", name)
		}
	}
}

type sarifDoc struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				Version        string `json:"version"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID                   string `json:"id"`
					HelpURI              string `json:"helpUri"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful            bool `json:"executionSuccessful"`
			ToolConfigurationNotifications []struct {
				Level   string `json:"level"`
				Message struct{ Text string }
			} `json:"toolConfigurationNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string } `json:"artifactLocation"`
					Region           struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Suppressions        []struct {
				Kind          string `json:"kind"`
				Justification string `json:"justification"`
			} `json:"suppressions"`
		} `json:"results"`
	} `json:"runs"`
}

// TestSARIFContent holds the log to the catalogue and the report: a
// descriptor per rule with a helpUri whose anchor docs/rules.md has, a
// result per finding with its rule's index, level, fingerprint and line,
// the ignored one suppressed with its reason, the stale ignore notified.
func TestSARIFContent(t *testing.T) {
	run := scenario(t)
	var doc sarifDoc
	if err := json.Unmarshal(render(t, "sarif", run), &doc); err != nil {
		t.Fatal(err)
	}
	rulesMD, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if d := r.Tool.Driver; d.Name != "driftd" || d.Version != "1.2.3" || d.InformationURI == "" {
		t.Errorf("driver %q %q %q", d.Name, d.Version, d.InformationURI)
	}
	if len(r.Tool.Driver.Rules) != len(catalogue.Rules) {
		t.Fatalf("%d rules, want the catalogue's %d", len(r.Tool.Driver.Rules), len(catalogue.Rules))
	}
	levels := map[catalogue.Severity]string{catalogue.Error: "error", catalogue.Warn: "warning", catalogue.Info: "note"}
	for i, d := range r.Tool.Driver.Rules {
		rule := catalogue.Rules[i]
		if d.ID != rule.ID || d.DefaultConfiguration.Level != levels[rule.Severity] {
			t.Errorf("rules[%d] = %s %s, want %s %s", i, d.ID, d.DefaultConfiguration.Level, rule.ID, levels[rule.Severity])
		}
		_, anchor, _ := strings.Cut(d.HelpURI, "#")
		if !strings.HasPrefix(d.HelpURI, RulesURI+"#") || !strings.Contains(string(rulesMD), `<a id="`+anchor+`"></a>`+"`"+rule.ID+"`") {
			t.Errorf("%s: helpUri %s has no anchor in docs/rules.md", rule.ID, d.HelpURI)
		}
	}
	rep := run.Report
	all := append(append([]catalogue.Finding{}, rep.Findings...), rep.Ignored...)
	if len(r.Results) != len(all) {
		t.Fatalf("%d results, want %d", len(r.Results), len(all))
	}
	wantLines := map[string]string{ // fingerprint's rule → file:line in the scenario
		catalogue.DriftSchema:         "testdata/new.yaml:13", // limit's maximum
		catalogue.DriftToolMissing:    "testdata/old.json:17", // cancel_order, only in OLD
		catalogue.DriftDescription:    "testdata/new.yaml:16",
		catalogue.DriftTitle:          "testdata/new.yaml:4",
		catalogue.DriftToolUndeclared: "testdata/new.yaml:22",
	}
	for i, res := range r.Results {
		f := all[i]
		if res.RuleID != f.Rule || catalogue.Rules[res.RuleIndex].ID != f.Rule || res.Level != levels[f.Severity] {
			t.Errorf("result %d: %s #%d %s, want %s %s", i, res.RuleID, res.RuleIndex, res.Level, f.Rule, f.Severity)
		}
		if res.PartialFingerprints[FingerprintKey] != f.Fingerprint {
			t.Errorf("result %d: fingerprints %v, want %s", i, res.PartialFingerprints, f.Fingerprint)
		}
		loc := res.Locations[0].PhysicalLocation
		if got := loc.ArtifactLocation.URI + ":" + itoa(loc.Region.StartLine); got != wantLines[f.Rule] {
			t.Errorf("%s located at %s, want %s", f.Rule, got, wantLines[f.Rule])
		}
		ignored := f.IgnoreReason != ""
		if ignored != (len(res.Suppressions) == 1) || ignored && (res.Suppressions[0].Kind != "external" || res.Suppressions[0].Justification != f.IgnoreReason) {
			t.Errorf("%s: suppressions %+v, ignore reason %q", f.Rule, res.Suppressions, f.IgnoreReason)
		}
	}
	notes := r.Invocations[0].ToolConfigurationNotifications
	if len(notes) != 1 || !strings.Contains(notes[0].Message.Text, "refund_order") || !r.Invocations[0].ExecutionSuccessful {
		t.Errorf("invocation %+v: want one stale-ignore notification naming refund_order", r.Invocations[0])
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// sarifPlain reads a SARIF plain-text message string by the grammar of
// §3.11.5 and §3.11.6 and returns the text a viewer shows. It fails on
// anything that is not only text: an unescaped "[" (an embedded link
// begins) or "]", a lone "{" or "}" (a placeholder), a backslash that
// escapes nothing.
func sarifPlain(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) || !strings.ContainsRune(`\[]`, rune(s[i+1])) {
				t.Errorf("%q: a backslash at %d that escapes nothing", s, i)
				continue
			}
			i++
			b.WriteByte(s[i])
		case '[', ']':
			t.Errorf("%q: an unescaped %q at %d, SARIF link syntax", s, c, i)
		case '{', '}':
			if i+1 == len(s) || s[i+1] != c {
				t.Errorf("%q: a lone %q at %d, SARIF placeholder syntax", s, c, i)
				continue
			}
			i++
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestSARIFMessagesAreText: with server text that holds embedded links,
// placeholders and escapes, every message.text of the log is only text
// under SARIF's grammar and reads back as the report's string; the log
// still validates.
func TestSARIFMessagesAreText(t *testing.T) {
	corpus := append([]string{"[x](https://evil.example)", "[here](0)", `\[esc\](1)`, `a\`, `\\`, "{0}", "{{1}}", "}{", "[[x]](sarif:/runs/0)"}, hostileMarkdown...)
	for _, failed := range []bool{false, true} {
		run := hostileRun(failed)
		rep := *run.Report
		rep.Findings = nil
		for _, h := range corpus {
			f := catalogue.New(catalogue.DriftSchema, sanitize.Name(h), sanitize.Text("enum value "+h+" removed"))
			f.Pointer = sanitize.Text("/properties/" + h)
			rep.Findings = append(rep.Findings, f)
		}
		if failed {
			rep.FailureMessage = sanitize.Text(strings.Join(corpus[:9], " "))
		}
		run.Report = &rep
		out := render(t, "sarif", run)
		if res := validateSARIF(t, out); !res.IsValid() {
			list, _ := json.MarshalIndent(res.ToList(), "", "  ")
			t.Fatalf("SARIF does not validate:\n%s", list)
		}
		var doc struct {
			Runs []struct {
				Invocations []struct {
					ToolExecutionNotifications []struct {
						Message struct{ Text string }
					} `json:"toolExecutionNotifications"`
				} `json:"invocations"`
				Results []struct {
					Message struct{ Text string }
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		results := doc.Runs[0].Results
		if len(results) != len(rep.Findings) {
			t.Fatalf("%d results, want %d", len(results), len(rep.Findings))
		}
		for i, f := range rep.Findings {
			if got, want := sarifPlain(t, results[i].Message.Text), subject(f)+": "+f.Message; got != want {
				t.Errorf("result %d reads %q, want %q", i, got, want)
			}
		}
		if failed {
			notes := doc.Runs[0].Invocations[0].ToolExecutionNotifications
			if len(notes) == 0 || !strings.Contains(sarifPlain(t, notes[0].Message.Text), rep.FailureMessage) {
				t.Errorf("the failed probe's notification does not read back the failure message %q", rep.FailureMessage)
			}
		}
	}
	// And driftd's own texts: the rule whose doc names [INST] and
	// <IMPORTANT> has plain text with escaped brackets and Markdown
	// without HTML.
	var log sarifLog
	if err := json.Unmarshal(render(t, "sarif", scenario(t)), &log); err != nil {
		t.Fatal(err)
	}
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		for _, m := range []*sarifMessage{r.ShortDescription, r.FullDescription, r.Help} {
			sarifPlain(t, m.Text)
		}
		if strings.Contains(r.Help.Markdown, "<") && !strings.Contains(r.Help.Markdown, `\<`) {
			t.Errorf("%s: help.markdown carries HTML: %s", r.ID, r.Help.Markdown)
		}
	}
}
