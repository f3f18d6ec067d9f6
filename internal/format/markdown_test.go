package format

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
)

// TestMarkdownBounded: 150 findings and 40 past the per-rule cap give
// MaxMarkdownRows rows and the count of the rest.
func TestMarkdownBounded(t *testing.T) {
	run := scenario(t)
	rep := *run.Report
	rep.Findings = nil
	for i := range 150 {
		rep.Findings = append(rep.Findings, catalogue.New(catalogue.DriftToolUndeclared, fmt.Sprintf("t%03d", i), "served, not declared in the manifest"))
	}
	rep.FindingsOmitted = []catalogue.Omitted{{Rule: catalogue.DriftToolUndeclared, Severity: catalogue.Warn, Count: 40}}
	run.Report = &rep
	out := string(render(t, "md", run))
	if rows := strings.Count(out, "| WARN | ["); rows != MaxMarkdownRows {
		t.Errorf("%d rows, want %d", rows, MaxMarkdownRows)
	}
	if !strings.Contains(out, "…and 140 more") {
		t.Errorf("no count of the rest:\n%s", out)
	}
}

// TestMarkdownNamesAreInert: a server-chosen name cannot close its code
// span, split the table, or become HTML, a link or a mention.
func TestMarkdownNamesAreInert(t *testing.T) {
	for _, name := range []string{"a`b", "``x``", "a|b", "<img src=x>", "[x](http://e)", "@team", "` <b>`"} {
		code := escapeCode(name)
		fence := strings.Repeat("`", strings.Count(code[:strings.IndexFunc(code, func(r rune) bool { return r != '`' })], "`"))
		inner := strings.TrimSuffix(strings.TrimPrefix(code, fence), fence)
		if strings.Contains(inner, fence) && !strings.Contains(inner, fence+"`") {
			t.Errorf("%q → %q: the span closes early", name, code)
		}
		if strings.Contains(strings.ReplaceAll(inner, `\|`, ""), "|") {
			t.Errorf("%q → %q: an unescaped pipe splits the cell", name, code)
		}
	}
	if got := escapeText("a <b>|[x](y) *z* & `c`"); got != `a \<b\>\|\[x\](y) \*z\* \& \`+"`c\\`" {
		t.Errorf("escapeText: %s", got)
	}
}
