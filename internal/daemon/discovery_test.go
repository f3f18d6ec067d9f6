package daemon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/discovery"
	"github.com/driftd/driftd/internal/discovery/kubetest"
	"github.com/driftd/driftd/internal/discovery/registrytest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/web"
)

// sdEnv is a daemon with every discovery source, and what feeds them.
type sdEnv struct {
	*env
	base     string
	reg      *registrytest.Registry
	kube     *kubetest.Server
	one, two *mcptest.Server // serve one tool (a), two tools (a, b)
}

func newSDEnv(t *testing.T) *sdEnv {
	e := &sdEnv{env: newEnv(t), reg: registrytest.New(), kube: kubetest.New()}
	t.Cleanup(func() {
		if r := e.kube.Rejected(); len(r) > 0 {
			t.Errorf("the API server refused requests: %q", r)
		}
		e.kube.Close()
	})
	e.reg.PageSize = 1 // every listing pages
	e.one = mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	e.two = mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	t.Cleanup(func() { e.reg.Close(); e.one.Close(); e.two.Close() })
	e.manifest("a.json", "a")
	if err := os.Mkdir(filepath.Join(e.dir, "targets"), 0o700); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *sdEnv) targetFile(name, body string) { e.write(filepath.Join("targets", name), body) }

func (e *sdEnv) gone(target string) {
	e.t.Helper()
	eventually(e.t, 20*time.Second, target+"'s series to go", func() bool {
		_, body := get(e.t, e.base+"/metrics")
		return !strings.Contains(body, `target="`+target+`"`)
	})
}

func (e *sdEnv) origins() map[string]string {
	_, body := get(e.t, e.base+"/api/v1/targets")
	var ts []web.TargetStatus
	if err := json.Unmarshal(apiData(body), &ts); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, t := range ts {
		out[t.Name] = t.Origin
	}
	return out
}

