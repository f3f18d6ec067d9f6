package faults_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// Server text in artifacts (issue 36): a server's names, its identity and
// its error text reach every artifact only through the one sanitiser, and
// each format neutralises what it would otherwise read as markup.

// hiddenRunes are code points of each class the sanitiser makes visible:
// zero-width characters, the BOM, bidi controls, tag characters, variation
// selectors with no base, other format characters, controls, separators,
// default-ignorables and noncharacters. No artifact may carry one raw.
var hiddenRunes = []rune{
	0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0x2062, 0x2064, 0xfeff,
	0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c,
	0xe0001, 0xe0020, 0xe0049, 0xe0067, 0xe006e, 0xe007f,
	0xfe00, 0xfe0e, 0xe0100, 0xe01ef,
	0x00ad, 0x180e, 0xfffb, 0x2028, 0x2029, 0x1b, 0x00, 0x0d, 0x85, 0x9b,
	0x034f, 0x3164, 0xfdd0, 0xfffe,
}

// hiddenText is "ok" and then every hidden rune, the selectors after
// other hidden runes so that none has a base.
func hiddenText() string {
	var b strings.Builder
	b.WriteString("ok")
	for _, r := range hiddenRunes {
		b.WriteRune(r)
	}
	return b.String()
}

// markupText is server text each CI format would read as markup:
// GitHub mentions and references, links, autolinks, images, HTML,
// emphasis, code and table breaks; SARIF embedded links and placeholders.
var markupText = []string{
	"@org/team", "@octocat", "owner/repo#12", "#1", "GH-1", "https://evil.example", "www.evil.example",
	"[x](https://evil.example)", "[y](javascript:alert(1))", "![i](http://x/y.png)", "<img src=x>",
	"**bold**", "`code`", "```", "a|b", "{0}",
}

// rawHidden names the first hidden rune s carries raw ("" for none).
func rawHidden(s string) string {
	for _, r := range hiddenRunes {
		if i := strings.IndexRune(s, r); i >= 0 {
			return fmt.Sprintf("%U at byte %d: …%+q…", r, i, s[max(0, i-40):min(len(s), i+40)])
		}
	}
	return ""
}

// textDeclared is the manifest of the server-text tests: tool "a" with a
// pattern the server changes.
const textDeclared = `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string","pattern":"^x$"}}}}]}`

// serverText serves tools named with hiddenText and each markupText
// string, descriptions and titles full of both, and a server identity
// made of them.
func serverText() server {
	h := hiddenText()
	var list []any
	list = append(list, map[string]any{"name": h, "title": h, "description": "d" + h,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"p" + h: map[string]any{"type": "string", "description": h}}}})
	for _, m := range markupText {
		list = append(list, map[string]any{"name": m, "description": m + " " + h, "inputSchema": map[string]any{"type": "object"}})
	}
	// Tool "a" as declared (textDeclared) but for its pattern, which the
	// schema drift's message quotes.
	list = append(list, map[string]any{"name": "a", "inputSchema": map[string]any{"type": "object",
		"properties": map[string]any{"q": map[string]any{"type": "string", "pattern": strings.Join(markupText, " ") + h}}}})
	tools, _ := json.Marshal(list)
	return intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
		switch q.Method {
		case "server/discover":
			writeJSON(w, http.StatusOK, modernBody(q.idText(),
				`"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},`+serverInfoMeta("srv"+h, "[v](https://evil.example) @octocat")))
		case "tools/list":
			writeJSON(w, http.StatusOK, modernBody(q.idText(), `"tools":`+string(tools)+`,`+serverInfoMeta("srv"+h, "1")))
		default:
			return false
		}
		return true
	})
}

