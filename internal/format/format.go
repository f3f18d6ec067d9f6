// Package format renders a report for CI: SARIF 2.1.0 for code-scanning
// UIs, JUnit XML for test-report UIs, and Markdown for pull-request
// comments and step summaries (docs/ci.md). Every renderer reads the
// same *probe.Report that `--format json` prints: one truth, several
// shapes. Nothing here adds server text to what the report holds.
package format

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

// Names are the values of --format.
var Names = []string{"text", "json", "sarif", "junit", "markdown"}

// Run is one command's outcome as the renderers read it.
type Run struct {
	Report *probe.Report
	// Command is "check" or "diff".
	Command string
	// Declared is the manifest compared against: check's manifest, diff's
	// OLD. JUnit makes a test case of each item it declares.
	Declared Declared
	// Files are the manifest files a finding is located in, the first
	// that declares its item winning: check's manifest; diff's NEW, then
	// OLD. Empty when there is no file.
	Files []File
	// FailOn is --fail-on: findings at or above it fail.
	FailOn catalogue.Severity
	// Version is driftd's version.
	Version string
	// WorkDir is the directory relative paths are taken against; SARIF
	// names files relative to it.
	WorkDir string
}

// Declared lists the declared identities per kind, in manifest order.
type Declared map[mcp.Kind][]string

// ProjectURI is driftd's home; RulesURI the page every rule has an
// anchor on (catalogue.Anchor).
const (
	ProjectURI = "https://github.com/driftd/driftd"
	RulesURI   = ProjectURI + "/blob/main/docs/rules.md"
)

// RuleURI is the documentation link of rule id.
func RuleURI(id string) string { return RulesURI + "#" + catalogue.Anchor(id) }

// failing reports whether f is at or above the run's threshold.
func (r *Run) failing(f catalogue.Finding) bool { return f.Severity.Rank() >= r.FailOn.Rank() }

// verdict is the one-line outcome, the same in every format; quote
// renders the failure message and reason, the strings a server chose.
func (r *Run) verdict(quote func(string) string) string {
	rep := r.Report
	if !rep.Success {
		return fmt.Sprintf("not probed: %s (reason: %s), nothing was compared", quote(rep.FailureMessage), quote(string(rep.FailureReason)))
	}
	n := 0
	for _, f := range rep.Findings {
		if r.failing(f) {
			n++
		}
	}
	for _, o := range rep.FindingsOmitted {
		if o.Severity.Rank() >= r.FailOn.Rank() {
			n += o.Count
		}
	}
	if n == 0 {
		return fmt.Sprintf("passed: no finding at or above %s", r.FailOn)
	}
	return fmt.Sprintf("failed: %d %s at or above %s", n, plural(n, "finding"), r.FailOn)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// kindOf is the kind of the item a finding names.
func kindOf(f catalogue.Finding) mcp.Kind {
	if f.Kind != "" {
		return mcp.Kind(f.Kind)
	}
	return mcp.KindTool
}

// subject says what a finding is about, as the text output does: "tool
// search", "prompt greet", "resource file:///a", with the pointer after.
func subject(f catalogue.Finding) string {
	var parts []string
	if f.Tool != "" {
		parts = append(parts, kindOf(f).Noun(), f.Tool)
	}
	if f.Pointer != "" {
		parts = append(parts, f.Pointer)
	}
	return strings.Join(parts, " ")
}

// fileURI names path for SARIF: relative to the working directory when
// it is inside it (forward slashes, escaped as a URI path), else a file:
// URI.
func fileURI(workDir, path string) string {
	p := path
	if filepath.IsAbs(p) && workDir != "" {
		if rel, err := filepath.Rel(workDir, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
	}
	if filepath.IsAbs(p) {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
	}
	return (&url.URL{Path: filepath.ToSlash(filepath.Clean(p))}).String()
}