// TestDiscoveryAllSources: a target added to, changed in and removed from
// each source is scheduled, runs with its new settings, and is stopped
// with its series deleted; a discovered name that a written target has is
// rejected and counted; a failing source keeps its targets and counts the
// failure.
func TestDiscoveryAllSources(t *testing.T) {
	e := newSDEnv(t)
	e.targetFile("one.yml", fmt.Sprintf("- {name: f-one, url: %q, baseline: first_seen}\n- {name: hand, url: %q, manifest: ../a.json}\n", e.one.URL, e.one.URL))
	e.reg.Put("io.example/crm", "1.0.0", registrytest.Remote{Type: "streamable-http", URL: e.one.URL}, registrytest.Remote{Type: "sse", URL: e.one.URL + "/sse"})
	e.config(fmt.Sprintf(`global: {schedule: "@every 1s", timeout: 5s, state_dir: state}
targets:
  - {name: hand, url: %q, manifest: a.json}
target_files: ["targets/*.yml"]
registry_sd:
  - {url: %q, refresh_interval: 1s, timeout: 5s}
kubernetes_sd:
  - {namespaces: [shop], selector: app=mcp, labels: {team: shop}, kubeconfig: %q}
sd_credentials:
  - labels: {team: shop}
    http_client: {proxy_url: %q}
`, e.one.URL, e.reg.URL, e.kube.Kubeconfig(e.dir), svcProxy(t)))
	e.kube.Put(service("shop", "crm", portOf(t, e.one.URL), nil))
	e.kube.Put(service("shop", "quiet", portOf(t, e.one.URL), map[string]string{discovery.AnnotationProbe: "false"}))
	_, e.base = e.start(false)
	kubeSrc := "kubernetes:shop;app=mcp"
	fileSrc := "file:" + filepath.Join(e.dir, "targets", "*.yml")
	regSrc := "registry:" + e.reg.URL
	// A registry target is named by its server and its remote's URL.
	crm := discovery.RegistryName("io.example/crm", e.one.URL)

	for _, name := range []string{"hand", "f-one", crm, "k8s-shop-crm"} {
		waitMetric(t, e.base, `driftd_probe_success{target="`+name+`"}`, 1)
	}
	if o := e.origins(); o["hand"] != "config" || o["f-one"] != "file:"+filepath.Join(e.dir, "targets", "one.yml") || o[crm] != regSrc || o["k8s-shop-crm"] != "kubernetes:shop/crm" {
		t.Errorf("origins: %v", o)
	}
	// The status pages say where a discovered target came from.
	_, index := get(t, e.base+"/")
	for _, want := range []string{"from file:" + filepath.Join(e.dir, "targets", "one.yml"), "from " + regSrc, "from kubernetes:shop/crm"} {
		if !strings.Contains(index, want) {
			t.Errorf("the status page does not say %q", want)
		}
	}
	if _, page := get(t, e.base+"/targets/k8s-shop-crm"); !strings.Contains(page, "from kubernetes:shop/crm") {
		t.Error("the target page does not say where the target came from")
	}
	// The file's "hand" loses to the written one, and is counted, not
	// dropped, and listed on the status page as not probed, with why.
	waitMetric(t, e.base, `driftd_sd_rejected_targets{source="`+fileSrc+`"}`, 1)
	if _, index := get(t, e.base+"/"); !strings.Contains(index, "Discovered, not probed") || !strings.Contains(index, `target &#34;hand&#34;: name already used by config`) {
		t.Errorf("the status page does not list the rejected discovered target:\n%s", index)
	}
	waitMetric(t, e.base, `driftd_sd_skipped_remotes{source="`+regSrc+`"}`, 1)
	waitMetric(t, e.base, `driftd_sd_targets{source="`+regSrc+`"}`, 1)
	waitMetric(t, e.base, `driftd_sd_targets{source="`+kubeSrc+`"}`, 1) // quiet did not opt in
	if !strings.Contains(e.log.String(), "name already used by config") {
		t.Error("the rejected file target is not logged")
	}

	// Add one to each.
	e.targetFile("two.yml", fmt.Sprintf("- {name: f-two, url: %q, baseline: first_seen}\n", e.one.URL))
	e.reg.Put("io.example/search", "0.1.0", registrytest.Remote{Type: "streamable-http", URL: e.one.URL})
	waitMetric(t, e.base, `driftd_probe_success{target="f-two"}`, 1)
	e.kube.Put(service("shop", "search", portOf(t, e.one.URL), nil))
	search := discovery.RegistryName("io.example/search", e.one.URL)
	waitMetric(t, e.base, `driftd_probe_success{target="`+search+`"}`, 1)
	waitMetric(t, e.base, `driftd_probe_success{target="k8s-shop-search"}`, 1)

	// Change one in each: its runs go to the server serving two tools. A
	// registry server's new URL is a new target, the old one goes.
	e.targetFile("one.yml", fmt.Sprintf("- {name: f-one, url: %q, baseline: first_seen}\n", e.two.URL))
	e.reg.Put("io.example/crm", "1.1.0", registrytest.Remote{Type: "streamable-http", URL: e.two.URL})
	waitMetric(t, e.base, `driftd_tools{source="served",target="f-one"}`, 2)
	e.kube.Put(service("shop", "crm", portOf(t, e.two.URL), nil))
	crm2 := discovery.RegistryName("io.example/crm", e.two.URL)
	waitMetric(t, e.base, `driftd_tools{source="served",target="`+crm2+`"}`, 2)
	e.gone(crm)
	waitMetric(t, e.base, `driftd_tools{source="served",target="k8s-shop-crm"}`, 2)
	if e.reg.Incremental.Load() == 0 {
		t.Error("the registry was never asked for updated_since")
	}

	// Remove one from each: stopped, series deleted.
	if err := os.Remove(filepath.Join(e.dir, "targets", "two.yml")); err != nil {
		t.Fatal(err)
	}
	e.reg.Delete("io.example/search")
	e.gone("f-two")
	e.kube.Delete("shop", "search")
	e.gone(search)
	e.gone("k8s-shop-search")

	for _, src := range []string{regSrc, fileSrc, kubeSrc} {
		waitMetric(t, e.base, `driftd_sd_last_refresh_successful{source="`+src+`"}`, 1)
	}

	// Each source fails: it keeps its targets and counts the failure.
	e.reg.Failing.Store(true)
	e.targetFile("one.yml", "- {name: f-one, url: [\n")
	e.kube.Fail(true)
	for _, failed := range [][]string{{`reason="http_status"`, `source="` + regSrc + `"`}, {`reason="config"`, `source="` + fileSrc + `"`}, {`reason="http_status"`, `source="` + kubeSrc + `"`}} {
		eventually(t, 20*time.Second, "a refresh failure "+strings.Join(failed, ","), func() bool {
			_, body := get(t, e.base+"/metrics")
			return sumMetric(body, "driftd_sd_refresh_failures_total", failed...) >= 1
		})
	}
	for _, src := range []string{regSrc, fileSrc, kubeSrc} {
		waitMetric(t, e.base, `driftd_sd_last_refresh_successful{source="`+src+`"}`, 0)
	}
	if !strings.Contains(e.log.String(), filepath.Join(e.dir, "targets", "one.yml")+":1") {
		t.Error("the bad target file is not reported with file:line")
	}
	time.Sleep(2 * sdSettle)
	for _, name := range []string{"f-one", crm2, "k8s-shop-crm"} {
		waitMetric(t, e.base, `driftd_probe_success{target="`+name+`"}`, 1)
	}
	waitMetric(t, e.base, `driftd_sd_targets{source="`+regSrc+`"}`, 1)
	waitMetric(t, e.base, `driftd_sd_targets{source="`+kubeSrc+`"}`, 1)
}