// serverErrorText answers tools/list with a JSON-RPC error whose message
// is hidden runes and markup: the run fails (driftd names the error's
// code, not its text, but nothing of it may arrive raw either way).
func serverErrorText() server {
	msg, _ := json.Marshal(hiddenText() + " " + strings.Join(markupText, " "))
	return intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
		if q.Method != "tools/list" {
			return false
		}
		writeJSON(w, http.StatusOK, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"error":{"code":-32603,"message":`+string(msg)+`}}`))
		return true
	})
}

// TestServerTextInEveryFormat runs `driftd check` in every --format against
// a server whose names, identity and error text hide characters and carry
// markup, and holds each output (and stderr) to: no hidden rune raw, the
// served names' hidden runes shown as escapes (visible, not dropped), Markdown
// whose server text GitHub links nowhere, SARIF messages that are only
// text.
func TestServerTextInEveryFormat(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	token := writeFile(t, dir, "token", []byte(marker+"\n"))
	manifest := writeFile(t, dir, "declared.json", []byte(textDeclared))
	for name, srv := range map[string]server{"names": serverText(), "error": serverErrorText()} {
		url := srv(t)
		for _, format := range []string{"json", "text", "sarif", "junit", "markdown"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				res := runDriftd(t, "check", manifest, "--base-url", url, "--target", "faults",
					"--bearer-token-file", token, "--timeout", probeTimeout.String(), "--format", format)
				want := exitFindings
				if name == "error" {
					want = exitNoProbe
				}
				if res.code != want {
					t.Fatalf("exit %d, want %d\nstdout:\n%.2000s\nstderr:\n%.2000s", res.code, want, res.stdout.String(), res.stderr.String())
				}
				checkBounded(t, res, probeTimeout)
				out := res.stdout.String()
				for what, s := range map[string]string{"stdout": out, "stderr": res.stderr.String()} {
					if bad := rawHidden(s); bad != "" {
						t.Errorf("%s carries a raw %s", what, bad)
					}
				}
				if name == "names" && (!strings.Contains(out, `u200b`) || !strings.Contains(out, `U000e0049`)) {
					t.Errorf("the hidden runes are not shown as escapes (\\u200b, \\U000e0049):\n%.3000s", out)
				}
				switch format {
				case "markdown":
					checkMarkdownInert(t, res.stdout.String())
				case "sarif":
					checkSARIFText(t, res.stdout.String(), name == "names")
				}
			})
		}
	}
}

// githubLinked is what github.com links in rendered text outside code
// and links: mentions, issue and cross-repository references, URLs,
// emoji shortcodes.
var githubLinked = regexp.MustCompile(`@|#|GH-\d|://|www\.|:[a-z0-9_+-]+:`)

// checkMarkdownInert renders md with cmark-gfm (GitHub's Markdown
// library, with its extensions) and fails on any link but a rule's, any
// element a table summary does not need, raw HTML, and any text outside
// code that GitHub would link. Outside CI a missing cmark-gfm skips.
func checkMarkdownInert(t *testing.T, md string) {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cmark-gfm missing in CI (apt-get install cmark-gfm)")
		}
		t.Skip("NOTICE: cmark-gfm not installed (apt-get install cmark-gfm): GitHub rendering not checked")
	}
	cmd := exec.Command(bin, "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter")
	cmd.Stdin = strings.NewReader(md)
	page, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"html": true, "head": true, "body": true, "h3": true, "p": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "code": true, "a": true}
	codes := 0
	var walk func(n *html.Node, plain bool)
	walk = func(n *html.Node, plain bool) {
		switch n.Type {
		case html.CommentNode:
			t.Errorf("raw HTML reached the page: <!--%s-->", n.Data)
		case html.ElementNode:
			if !allowed[n.Data] {
				t.Errorf("<%s> in the rendered Markdown", n.Data)
			}
			switch n.Data {
			case "code":
				codes++
				plain = false
			case "a":
				for _, a := range n.Attr {
					if a.Key == "href" && !strings.HasPrefix(a.Val, "https://github.com/driftd/driftd/blob/main/docs/rules.md#") {
						t.Errorf("a link that is not a rule's: %s", a.Val)
					}
				}
				plain = false
			}
		case html.TextNode:
			if plain && githubLinked.MatchString(n.Data) {
				t.Errorf("text outside code that GitHub links: %q", n.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, plain)
		}
	}
	walk(doc, true)
	if codes == 0 {
		t.Errorf("no server text in code spans:\n%s", md)
	}
}

