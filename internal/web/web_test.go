package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

type fakeSource struct {
	ready    bool
	reloaded int
	probed   []string
	rep      *probe.Report
	// accepted are the baseline accepts, "target by reason", and the
	// requests as the handler passed them.
	accepted   []string
	acceptReqs []AcceptRequest
	// declared, if set, is the target's manifest; else one tool, search.
	declared string
	// config is what ConfigStatus returns; manifestErr the target's
	// ManifestError.
	config      ConfigStatus
	manifestErr string
	// served, if set, is the served tool; else search with maxLength 10.
	served string
	// gate, if set, holds Declared until closed; each call first sends
	// on entered.
	gate, entered chan struct{}
}

func (f *fakeSource) Ready() bool { return f.ready }
func (f *fakeSource) Targets() []TargetStatus {
	st, _ := f.Target("orders")
	return []TargetStatus{st}
}
func (f *fakeSource) Target(name string) (TargetStatus, bool) {
	if name != "orders" {
		return TargetStatus{}, false
	}
	next := time.Now().Add(time.Minute)
	run, _ := f.Run(name)
	return TargetStatus{Name: "orders", URL: "https://orders.internal/mcp", Schedule: "@every 5m", NextRun: &next,
		Status: run.Status(), ManifestError: f.manifestErr}, true
}
func (f *fakeSource) Served(name string) ([]mcp.Tool, error) {
	if name != "orders" {
		return nil, ErrUnknownTarget
	}
	raw := `{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":10}},"description":"<script>x</script>"}}`
	if f.served != "" {
		raw = f.served
	}
	t, _ := mcp.ParseTool(json.RawMessage(raw))
	return []mcp.Tool{t}, nil
}
func (f *fakeSource) Declared(name string) (*manifest.Manifest, error) {
	if f.gate != nil {
		f.entered <- struct{}{}
		<-f.gate
	}
	if f.declared != "" {
		return manifest.Parse([]byte(f.declared), ".json")
	}
	return manifest.Parse([]byte(`{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":64}}}}]}`), ".json")
}
func (f *fakeSource) Run(name string) (*state.Run, bool) {
	if name != "orders" {
		return nil, false
	}
	run := state.Loaded(state.NewState("orders"))
	if f.rep != nil {
		run = state.Apply(run, f.rep, time.Now(), 0, nil)
	}
	return run, true
}
func (f *fakeSource) History(name string) ([]state.Event, error) {
	if name != "orders" {
		return nil, ErrUnknownTarget
	}
	return []state.Event{{Time: time.Now(), Kind: "opened", Rule: "MCP-DRIFT-TOOL-MISSING", Tool: "<script>x</script>"}}, nil
}
func (f *fakeSource) Logs(string) []string        { return []string{`level=INFO msg="run finished"`} }
func (f *fakeSource) Rejected() []Rejected        { return nil }
func (f *fakeSource) ConfigYAML() ([]byte, error) { return []byte("global: {}\n"), nil }
func (f *fakeSource) ConfigStatus() ConfigStatus  { return f.config }
func (f *fakeSource) Reload() error               { f.reloaded++; return nil }
func (f *fakeSource) AcceptBaseline(name string, req AcceptRequest) (*state.Accept, error) {
	switch name {
	case "orders":
		return nil, ErrNotBaseline
	case "tofu":
		if req.Digest != tofuDigest {
			return nil, &DigestError{Current: tofuDigest}
		}
		f.accepted = append(f.accepted, name+" "+req.BasicAuthUser+" "+req.ClaimedBy+" "+req.Reason)
		f.acceptReqs = append(f.acceptReqs, req)
		return state.NewAccept(req.Digest, req.BasicAuthUser, req.ClaimedBy, req.Reason, time.Now()), nil
	}
	return nil, ErrUnknownTarget
}

// tofuDigest is the surface digest the fake's baseline-mode target serves.
const tofuDigest = "sha256:0123"

func (f *fakeSource) Baseline(name string) (*state.Baseline, error) {
	switch name {
	case "orders":
		return nil, ErrNotBaseline
	case "tofu":
		return &state.Baseline{Manifest: json.RawMessage(`{"tools":[]}`), Origin: state.OriginFirstSeen, RecordedAt: time.Unix(0, 0)}, nil
	}
	return nil, ErrUnknownTarget
}
func (f *fakeSource) Probe(name string) error {
	if name != "orders" {
		return ErrUnknownTarget
	}
	f.probed = append(f.probed, name)
	return nil
}