// sdSettle is longer than a refresh interval and the reconcile debounce.
const sdSettle = 1500 * time.Millisecond

// TestDiscoverOnce is config check --discover: each found target with its
// origin and credentials from sd_credentials only (printed nowhere), and
// a name taken by the config rejected with the reason.
func TestDiscoverOnce(t *testing.T) {
	e := newSDEnv(t)
	e.targetFile("a.yml", "- {name: f-one, url: \"https://mcp.corp.example/mcp\", baseline: first_seen}\n- {name: hand, url: \"http://127.0.0.1:2/mcp\", baseline: first_seen}\n")
	path := e.config("targets:\n  - {name: hand, url: \"http://127.0.0.1:1/mcp\", manifest: a.json}\ntarget_files: [\"targets/*.yml\"]\nsd_credentials:\n  - {url_prefix: \"https://mcp.corp.example/\", http_client: {authorization: {credentials: marker-s3cret}}}\n")
	out, err := daemon.DiscoverOnce(path, daemon.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(e.dir, "targets", "a.yml")
	for _, want := range []string{"origin: file:" + a, "name: f-one", "classification: unknown", "file:" + a + `: target "hand": name already used by config`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "marker-s3cret") {
		t.Error("a credential is printed")
	}
	// A broken file beside a good one: the error names it, and the good
	// file's targets are still listed.
	e.targetFile("b.yml", "- {name: f-two, url: [\n")
	out, err = daemon.DiscoverOnce(path, daemon.Options{})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(e.dir, "targets", "b.yml")+":1") {
		t.Errorf("a bad target file: %v", err)
	}
	if !strings.Contains(string(out), "name: f-one") {
		t.Errorf("the good targets are not listed beside the error:\n%s", out)
	}
}

