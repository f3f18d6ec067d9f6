package format

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// junitChildren is the element structure of testdata/junit.xsd: which
// children each element may have. The structural check refuses anything
// else, since encoding/xml alone skips unknown elements.
var junitChildren = map[string][]string{
	"":           {"testsuites"},
	"testsuites": {"testsuite"},
	"testsuite":  {"properties", "testcase", "system-out", "system-err"},
	"properties": {"property"},
	"property":   {},
	"testcase":   {"skipped", "error", "failure", "system-out", "system-err"},
	"skipped":    {},
	"error":      {},
	"failure":    {},
	"system-out": {},
	"system-err": {},
}

// checkJUnit decodes b strictly into the schema's types and checks what
// the XSD requires plus what it cannot: known elements only, at most one
// outcome per case, required attributes set, and counts that add up.
func checkJUnit(t *testing.T, b []byte) JUnitSuites {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			if !slices.Contains(junitChildren[parent], el.Name.Local) {
				t.Fatalf("<%s> inside <%s>: not in the JUnit shape", el.Name.Local, parent)
			}
			stack = append(stack, el.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	var doc JUnitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	total := JUnitSuites{}
	for _, s := range doc.Suites {
		if s.Name == "" {
			t.Error("a testsuite without a name")
		}
		var n, fail, errs, skip int
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname == "" {
				t.Errorf("testcase %q classname %q: both are required", c.Name, c.Classname)
			}
			outcomes := 0
			for _, p := range []*JUnitProblem{c.Error, c.Failure} {
				if p != nil {
					outcomes++
					if p.Type == "" || p.Message == "" {
						t.Errorf("%s: a failure or error needs type and message", c.Name)
					}
				}
			}
			if c.Skipped != nil {
				outcomes++
			}
			if outcomes > 1 {
				t.Errorf("%s: %d outcomes, want at most one", c.Name, outcomes)
			}
			n++
			switch {
			case c.Error != nil:
				errs++
			case c.Failure != nil:
				fail++
			case c.Skipped != nil:
				skip++
			}
		}
		if s.Tests != n || s.Failures != fail || s.Errors != errs || s.Skipped != skip {
			t.Errorf("suite %s counts tests=%d failures=%d errors=%d skipped=%d, its cases say %d %d %d %d",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, n, fail, errs, skip)
		}
		total.Tests, total.Failures, total.Errors = total.Tests+n, total.Failures+fail, total.Errors+errs
	}
	if doc.Tests != total.Tests || doc.Failures != total.Failures || doc.Errors != total.Errors {
		t.Errorf("testsuites counts %d %d %d, its suites say %d %d %d", doc.Tests, doc.Failures, doc.Errors,
			total.Tests, total.Failures, total.Errors)
	}
	return doc
}

// xmllint validates b against testdata/junit.xsd. Outside CI a missing
// xmllint skips with a notice; .ci/run installs it (libxml2-utils).
func xmllint(t *testing.T, b []byte) error {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint missing in CI (apt-get install libxml2-utils)")
		}
		t.Log("NOTICE: xmllint not installed (apt-get install libxml2-utils): XSD validation skipped")
		return nil
	}
	path := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", "testdata/junit.xsd", path).CombinedOutput()
	if err != nil {
		return &xmllintError{string(out)}
	}
	return nil
}

type xmllintError struct{ out string }

func (e *xmllintError) Error() string { return e.out }

func TestJUnitValidates(t *testing.T) {
	for name, run := range map[string]*Run{"scenario": scenario(t), "failed probe": failedRun()} {
		t.Run(name, func(t *testing.T) {
			out := render(t, "junit.xml", run)
			checkJUnit(t, out)
			if err := xmllint(t, out); err != nil {
				t.Fatalf("xmllint: %v", err)
			}
		})
	}
}

// TestJUnitSchemaRejects shows both checks can fail: a case with two
// outcomes, and a failure without its type.
func TestJUnitSchemaRejects(t *testing.T) {
	if _, err := exec.LookPath("xmllint"); err != nil && os.Getenv("CI") == "" {
		t.Skip("NOTICE: xmllint not installed (apt-get install libxml2-utils)")
	}
	out := render(t, "junit.xml", scenario(t))
	for name, bad := range map[string][]byte{
		"two outcomes": bytes.Replace(out, []byte("</failure>"), []byte(`</failure><skipped message="x"></skipped>`), 1),
		"no type":      bytes.Replace(out, []byte(`<failure type="MCP-DRIFT-SCHEMA" `), []byte(`<failure `), 1),
	} {
		if bytes.Equal(bad, out) {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if xmllint(t, bad) == nil {
			t.Errorf("%s: xmllint accepts it", name)
		}
	}
}

// TestJUnitCases: a case per declared tool and prompt, one per undeclared
// item a finding names, one for the target; failures only at or above
// --fail-on, the ignored-only case skipped.
func TestJUnitCases(t *testing.T) {
	run := scenario(t)
	doc := checkJUnit(t, render(t, "junit.xml", run))
	got := map[string]string{}
	for _, c := range doc.Suites[0].Cases {
		outcome := "pass"
		switch {
		case c.Failure != nil:
			outcome = "fail " + c.Failure.Type
		case c.Skipped != nil:
			outcome = "skipped"
		}
		got[c.Name] = outcome
	}
	want := map[string]string{
		"tool search_orders": "fail MCP-DRIFT-SCHEMA", "tool cancel_order": "fail MCP-DRIFT-TOOL-MISSING",
		"tool get_order": "pass", "prompt summarise_order": "pass", "tool debug_dump": "skipped", "target": "pass",
	}
	if len(got) != len(want) {
		t.Errorf("cases %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	run.FailOn = "WARN"
	doc = checkJUnit(t, render(t, "junit.xml", run))
	if doc.Failures != 3 {
		t.Errorf("--fail-on WARN: %d failures, want 3 (get_order's description too)", doc.Failures)
	}
}

// TestJUnitHostileNames: names a finding carries are sanitised already,
// but the XML stays well-formed and valid whatever they hold.
func TestJUnitHostileNames(t *testing.T) {
	run := scenario(t)
	rep := *run.Report
	rep.Findings = append(rep.Findings[:0:0], rep.Findings...)
	rep.Findings[0].Tool = "a\x00b\x1b]<x>&\"'\uFFFE]]>"
	rep.Findings[0].Message = "m\x01</failure>"
	run.Report = &rep
	out := render(t, "junit.xml", run)
	checkJUnit(t, out)
	if err := xmllint(t, out); err != nil {
		t.Fatalf("xmllint: %v", err)
	}
}
