package format

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// JUnitSuites is the root of driftd's JUnit XML: the shape Jenkins, GitLab
// and most CI test-report readers take (testdata/junit.xsd). Exported so
// that tests decode strictly into the same types.
type JUnitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	// No skipped count here: Jenkins xunit's junit-10.xsd allows it on a
	// testsuite only, and refuses the whole file with it on testsuites.
	Time   string       `xml:"time,attr"`
	Suites []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one target's run.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a name and value of the run.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one declared (or reported) item, or the target itself.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Skipped   *JUnitSkipped `xml:"skipped"`
	Error     *JUnitProblem `xml:"error"`
	Failure   *JUnitProblem `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitSkipped marks a case whose findings were all ignored, or that was
// not compared.
type JUnitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnitProblem is a failure (findings at or above --fail-on) or an error
// (the probe failed).
type JUnitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// targetCase names the test case of findings about no one item.
const targetCase = "target"

// JUnit writes run as JUnit XML: one test suite for the target, a test
// case per declared tool, prompt, resource and resource template (and per
// item a finding names that is not declared), and one for the target.
// A case fails with the findings at or above --fail-on (type: the most
// severe one's rule; the rest in its text); findings below the threshold
// and ignored ones are lines of its system-out; a case whose findings were
// all ignored is skipped. A failed probe is an error of the target case,
// and the items are skipped.
func JUnit(w io.Writer, run *Run) error {
	rep := run.Report
	suite := JUnitSuite{
		Name: rep.Target,
		Time: strconv.FormatFloat(rep.DurationSeconds, 'f', 3, 64),
		Properties: []JUnitProperty{
			{"driftd.version", run.Version}, {"command", run.Command}, {"fail_on", string(run.FailOn)},
			{"summary", fmt.Sprintf("%d ERROR, %d WARN, %d INFO", rep.Summary.Error, rep.Summary.Warn, rep.Summary.Info)},
		},
	}
	if !rep.StartedAt.IsZero() {
		suite.Timestamp = rep.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	type key struct{ kind, name string }
	var order []key
	groups := map[key]*caseFindings{}
	add := func(k key) *caseFindings {
		g, ok := groups[k]
		if !ok {
			g = &caseFindings{}
			groups[k] = g
			order = append(order, k)
		}
		return g
	}
	for _, k := range mcp.Kinds {
		for _, name := range run.Declared[k] {
			add(key{string(k), name})
		}
	}
	caseOf := func(f catalogue.Finding) key {
		if f.Tool == "" {
			return key{"", targetCase}
		}
		return key{string(kindOf(f)), f.Tool}
	}
	for _, f := range rep.Findings {
		g := add(caseOf(f))
		g.found = append(g.found, f)
	}
	for _, f := range rep.Ignored {
		g := add(caseOf(f))
		g.ignored = append(g.ignored, f)
	}
	target := add(key{"", targetCase})
	for _, o := range rep.FindingsOmitted {
		target.notes = append(target.notes, fmt.Sprintf("%s %s: %d more not listed (at most %d per rule)", o.Severity, o.Rule, o.Count, catalogue.MaxPerRule))
	}
	if rep.IgnoredOmitted > 0 {
		target.notes = append(target.notes, fmt.Sprintf("ignored: %d more not listed", rep.IgnoredOmitted))
	}
	for _, s := range rep.StaleIgnores {
		target.notes = append(target.notes, "stale ignore ("+s.Why+"): "+ignoreText(s.Ignore))
	}
	for _, k := range order {
		c := JUnitCase{Name: k.name, Classname: "driftd." + rep.Target}
		if k.kind != "" {
			c.Name = mcp.Kind(k.kind).Noun() + " " + k.name
			c.Classname += "." + k.kind
		}
		groups[k].fill(&c, run, k.kind == "")
		suite.Cases = append(suite.Cases, c)
		suite.Tests++
		switch {
		case c.Error != nil:
			suite.Errors++
		case c.Failure != nil:
			suite.Failures++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	doc := JUnitSuites{
		Name: "driftd " + run.Command, Tests: suite.Tests, Failures: suite.Failures,
		Errors: suite.Errors, Time: suite.Time, Suites: []JUnitSuite{suite},
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, xml.Header+string(b)+"\n")
	return err
}

// caseFindings are the findings of one test case.
type caseFindings struct {
	found, ignored []catalogue.Finding
	notes          []string
}

func (g *caseFindings) fill(c *JUnitCase, run *Run, isTarget bool) {
	rep := run.Report
	if !rep.Success {
		if isTarget {
			c.Error = &JUnitProblem{Type: string(rep.FailureReason), Message: fmt.Sprintf("probe failed (%s): %s; nothing was compared", rep.FailureReason, rep.FailureMessage)}
		} else {
			c.Skipped = &JUnitSkipped{Message: "not compared: the probe failed"}
		}
	}
	var failing, out []string
	for _, f := range g.found {
		if run.failing(f) {
			failing = append(failing, findingLine(f))
			if c.Failure == nil {
				c.Failure = &JUnitProblem{Type: f.Rule, Message: f.Message}
			}
		} else {
			out = append(out, findingLine(f))
		}
	}
	switch {
	case c.Error != nil:
		// One outcome per case: a failed probe's findings are listed.
		c.Failure, out = nil, append(failing, out...)
	case c.Failure != nil:
		if len(failing) > 1 {
			c.Failure.Message += fmt.Sprintf(" (and %d more)", len(failing)-1)
		}
		c.Failure.Text = strings.Join(failing, "\n")
		c.Skipped = nil
	case len(g.found) == 0 && len(g.ignored) > 0:
		c.Skipped = &JUnitSkipped{Message: fmt.Sprintf("ignored: %s (%s)", g.ignored[0].Rule, g.ignored[0].IgnoreReason)}
	}
	for _, f := range g.ignored {
		out = append(out, "ignored "+findingLine(f)+" — "+f.IgnoreReason)
	}
	out = append(out, g.notes...)
	if len(out) > 0 {
		c.SystemOut = strings.Join(out, "\n")
	}
}

// findingLine is one finding on one line: severity, rule, pointer,
// message, change and grade, fingerprint.
func findingLine(f catalogue.Finding) string {
	s := string(f.Severity) + " " + f.Rule
	if f.Pointer != "" {
		s += " " + f.Pointer
	}
	s += ": " + f.Message
	if f.Grade != "" {
		s += fmt.Sprintf(" [%s, %s]", f.Change, f.Grade)
	}
	return s + " (" + f.Fingerprint + ")"
}

// DeclaredOf lists what m declares, names sanitised as findings name them.
func DeclaredOf(m *manifest.Manifest) Declared {
	d := Declared{}
	if m == nil {
		return d
	}
	if m.Declares(mcp.KindTool) {
		for _, t := range m.Tools {
			d[mcp.KindTool] = append(d[mcp.KindTool], sanitize.Name(t.Name))
		}
	}
	for _, k := range mcp.ItemKinds {
		for _, it := range m.Items[k] {
			d[k] = append(d[k], sanitize.Name(it.Key))
		}
	}
	return d
}