// TestRegistryAdoptsLegacyState: state recorded under the name an earlier
// release gave a registry target (registry-SLUG) is taken over by its new
// name at start, so the upgrade does not re-baseline it.
func TestRegistryAdoptsLegacyState(t *testing.T) {
	e := newSDEnv(t)
	e.reg.Put("io.example/crm", "1.0.0", registrytest.Remote{Type: "streamable-http", URL: e.one.URL})
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: data}\nregistry_sd:\n  - {url: %q, refresh_interval: 1h}\n", e.reg.URL))
	name := discovery.RegistryName("io.example/crm", e.one.URL)
	legacy := discovery.LegacyRegistryName("io.example/crm", 0, 1)
	d, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="`+name+`"}`, 1)
	stop(t, d)
	dir := filepath.Join(e.dir, "data")
	baseline := func(file string) string {
		b, err := os.ReadFile(filepath.Join(dir, file+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Baseline json.RawMessage `json:"baseline"`
		}
		if err := json.Unmarshal(b, &st); err != nil || len(st.Baseline) == 0 {
			t.Fatalf("no baseline in %s: %v", file, err)
		}
		return string(st.Baseline)
	}
	recorded := baseline(name)

	// Make it look as the release before left it: the state under the
	// legacy name, none under the new one.
	for _, sub := range []string{"", "snapshots"} {
		b, err := os.ReadFile(filepath.Join(dir, sub, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte(`"target": "`+name+`"`), []byte(`"target": "`+legacy+`"`), 1)
		if err := os.WriteFile(filepath.Join(dir, sub, legacy+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, sub, name+".json")); err != nil {
			t.Fatal(err)
		}
	}
	_, base = e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="`+name+`"}`, 1)
	if !strings.Contains(e.log.String(), "state adopted from the target's previous name") {
		t.Fatalf("no adoption logged:\n%s", e.log.String())
	}
	if _, err := os.Stat(filepath.Join(dir, legacy+".json")); !os.IsNotExist(err) {
		t.Errorf("the legacy state file is still there: %v", err)
	}
	if got := baseline(name); got != recorded {
		t.Errorf("re-baselined: %s, was %s", got, recorded)
	}
}

// TestSlowRegistryDoesNotHoldTheListener: a registry that never answers
// does not delay the listener: the daemon is healthy at once, not ready
// until its sources have synced, and stops promptly.
func TestSlowRegistryDoesNotHoldTheListener(t *testing.T) {
	e := newSDEnv(t)
	release := make(chan struct{})
	hole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hole.Close()
	defer close(release)
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\"}\ntargets:\n  - {name: hand, url: %q, manifest: a.json}\nregistry_sd:\n  - {url: %q, timeout: 1m}\n", e.one.URL, hole.URL))
	start := time.Now()
	d, base := e.start(false)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Start took %v with a registry that never answers", took)
	}
	if code, _ := get(t, base+"/-/healthy"); code != http.StatusOK {
		t.Errorf("/-/healthy = %d", code)
	}
	if code, _ := get(t, base+"/-/ready"); code != http.StatusServiceUnavailable {
		t.Errorf("/-/ready = %d before the registry synced", code)
	}
	waitMetric(t, base, `driftd_probe_success{target="hand"}`, 1) // the written targets run meanwhile
	start = time.Now()
	stop(t, d)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Stop took %v", took)
	}
}

// TestDiscoveredTargetsBounded: past global.max_discovered_targets a
// discovered target is rejected, counted and listed, not run.
func TestDiscoveredTargetsBounded(t *testing.T) {
	e := newSDEnv(t)
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, "- {name: f%d, url: %q, baseline: first_seen}\n", i, e.one.URL)
	}
	e.targetFile("many.yml", b.String())
	path := e.config("global: {max_discovered_targets: 2}\ntarget_files: [\"targets/*.yml\"]\n")
	out, err := daemon.DiscoverOnce(path, daemon.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(out), "origin: file:"); got != 2 || strings.Count(string(out), "more than global.max_discovered_targets (2)") != 2 {
		t.Errorf("want 2 targets and 2 rejected past the bound:\n%s", out)
	}
}

// TestFIFOManifest: a manifest that is a FIFO holds neither start nor
// the target's runs (opening one waits for a writer): the target fails
// with reason config, at once, and the daemon stops.
func TestFIFOManifest(t *testing.T) {
	e := newEnv(t)
	if err := syscall.Mkfifo(filepath.Join(e.dir, "m.json"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\"}\ntargets:\n  - {name: piped, url: %q, manifest: m.json}\n", srv.URL))
	d, base := e.start(false)
	waitMetricAtLeast(t, base, `driftd_probe_failures_total{reason="config",target="piped"}`, 1)
	if code, _ := get(t, base+"/-/healthy"); code != http.StatusOK {
		t.Errorf("/-/healthy = %d", code)
	}
	stop(t, d)
}
