// Package browser drives Debian's headless Chromium over the pages of a
// real driftd (issue 16): the demo at the root and a daemon behind
// --web.route-prefix, both built binaries on loopback. Every page loads
// without console errors, every link on every page resolves (and behind
// the prefix stays under it), and the outage case — the demo's mock dies
// under the second daemon — shows the failure banner and the stale
// findings. A fleet of 200 targets is filtered in the index's form to
// drifted + team=payments (TestFleetInABrowser, issue 39). Screenshots
// go to DRIFTD_ARTIFACTS (default
// ../../.ci/artifacts/browser). It is its own module so that the main one
// does not carry chromedp; `make browser` runs it, .ci/run too.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const root = "../.."

func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

func binary(t *testing.T) string {
	p, _ := filepath.Abs(filepath.Join(root, "bin", "driftd"))
	if v := os.Getenv("DRIFTD_BIN"); v != "" {
		p = v
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (make build)", p, err)
	}
	return p
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs the binary with args until the test ends.
func start(t *testing.T, dir string, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s %v output:\n%s", filepath.Base(bin), args, b)
		}
	})
	return cmd
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func getBody(u string) (int, string) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b)
}

// browser is one headless Chromium with every console error and uncaught
// exception recorded.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	b := &browser{ctx: ctx}
	// Start the browser and its first tab, then read its console to the end.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				if u, err := url.Parse(m.URL); err == nil && u.Path == "/favicon.ico" && m.Type == chromedp.ConsoleError {
					// Chromium asks the origin's root for /favicon.ico
					// now and then (a page replaced by its own meta
					// refresh before its <link rel="icon"> is read). A
					// daemon under --web.route-prefix does not own the
					// root; its pages name their icon under the prefix.
					continue
				}
				b.mu.Lock()
				b.errors = append(b.errors, m.String()+" "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

func (b *browser) takeErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.errors
	b.errors = nil
	return out
}

