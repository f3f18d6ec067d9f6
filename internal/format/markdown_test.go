package format

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
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

// hostileMarkdown is server text that GitHub would make into something
// other than text: mentions, references, links, autolinks, images, HTML,
// emphasis, code, table breaks, block structure.
var hostileMarkdown = []string{
	"@org/team", "@user", "cc @octocat please", "owner/repo#12", "#1", "fixes #123", "GH-1", "org/repo@abc1234",
	"https://evil.example", "http://evil.example/x?y=1", "www.evil.example", "user@evil.example", "<https://evil.example>",
	"[x](javascript:alert(1))", "![i](http://x/y.png)", "[ref]: http://evil.example", "[x][ref]",
	"<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "<!-- hidden -->", "&amp;&#64;user&lt;b&gt;",
	"**bold**", "*em*", "_em_", "~~del~~", ":+1: :shipit:", "$x^2$",
	"`code`", "``double``", "a ``` b", "`", "``", "ends with `", " lead", "trail ", " both ", "   ",
	"x|y", "| a | b |", `a\|b`, `a\`, `\`, "line1\nline2", "cr\rlf", "# heading", "> quote", "- item", "1. item", "---",
}

// hostileRun is a failed-probe-shaped report whose every server string
// is one of the corpus, as the sanitiser hands it on.
func hostileRun(failed bool) *Run {
	run := failedRun()
	rep := *run.Report
	rep.Success = !failed
	rep.FailureMessage = ""
	if failed {
		rep.FailureMessage = sanitize.Text(strings.Join(hostileMarkdown, " "))
	}
	rep.Findings = nil
	for i, h := range hostileMarkdown {
		f := catalogue.New(catalogue.DriftSchema, sanitize.Name(h), sanitize.Text("enum value "+h+" removed"))
		f.Pointer = sanitize.Text("/properties/" + h)
		if i%2 == 0 {
			f.Kind = string(mcp.KindPrompt)
		}
		rep.Findings = append(rep.Findings, f)
	}
	rep.Summary = catalogue.Counts{Error: len(rep.Findings)}
	run.Report = &rep
	return run
}

// cmarkGFM renders md with GitHub's own Markdown library (cmark-gfm, with
// the extensions github.com enables). Outside CI a missing cmark-gfm
// skips with a notice; .ci/run installs it.
func cmarkGFM(t *testing.T, md []byte) *html.Node {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cmark-gfm missing in CI (apt-get install cmark-gfm)")
		}
		t.Skip("NOTICE: cmark-gfm not installed (apt-get install cmark-gfm): GitHub rendering not checked")
	}
	cmd := exec.Command(bin, "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter")
	cmd.Stdin = bytes.NewReader(md)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// githubLinks is what github.com makes links of in rendered text outside
// code and links: mentions, issue and cross-repository references,
// commit references, URLs and emoji shortcodes.
var githubLinks = regexp.MustCompile(`@|#|GH-\d|://|www\.|:[a-z0-9_+-]+:`)

// TestMarkdownServerTextIsInert renders a report whose every server
// string is hostile with cmark-gfm and reads the HTML: no element but
// the table's, headings, paragraphs, code and driftd's rule links; no
// raw HTML; nothing GitHub links in text outside code; one row per
// finding with its four cells; and each code span shows its string as
// the report holds it.
func TestMarkdownServerTextIsInert(t *testing.T) {
	for _, failed := range []bool{false, true} {
		t.Run(fmt.Sprintf("failed=%v", failed), func(t *testing.T) {
			run := hostileRun(failed)
			md := render(t, "md", run)
			doc := cmarkGFM(t, md)
			allowed := map[string]bool{"html": true, "head": true, "body": true, "h3": true, "p": true,
				"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "code": true, "a": true}
			var codes []string
			var walk func(n *html.Node, inCode, inLink bool)
			walk = func(n *html.Node, inCode, inLink bool) {
				switch n.Type {
				case html.CommentNode:
					t.Errorf("raw HTML reached the page: <!--%s-->", n.Data)
				case html.ElementNode:
					if !allowed[n.Data] {
						t.Errorf("<%s> in the rendered Markdown", n.Data)
					}
					switch n.Data {
					case "code":
						codes = append(codes, text(n))
						inCode = true
					case "a":
						href := attr(n, "href")
						if !strings.HasPrefix(href, RulesURI+"#") || catalogue.Anchor(text(n)) != strings.TrimPrefix(href, RulesURI+"#") {
							t.Errorf("a link that is not a rule's: <a href=%q>%s</a>", href, text(n))
						}
						inLink = true
					}
				case html.TextNode:
					if !inCode && !inLink && githubLinks.MatchString(n.Data) {
						t.Errorf("text outside code that GitHub links: %q", n.Data)
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, inCode, inLink)
				}
			}
			walk(doc, false, false)

			rows := find(doc, "tr")
			var cells [][]*html.Node
			for _, tr := range rows {
				if tds := find(tr, "td"); len(tds) > 0 && len(find(tr, "a")) > 0 {
					cells = append(cells, tds)
				}
			}
			if len(cells) != len(run.Report.Findings) {
				t.Fatalf("%d finding rows, want %d:\n%s", len(cells), len(run.Report.Findings), md)
			}
			for i, f := range run.Report.Findings {
				if len(cells[i]) != 4 {
					t.Errorf("row %d (%q): %d cells, want 4", i, f.Tool, len(cells[i]))
					continue
				}
				var item []string
				for _, c := range find(cells[i][2], "code") {
					item = append(item, text(c))
				}
				if want := []string{f.Tool, f.Pointer}; fmt.Sprint(item) != fmt.Sprint(want) {
					t.Errorf("row %d renders item %q, want %q", i, item, want)
				}
				if msg := find(cells[i][3], "code"); len(msg) != 1 || text(msg[0]) != f.Message {
					t.Errorf("row %d does not render its message %q as written", i, f.Message)
				}
			}
			if failed {
				h := find(doc, "h3")
				if len(h) != 1 || len(find(h[0], "code")) < 2 || text(find(h[0], "code")[1]) != run.Report.FailureMessage {
					t.Errorf("the heading does not show the failure message as written:\n%s", md)
				}
			}
			if len(codes) == 0 {
				t.Fatal("no code spans rendered")
			}
		})
	}
}

func find(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
		out = append(out, find(c, tag)...)
	}
	return out
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestCodeSpan: the fence outgrows every backtick run, pipes are escaped
// in a cell only, and the padding CommonMark strips is added exactly
// where it strips it.
func TestCodeSpan(t *testing.T) {
	for _, tc := range []struct {
		in         string
		cell, want string
	}{
		{"plain", "", "`plain`"},
		{"a`b", "", "``a`b``"},
		{"a ``` b", "", "````a ``` b````"},
		{"`x", "", "`` `x ``"},
		{" lead", "", "`  lead `"},
		{"   ", "", "`   `"},
		{"a|b", "cell", "`a\\|b`"},
		{"line1\nline2", "", "`line1\\x0aline2`"},
	} {
		cell := tc.cell != ""
		if got := codeSpan(tc.in, cell); got != tc.want {
			t.Errorf("codeSpan(%q, %v) = %q, want %q", tc.in, cell, got, tc.want)
		}
	}
	if got := codeSpan("a|b", false); got != "`a|b`" {
		t.Errorf("outside a table a pipe is text: %q", got)
	}
	if got := escapeText("a <b>|[x](y) *z* & `c` #1 !"); got != `a \<b\>\|\[x\](y) \*z\* \& \`+"`c\\`"+` \#1 \!` {
		t.Errorf("escapeText: %s", got)
	}
}