func serve(t *testing.T, lifecycle bool, src *fakeSource) *httptest.Server {
	srv := httptest.NewServer(New(src, Options{EnableLifecycle: lifecycle, Metrics: promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{}), Version: "test"}))
	t.Cleanup(srv.Close)
	return srv
}

// do sends a request as driftd's pages and CLI do: a POST carries
// RequestHeader.
func do(t *testing.T, method, url string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if method == http.MethodPost {
		req.Header.Set(RequestHeader, "1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestEndpoints(t *testing.T) {
	src := &fakeSource{ready: true, rep: &probe.Report{Target: "orders", Success: true, Findings: []catalogue.Finding{
		{Rule: catalogue.DriftToolUndeclared, Severity: catalogue.Warn, Tool: `<img src=x onerror=alert(1)>`, Message: "served, not declared"},
	}}}
	srv := serve(t, false, src)
	for _, tc := range []struct {
		method, path string
		code         int
		ctype, want  string
	}{
		{"GET", "/-/healthy", 200, "text/plain", "OK"},
		{"GET", "/-/ready", 200, "text/plain", "OK"},
		{"GET", "/metrics", 200, "text/plain", ""},
		{"GET", "/api/v1/targets", 200, "application/json", `"name": "orders"`},
		{"GET", "/api/v1/targets/orders", 200, "application/json", `"target": "orders"`},
		{"GET", "/api/v1/targets/nope", 404, "application/json", "unknown target"},
		{"GET", "/api/v1/targets/orders/history", 200, "application/json", `"kind": "opened"`},
		{"GET", "/api/v1/rules", 200, "application/json", `"BRK-INPUT-REQUIRED-ADDED"`},
		{"GET", "/config", 200, "text/plain", "global"},
		{"GET", "/", 200, "text/html", `href="/targets/orders"`},
		{"GET", "/targets/orders", 200, "text/html", "&lt;img src=x onerror=alert(1)&gt;"},
		{"GET", "/targets/nope", 404, "text/plain", ""},
		{"POST", "/-/reload", 403, "text/plain", "--web.enable-lifecycle"},
		{"POST", "/api/v1/targets/orders/probe", 403, "text/plain", "--web.enable-lifecycle"},
		{"POST", "/api/v1/targets/tofu/baseline", 403, "text/plain", "--web.enable-lifecycle"},
		{"GET", "/api/v1/targets/tofu/baseline", 200, "application/json", `"tools": []`},
		{"GET", "/api/v1/targets/orders/baseline", 409, "application/json", "not a baseline"},
		{"GET", "/api/v1/targets/nope/baseline", 404, "application/json", "unknown target"},
		{"GET", "/-/reload", 405, "", ""},
	} {
		code, body, h := do(t, tc.method, srv.URL+tc.path)
		if code != tc.code || !strings.HasPrefix(h.Get("Content-Type"), tc.ctype) || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s = %d %q; want %d %q containing %q\n%.300s", tc.method, tc.path, code, h.Get("Content-Type"), tc.code, tc.ctype, tc.want, body)
		}
		if strings.Contains(body, "<img src=x") || strings.Contains(body, "<script>x") {
			t.Errorf("%s: a server-controlled string reached the page unescaped", tc.path)
		}
	}
	if src.reloaded != 0 || len(src.probed) != 0 || len(src.accepted) != 0 {
		t.Fatal("a lifecycle action ran without the flag")
	}
}

func TestLifecycleEnabled(t *testing.T) {
	src := &fakeSource{ready: false}
	srv := serve(t, true, src)
	if code, _, _ := do(t, "POST", srv.URL+"/-/reload"); code != 200 || src.reloaded != 1 {
		t.Fatalf("reload: %d, reloaded %d", code, src.reloaded)
	}
	if code, _, _ := do(t, "POST", srv.URL+"/api/v1/targets/orders/probe"); code != 202 || len(src.probed) != 1 {
		t.Fatalf("probe: %d", code)
	}
	if code, _, _ := do(t, "POST", srv.URL+"/api/v1/targets/nope/probe"); code != 404 {
		t.Fatalf("probe unknown: %d", code)
	}
	// An accept names the digest reviewed: another one is 409 with the
	// current digest, and nothing is accepted.
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/targets/tofu/baseline", strings.NewReader(`{"digest":"sha256:stale","reason":"reviewed in PR 7"}`))
	req.Header.Set(RequestHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Status, ErrorType, Error string
		Data                     struct{ Digest string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != 409 || answer.Status != "error" || answer.ErrorType != "conflict" || answer.Data.Digest != tofuDigest || len(src.accepted) != 0 {
		t.Fatalf("stale accept: %d %+v %q", resp.StatusCode, answer, src.accepted)
	}
	req, _ = http.NewRequest("POST", srv.URL+"/api/v1/targets/tofu/baseline", strings.NewReader(`{"digest":"`+tofuDigest+`","by":"mallory","reason":"reviewed in PR 7"}`))
	req.Header.Set(RequestHeader, "1")
	req.SetBasicAuth("alice", "pw")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 202 || len(src.accepted) != 1 || src.accepted[0] != "tofu alice mallory reviewed in PR 7" {
		t.Fatalf("baseline accept: %v %v %q", err, resp, src.accepted)
	}
	if code, _, _ := do(t, "POST", srv.URL+"/api/v1/targets/orders/baseline"); code != 409 {
		t.Fatalf("baseline accept on a manifest target: %d", code)
	}
	if code, _, _ := do(t, "POST", srv.URL+"/api/v1/targets/nope/baseline"); code != 404 {
		t.Fatalf("baseline accept unknown: %d", code)
	}
	if code, _, _ := do(t, "GET", srv.URL+"/-/ready"); code != 503 {
		t.Fatalf("ready before start: %d", code)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/targets/orders"); code != 200 || !strings.Contains(body, "No run has finished since start") {
		t.Fatalf("target page without a report: %d", code)
	}
}

// Behind --web.route-prefix every endpoint answers under the prefix, every
// link on the pages starts with it, and the root redirects there.
func TestRoutePrefix(t *testing.T) {
	src := &fakeSource{ready: true, rep: &probe.Report{Target: "orders", Success: true}}
	srv := httptest.NewServer(New(src, Options{Metrics: promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{}), Version: "test", RoutePrefix: "/driftd/"}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/driftd/", "/driftd/targets/orders", "/driftd/api/v1/targets", "/driftd/metrics", "/driftd/style.css", "/driftd/-/healthy"} {
		code, body, _ := do(t, "GET", srv.URL+path)
		if code != 200 {
			t.Errorf("GET %s = %d", path, code)
		}
		for _, m := range regexp.MustCompile(`(?:href|src)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if !strings.HasPrefix(m[1], "/driftd/") {
				t.Errorf("%s links to %q, outside the prefix", path, m[1])
			}
		}
	}
	if code, _, _ := do(t, "GET", srv.URL+"/targets/orders"); code != 404 {
		t.Errorf("unprefixed path answered %d", code)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/driftd/" {
		t.Errorf("GET / = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// The served set downloads as a canonical manifest, and a schema finding
// opens the declared and served schema side by side, the changed line
// marked, every server string escaped.
func TestManifestAndSchemaView(t *testing.T) {
	srv := serve(t, false, &fakeSource{ready: true})
	code, body, h := do(t, "GET", srv.URL+"/api/v1/targets/orders/manifest")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.Contains(body, `"name":"search"`) {
		t.Fatalf("manifest: %d %s", code, body)
	}
	if _, err := manifest.Parse([]byte(body), ".json"); err != nil {
		t.Fatalf("the download is not a manifest: %v", err)
	}
	code, body, _ = do(t, "GET", srv.URL+"/targets/orders/schema?tool=search&direction=input&pointer=/properties/q/maxLength")
	if code != 200 || !strings.Contains(body, `class="l-changed"`) || !strings.Contains(body, "64") || !strings.Contains(body, "10") {
		t.Fatalf("schema view: %d\n%s", code, body)
	}
	if strings.Contains(body, "<script>x") {
		t.Fatal("a served string reached the page unescaped")
	}
	if code, _, _ = do(t, "GET", srv.URL+"/targets/orders/schema?tool=search&direction=sideways"); code != 400 {
		t.Fatalf("bad direction: %d", code)
	}
	if code, _, _ = do(t, "GET", srv.URL+"/targets/orders/schema?tool=nope&direction=input"); code != 404 {
		t.Fatalf("a tool neither declared nor served: %d, want 404", code)
	}
	if code, _, _ = do(t, "GET", srv.URL+"/api/v1/targets/nope/manifest"); code != 404 {
		t.Fatalf("unknown target manifest: %d", code)
	}
}

// A property that became optional is shown from the object holding the
// "required" array, which is what changed, not from the property alone.
func TestSchemaViewShowsRequiredFromItsObject(t *testing.T) {
	src := &fakeSource{ready: true, declared: `{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":10}},"required":["q"]}}]}`}
	srv := serve(t, false, src)
	code, body, _ := do(t, "GET", srv.URL+"/targets/orders/schema?tool=search&direction=input&pointer=/properties/q&change=CHG-REQUIRED-REMOVED")
	if code != 200 || !strings.Contains(body, "shown from <code>/</code>") || !strings.Contains(body, "&#34;required&#34;") {
		t.Fatalf("required change not shown from its object: %d\n%s", code, body)
	}
	// Without the change, the view starts at the pointer, as before.
	if _, body, _ = do(t, "GET", srv.URL+"/targets/orders/schema?tool=search&direction=input&pointer=/properties/q"); strings.Contains(body, "&#34;required&#34;") {
		t.Fatalf("a property's view shows the required array:\n%s", body)
	}
}

// The daemon records only the served tools: a manifest that also declares
// prompts and resources keeps them in the download, as declared, so that
// accepting a tool change does not stop monitoring them.
func TestManifestDownloadKeepsDeclaredLists(t *testing.T) {
	src := &fakeSource{ready: true, declared: `{"tools":[{"name":"search","inputSchema":{"type":"object"}}],
		"prompts":[{"name":"summarise","arguments":[{"name":"text","required":true}]}],
		"resources":[{"uri":"file:///orders.csv","name":"orders"}]}`}
	srv := serve(t, false, src)
	code, body, h := do(t, "GET", srv.URL+"/api/v1/targets/orders/manifest")
	if code != 200 {
		t.Fatalf("manifest: %d %s", code, body)
	}
	m, err := manifest.Parse([]byte(body), ".json")
	if err != nil {
		t.Fatalf("the download is not a manifest: %v", err)
	}
	if len(m.Tools) != 1 || !strings.Contains(string(m.Tools[0].InputSchema), "maxLength") {
		t.Fatalf("tools are not the served ones: %s", body)
	}
	if len(m.Items[mcp.KindPrompt]) != 1 || len(m.Items[mcp.KindResource]) != 1 || m.Declares(mcp.KindResourceTemplate) {
		t.Fatalf("declared lists not carried over as declared: %s", body)
	}
	if got := h.Get("X-Driftd-Carried-Over"); got != "prompts, resources" {
		t.Fatalf("X-Driftd-Carried-Over = %q", got)
	}
}

// TestReloadFailedBanner: while the source says the last reload was
// refused, every status page carries the banner with each problem,
// escaped; a target whose manifest broke says so on its page and its row.
// Without either, no page shows them.
func TestReloadFailedBanner(t *testing.T) {
	src := &fakeSource{ready: true, rep: &probe.Report{Target: "orders", Success: true}}
	srv := serve(t, false, src)
	pages := []string{"/", "/targets/orders", "/targets/orders/schema?tool=search&direction=input"}
	for _, p := range pages {
		if _, body, _ := do(t, "GET", srv.URL+p); strings.Contains(body, "configuration reload failed") || strings.Contains(body, "manifest broken") {
			t.Errorf("GET %s shows a banner with nothing failed", p)
		}
	}
	src.config = ConfigStatus{ReloadFailedAt: time.Now(), ReloadProblems: []string{
		"driftd.yml:4: targets[0].manifest: a.json:1:12: not valid JSON <b>",
		"driftd.yml:9: targets[1].http_client.authorization.credentials_file: open /run/token: no such file or directory",
	}}
	src.manifestErr = "a.json:1:12: not valid JSON"
	for _, p := range pages {
		code, body, _ := do(t, "GET", srv.URL+p)
		if code != 200 {
			t.Fatalf("GET %s: %d", p, code)
		}
		for _, want := range []string{"configuration reload failed", "driftd.yml:4: targets[0].manifest: a.json:1:12: not valid JSON &lt;b&gt;", "driftd.yml:9: targets[1].http_client.authorization.credentials_file"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q", p, want)
			}
		}
		if strings.Contains(body, "<b>") {
			t.Errorf("GET %s: a problem reached the page unescaped", p)
		}
	}
	if _, body, _ := do(t, "GET", srv.URL+"/targets/orders"); !strings.Contains(body, "The manifest cannot be read</strong>: a.json:1:12: not valid JSON") {
		t.Errorf("target page lacks the manifest banner:\n%s", body)
	}
	if _, body, _ := do(t, "GET", srv.URL+"/"); !strings.Contains(body, "manifest broken") {
		t.Error("index row lacks the manifest badge")
	}
	if _, body, _ := do(t, "GET", srv.URL+"/api/v1/targets"); !strings.Contains(body, `"manifest_error": "a.json:1:12: not valid JSON"`) {
		t.Errorf("/api/v1/targets lacks manifest_error: %s", body)
	}
}
