package format

import (
	"fmt"
	"io"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/sanitize"
)

// MaxMarkdownRows bounds the findings table: a pull-request comment stays
// readable (and under GitHub's comment and step-summary limits) whatever
// a server does; the rest is counted.
const MaxMarkdownRows = 50

// Markdown writes run as a short summary for a pull-request comment or
// $GITHUB_STEP_SUMMARY: a one-line verdict, the counts per severity, a
// table of the findings (at most MaxMarkdownRows, then "…and N more"),
// and the ignored and stale-ignore counts.
//
// Every string the report holds from a server — target, item names,
// pointers, messages, the failure message — is a code span whose fence
// is longer than any backtick run inside it: GitHub renders a code
// span's content literally and turns nothing in it into an @mention, an
// issue or cross-repository reference, a link, an autolink, an image,
// HTML, emphasis or an emoji. Inside a table cell its pipes are escaped
// (GitHub splits cells before it reads spans, and reads \| back as |).
// Text outside code spans is driftd's own, and backslash-escaped where
// it has Markdown's characters. The invisible characters the sanitiser
// made visible stay visible: no zero-width character is added.
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
	verdict := run.verdict(func(s string) string { return codeSpan(s, false) })
	fmt.Fprintf(&b, "### %s driftd %s %s: %s\n\n", mark, run.Command, codeSpan(rep.Target, false), verdict)
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
				item = escapeText(kindOf(f).Noun()) + " " + codeSpan(f.Tool, true)
			}
			if f.Pointer != "" {
				item += " " + codeSpan(f.Pointer, true)
			}
			msg := codeSpan(f.Message, true)
			if f.Grade != "" {
				msg += " " + escapeText(fmt.Sprintf("[%s, %s]", f.Change, f.Grade))
			}
			fmt.Fprintf(&b, "| %s | [%s](%s) | %s | %s |\n", escapeText(string(f.Severity)), escapeText(f.Rule), RuleURI(f.Rule), strings.TrimSpace(item), msg)
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
// (emphasis, code, links, tags, entities, pipes), so driftd's own text
// renders as written. It is not for server text, which codeSpan holds:
// GitHub finds mentions and references in the rendered text, after the
// escapes are gone.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|~&!#", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan puts s in a code span that s cannot close: the fence is one
// backtick longer than the longest run of backticks in s, and a space
// pads s when it starts or ends with a backtick or a space (CommonMark
// strips one space from each side of a span that has both). In a table
// cell, s's pipes are escaped. A line ending, which would end the span
// (and the table row), cannot occur: the sanitiser wrote it as \x0a; one
// that did would be written as the sanitiser writes it.
func codeSpan(s string, cell bool) string {
	if s == "" {
		return ""
	}
	if strings.ContainsAny(s, "\r\n") {
		s = sanitize.Clip(s, len(s)*4)
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	pad := ""
	if s[0] == '`' || s[len(s)-1] == '`' || (strings.Trim(s, " ") != "" && (s[0] == ' ' || s[len(s)-1] == ' ')) {
		pad = " "
	}
	return fence + pad + s + pad + fence
}