// checkSARIFText holds every result and notification message.text to
// SARIF's plain-text grammar with nothing but text (no unescaped square
// bracket, no lone brace) and, when results name the servers' tools, to
// the link the server wrote being there, escaped.
func checkSARIFText(t *testing.T, out string, results bool) {
	t.Helper()
	var log struct {
		Runs []struct {
			Invocations []struct {
				Notes []struct {
					Message struct{ Text string }
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
			Results []struct {
				Message struct{ Text string }
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF log: %v", err)
	}
	var texts []string
	for _, r := range log.Runs[0].Results {
		texts = append(texts, r.Message.Text)
	}
	for _, inv := range log.Runs[0].Invocations {
		for _, n := range inv.Notes {
			texts = append(texts, n.Message.Text)
		}
	}
	escaped := false
	for _, s := range texts {
		escaped = escaped || strings.Contains(s, `\[x\](https://evil.example)`)
		for i := 0; i < len(s); i++ {
			switch c := s[i]; c {
			case '\\':
				i++ // escapes the next character
			case '[', ']':
				t.Errorf("an unescaped %q in message %q: SARIF reads an embedded link", c, s)
			case '{', '}':
				if i+1 == len(s) || s[i+1] != c {
					t.Errorf("a lone %q in message %q: SARIF reads a placeholder", c, s)
				}
				i++
			}
		}
	}
	if results && !escaped {
		t.Errorf("no message shows the server's [x](https://evil.example) escaped: %q", texts)
	}
}

// TestServerTextInTheDaemon runs `driftd run` against the hidden-rune
// server and reads every artifact the daemon makes of it: the status
// pages, the API, the history, /metrics (labels carry tool names and the
// server's identity) and its log. No hidden rune raw; the escapes there.
func TestServerTextInTheDaemon(t *testing.T) {
	needBinary(t)
	if raceEnabled {
		t.Skip("the race detector slows the hostile servers too much for the daemon's bounds; make faults runs it")
	}
	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	writeFile(t, dir, "declared.json", []byte(textDeclared))
	cfg := fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state}\ntargets:\n"+
		"  - name: names\n    url: %q\n    manifest: declared.json\n    http_client: {authorization: {type: Bearer, credentials_file: token}}\n"+
		"  - name: errors\n    url: %q\n    manifest: declared.json\n    http_client: {authorization: {type: Bearer, credentials_file: token}}\n",
		serverText()(t), serverErrorText()(t))
	config := writeFile(t, dir, "driftd.yml", []byte(cfg))
	p := startDaemon(t, config, "--log.format=json", "--log.level=debug")
	base, log := p.base, p.log
	// Both targets have run twice (the second run's served changes and
	// history are there too) once each API report names its last run.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := get(base + "/api/v1/targets")
		if r.err == nil && strings.Count(r.body, `"last_run": {`) == 2 && strings.Contains(get(base+"/metrics").body, `u200b`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run of both targets after 20 s:\n%.3000s\n/metrics:\n%.3000s", r.body, get(base+"/metrics").body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	shown := map[string]bool{}
	for _, p := range []string{"/", "/metrics", "/api/v1/targets",
		"/targets/names", "/api/v1/targets/names", "/api/v1/targets/names/history",
		"/targets/errors", "/api/v1/targets/errors", "/api/v1/targets/errors/history"} {
		r := get(base + p)
		if r.err != nil {
			t.Errorf("%s: %v", p, r.err)
			continue
		}
		checkArtifact(t, p, r.body, maxPageBytes)
		if bad := rawHidden(r.body); bad != "" {
			t.Errorf("%s carries a raw %s", p, bad)
		}
		shown[p] = strings.Contains(r.body, `u200b`)
	}
	for _, p := range []string{"/metrics", "/targets/names", "/api/v1/targets/names", "/api/v1/targets/names/history"} {
		if !shown[p] {
			t.Errorf("%s does not show the hidden runes as escapes", p)
		}
	}
	if bad := rawHidden(log.String()); bad != "" {
		t.Errorf("the log carries a raw %s", bad)
	}
}