// visit loads u, and returns the page's text and its links (absolute).
func (b *browser) visit(t *testing.T, u string) (string, []string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	text, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	hrefs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('a[href],link[href]')).map(a => a.href)`))
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	time.Sleep(100 * time.Millisecond) // late console messages
	for _, e := range b.takeErrors() {
		t.Errorf("%s: %s", u, e)
	}
	return text, hrefs
}

func (b *browser) screenshot(t *testing.T, name string) {
	dir := os.Getenv("DRIFTD_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(root, ".ci", "artifacts", "browser")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// crawl visits every page reachable from start on the same origin, in the
// browser for HTML and by GET for the rest; every link must answer 200
// and stay under prefix.
func (b *browser) crawl(t *testing.T, start, prefix string) []string {
	base, _ := url.Parse(start)
	seen := map[string]bool{}
	queue := []string{start}
	var pages []string
	for len(queue) > 0 && len(seen) < 200 {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		pu, err := url.Parse(u)
		if err != nil || pu.Host != base.Host {
			continue
		}
		if !strings.HasPrefix(pu.Path, prefix) {
			t.Errorf("link %s leaves the route prefix %s", u, prefix)
			continue
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Errorf("GET %s: %v", u, err)
			continue
		}
		ctype := resp.Header.Get("Content-Type")
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d", u, resp.StatusCode)
			continue
		}
		if !strings.HasPrefix(ctype, "text/html") {
			continue
		}
		pages = append(pages, u)
		_, links := b.visit(t, u)
		for _, l := range links {
			l, _, _ = strings.Cut(l, "#")
			if !seen[l] {
				queue = append(queue, l)
			}
		}
	}
	if len(pages) < 2 {
		t.Errorf("crawl of %s reached %d page(s)", start, len(pages))
	}
	return pages
}

func TestPagesInABrowser(t *testing.T) {
	bin := binary(t)
	b := newBrowser(t)
	repo, _ := filepath.Abs(root)

	// The demo at the root, its mock on a port of ours.
	web1, mock := freePort(t), freePort(t)
	demo := start(t, t.TempDir(), bin, "demo", "--web.listen-address="+web1, "--mock.listen-address="+mock)
	waitFor(t, "the demo's first runs", func() bool {
		_, body := getBody("http://" + web1 + "/api/v1/targets")
		return strings.Contains(body, `"drift": "drifted"`)
	})

	// A daemon behind a route prefix, probing the demo's mock.
	dir := t.TempDir()
	cfg := fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 3s, state_dir: %s}\ntargets:\n  - {name: orders, url: \"http://%s/mcp\", manifest: %s}\n",
		filepath.Join(dir, "state"), mock, filepath.Join(repo, "examples", "manifests", "orders.json"))
	if err := os.WriteFile(filepath.Join(dir, "driftd.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	web2 := freePort(t)
	start(t, dir, bin, "run", "--config.file=driftd.yml", "--web.listen-address="+web2, "--web.route-prefix=/driftd", "--web.enable-lifecycle")
	waitFor(t, "the prefixed daemon's first run", func() bool {
		_, body := getBody("http://" + web2 + "/driftd/api/v1/targets")
		return strings.Contains(body, `"drift": "drifted"`)
	})

	pages := b.crawl(t, "http://"+web1+"/", "/")
	b.visit(t, "http://"+web1+"/")
	b.screenshot(t, "index")
	for _, p := range pages {
		if strings.Contains(p, "/targets/orders-demo") && !strings.Contains(p, "/schema") {
			b.visit(t, p)
			b.screenshot(t, "target")
			break
		}
	}
	for _, p := range pages {
		if strings.Contains(p, "/schema?") {
			text, _ := b.visit(t, p)
			if !strings.Contains(text, "declared") || !strings.Contains(text, "served") {
				t.Errorf("side-by-side view without its two sides: %.300s", text)
			}
			b.screenshot(t, "schema")
			break
		}
	}
	// The demo's search_orders serves an input property the manifest
	// lacks: both input schemas exist, so neither side may be absent (the
	// served side once was: the daemon read its snapshot unparsed).
	sawInput := false
	for _, p := range pages {
		if strings.Contains(p, "/schema?") && strings.Contains(p, "tool=search_orders") && strings.Contains(p, "direction=input") {
			sawInput = true
			if text, _ := b.visit(t, p); strings.Contains(text, "(absent)") {
				t.Errorf("input schema view shows a side as absent: %.600s", text)
			}
			break
		}
	}
	if !sawInput {
		t.Error("no schema view of search_orders' inputSchema among the crawled pages")
	}
	b.crawl(t, "http://"+web2+"/driftd/", "/driftd/")
	b.buttons(t, "http://"+web2+"/driftd/")

	// The outage: the mock goes away under the prefixed daemon.
	_ = demo.Process.Kill()
	_ = demo.Wait()
	waitFor(t, "the prefixed daemon to see the outage", func() bool {
		_, body := getBody("http://" + web2 + "/driftd/api/v1/targets")
		var answer struct{ Data []struct{ Health string } }
		return json.Unmarshal([]byte(body), &answer) == nil && len(answer.Data) == 1 && answer.Data[0].Health == "failing"
	})
	text, _ := b.visit(t, "http://"+web2+"/driftd/targets/orders")
	for _, want := range []string{"The last run failed", "Failing since", "could not be re-checked", "stale", "MCP-DRIFT-TOOL-MISSING", "nothing was listed, since the run failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("outage page lacks %q", want)
		}
	}
	b.screenshot(t, "outage")
	text, _ = b.visit(t, "http://"+web2+"/driftd/")
	if !strings.Contains(text, "failing") || !strings.Contains(text, "stale") {
		t.Errorf("outage index: %.500s", text)
	}
}

// buttons: the index's Reload button POSTs from app.js, with the header
// the daemon requires, under the CSP, and shows the answer; a form on
// another origin posting to the same endpoint is refused (docs/security.md).
func (b *browser) buttons(t *testing.T, index string) {
	t.Helper()
	b.visit(t, index)
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS("button[data-post]"))); err != nil {
		t.Fatal(err)
	}
	var answer string
	waitFor(t, "the Reload button's answer", func() bool {
		answer, _ = chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(".act-result")))
		return answer != ""
	})
	if answer != "Reloaded." {
		t.Errorf("Reload button answered %q", answer)
	}
	for _, e := range b.takeErrors() {
		t.Errorf("after the Reload button: %s", e)
	}

	// The forgery of issue 35 from another origin: a text/plain form.
	target := strings.TrimSuffix(index, "/") + "/-/reload"
	evil := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" enctype="text/plain" action="%s"><input name='{"by":"mallory","x":"' value='"}'></form><script>document.forms[0].submit()</script>`, target)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = evil.Serve(ln) }()
	defer evil.Close()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
		t.Fatal(err)
	}
	var text string
	waitFor(t, "the forged form's answer", func() bool {
		text, _ = chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
		return strings.Contains(text, "refused")
	})
	if !strings.Contains(text, "Cross-site request refused") {
		t.Errorf("the forged form got %q", text)
	}
	b.takeErrors() // the 403 itself is a console error of that page
}

