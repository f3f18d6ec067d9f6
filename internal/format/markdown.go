package format

import (
	"fmt"
	"io"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
)

// MaxMarkdownRows bounds the findings table: a pull-request comment stays
// readable (and under GitHub's comment and step-summary limits) whatever
// a server does; the rest is counted.
const MaxMarkdownRows = 50

// Markdown writes run as a short summary for a pull-request comment or
// $GITHUB_STEP_SUMMARY: a one-line verdict, the counts per severity, a
// table of the findings (at most MaxMarkdownRows, then "…and N more"),
// and the ignored and stale-ignore counts. Server-controlled names sit in
// code spans and every other cell is escaped, so nothing a server named
// becomes a link, a mention or HTML.
func Markdown(w io.Writer, run *Run) error {
	rep := run.Report
	var b strings.Builder
	mark := "✅"
	switch {
	case !rep.Success:
		mark = "⚠️"
	case rep.MaxSeverity() >= run.FailOn.Rank():
		mark = "❌"
	}
	fmt.Fprintf(&b, "### %s driftd %s %s: %s\n\n", mark, run.Command, escapeCode(rep.Target), escapeText(run.verdict()))
	fmt.Fprintf(&b, "| ERROR | WARN | INFO | ignored | stale ignores |\n|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d |\n", rep.Summary.Error, rep.Summary.Warn, rep.Summary.Info,
		len(rep.Ignored)+rep.IgnoredOmitted, len(rep.StaleIgnores))
	if len(rep.Findings) > 0 {
		b.WriteString("\n| severity | rule | item | message |\n|---|---|---|---|\n")
		for i, f := range rep.Findings {
			if i == MaxMarkdownRows {
				break
			}
			item := ""
			if f.Tool != "" {
				item = kindOf(f).Noun() + " " + escapeCode(f.Tool)
			}
			if f.Pointer != "" {
				item += " " + escapeCode(f.Pointer)
			}
			msg := f.Message
			if f.Grade != "" {
				msg += fmt.Sprintf(" [%s, %s]", f.Change, f.Grade)
			}
			fmt.Fprintf(&b, "| %s | [%s](%s) | %s | %s |\n", f.Severity, f.Rule, RuleURI(f.Rule), strings.TrimSpace(item), escapeText(msg))
		}
	}
	if more := max(len(rep.Findings)-MaxMarkdownRows, 0) + catalogue.OmittedCount(rep.FindingsOmitted); more > 0 {
		fmt.Fprintf(&b, "\n…and %d more (`--format json` lists every finding).\n", more)
	}
	if n := len(rep.StaleIgnores); n > 0 {
		entries := "entries are"
		if n == 1 {
			entries = "entry is"
		}
		fmt.Fprintf(&b, "\n%d ignore %s stale (matched no finding, or expired): the text output names them.\n", n, entries)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeText backslash-escapes the characters that open Markdown or HTML
// inside a table cell (emphasis, code, links, tags, entities, pipes), so
// the text renders as written.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapeCode puts s in a code span that s cannot close, with a table
// cell's pipes escaped (GitHub reads \| inside a span in a table as |).
func escapeCode(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}