// TestFleetInABrowser is issue 39's fleet: 200 targets on one mock (each
// its own URL), every fourth compared against the demo's manifest, so
// drifted, the others trusting their first sight, so clean; every third
// is team=payments. The index, filtered in its form to drifted +
// team=payments, shows exactly those targets, the URL keeps the view,
// and a target's page lists its ERROR findings first.
func TestFleetInABrowser(t *testing.T) {
	bin := binary(t)
	b := newBrowser(t)
	repo, _ := filepath.Abs(root)

	// The demo, for its mock.
	web1, mock := freePort(t), freePort(t)
	start(t, t.TempDir(), bin, "demo", "--web.listen-address="+web1, "--mock.listen-address="+mock)
	waitFor(t, "the demo's mock", func() bool { code, _ := getBody("http://" + web1 + "/-/healthy"); return code == 200 })

	const n = 200
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global: {schedule: \"@every 15s\", timeout: 5s, state_dir: %s}\ntargets:\n", filepath.Join(dir, "state"))
	var want []string // drifted and team=payments, by name
	for i := range n {
		name, team, env := fmt.Sprintf("svc-%03d", i), "others", "staging"
		if i%3 == 0 {
			team = "payments"
		}
		if i%2 == 0 {
			env = "prod"
		}
		compare := "baseline: first_seen, severity: {MCP-AUTH-ANONYMOUS-LIST: \"OFF\"}"
		if i%4 == 0 {
			compare = "manifest: " + filepath.Join(repo, "examples", "manifests", "orders.json")
			if team == "payments" {
				want = append(want, name)
			}
		}
		fmt.Fprintf(&cfg, "  - {name: %s, url: \"http://%s/mcp?instance=%d\", %s, labels: {team: %s, environment: %s}}\n", name, mock, i, compare, team, env)
	}
	if err := os.WriteFile(filepath.Join(dir, "driftd.yml"), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	web := freePort(t)
	start(t, dir, bin, "run", "--config.file=driftd.yml", "--web.listen-address="+web)
	base := "http://" + web
	waitFor(t, "every target's first run", func() bool {
		_, body := getBody(base + "/api/v1/targets")
		var answer struct {
			Status string
			Data   []struct{ Drift string }
		}
		if json.Unmarshal([]byte(body), &answer) != nil || answer.Status != "success" || len(answer.Data) != n {
			return false
		}
		drift := map[string]int{}
		for _, r := range answer.Data {
			drift[r.Drift]++
		}
		return drift["drifted"] == n/4 && drift["clean"] == n-n/4
	})

	rows := func() []string {
		r, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#targets tbody tr')).map(r => r.dataset.target)`))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	search := func() string {
		s, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.search`))
		return s
	}
	// loaded reports whether the page whose query has want is loaded; an
	// evaluation while the page navigates fails, and is asked again.
	loaded := func(want string) func() bool {
		return func() bool {
			ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`location.search.includes(`+strconv.Quote(want)+`) && document.readyState === "complete" && !!document.querySelector("#summary")`))
			return err == nil && ok
		}
	}
	text, _ := b.visit(t, base+"/")
	if got := rows(); len(got) != n {
		t.Fatalf("the index shows %d rows of %d", len(got), n)
	}
	if !strings.Contains(text, "50 drifted, 0 failing, 150 clean of 200") {
		t.Errorf("summary line: %.400s", text)
	}
	b.screenshot(t, "fleet")

	// The filters as a person sets them: the drifted box (the form
	// applies itself on a change), then team=payments and Apply. Each
	// step is one script that returns at once: an action of chromedp's
	// that the navigation it causes overtakes can wait forever.
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](`document.querySelector("input[name=state][value=drifted]").click()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the state filter applied", loaded("state=drifted"))
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](`document.querySelector("select[data-label=team]").value = "team=payments";
		document.querySelector("form.filters button[type=submit]").click()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the label filter applied", loaded("label=team%3Dpayments"))
	view := base + "/" + search()
	if got := rows(); !slices.Equal(got, want) {
		t.Errorf("drifted + team=payments shows %v, want %v", got, want)
	}
	b.screenshot(t, "fleet-filtered")
	// The URL is the view: loaded afresh, it shows the same rows.
	text, _ = b.visit(t, view)
	if got := rows(); !slices.Equal(got, want) || !strings.Contains(text, fmt.Sprintf("showing %d", len(want))) {
		t.Errorf("%s shows %v", view, got)
	}

	// A drifted target's findings, ERROR first.
	b.visit(t, base+"/targets/"+want[0])
	sevs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('tr[class^="sev-"]')).map(r => r.className.split(' ')[0].slice(4))`))
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{"ERROR": 3, "WARN": 2, "INFO": 1}
	if len(sevs) < 2 || sevs[0] != "ERROR" || sevs[len(sevs)-1] == "ERROR" ||
		!slices.IsSortedFunc(sevs, func(a, b string) int { return rank[b] - rank[a] }) {
		t.Errorf("%s's findings by severity: %v", want[0], sevs)
	}
	b.screenshot(t, "fleet-target")

	// The Rules link opens a page, each rule linking to its docs.
	text, links := b.visit(t, base+"/rules")
	if !strings.Contains(text, "MCP-DRIFT-TOOL-MISSING") || !slices.Contains(links, "https://github.com/driftd/driftd/blob/main/docs/rules.md#mcp-drift-tool-missing") {
		t.Errorf("/rules: %.300s", text)
	}
}
