package daemon_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

func twoTargets(a, b string) string {
	return fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 5s, state_dir: state}\ntargets:\n  - {name: alpha, url: %q, manifest: a.json}\n  - {name: beta, url: %q, manifest: a.json}\n", a, b)
}

// TestReload: POST /-/reload and a file change add, remove and change
// targets; a removed target's series leave /metrics; an invalid config keeps
// the old one and sets driftd_config_last_reload_successful 0.
func TestReload(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("a.json", "a")
	e.config(twoTargets(srv.URL, srv.URL))
	_, base := e.start(true)
	waitMetric(t, base, `driftd_probe_success{target="beta"}`, 1)

	// POST /-/reload: beta removed, gamma added, alpha changed.
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 5s, state_dir: state}\ntargets:\n  - {name: alpha, url: %q, manifest: a.json, environment: staging}\n  - {name: gamma, url: %q, manifest: a.json}\n", srv.URL, srv.URL))
	if code, out := post(t, base+"/-/reload"); code != 200 {
		t.Fatalf("reload: %d %s", code, out)
	}
	body := waitMetric(t, base, `driftd_probe_success{target="gamma"}`, 1)
	eventually(t, 10*time.Second, "beta's series to go", func() bool {
		_, body = get(t, base+"/metrics")
		return !strings.Contains(body, `target="beta"`)
	})
	eventually(t, 10*time.Second, "alpha to be reclassified", func() bool {
		_, body = get(t, base+"/metrics")
		return strings.Contains(body, `classification="staging"`) && strings.Contains(body, `target="alpha"`)
	})
	waitMetric(t, base, "driftd_config_last_reload_successful", 1)

	// An invalid config: rejected, the old one keeps running.
	e.config("global: {schedule: \"not a schedule\"}\ntargets: []\n")
	if code, out := post(t, base+"/-/reload"); code != 500 || !strings.Contains(out, "schedule") {
		t.Fatalf("invalid reload: %d %s", code, out)
	}
	waitMetric(t, base, "driftd_config_last_reload_successful", 0)
	waitMetric(t, base, `driftd_probe_success{target="gamma"}`, 1)

	// A file change alone (no POST) reloads: the watch picks it up.
	e.config(twoTargets(srv.URL, srv.URL))
	waitMetric(t, base, `driftd_probe_success{target="beta"}`, 1)
	waitMetric(t, base, "driftd_config_last_reload_successful", 1)
	eventually(t, 10*time.Second, "gamma's series to go", func() bool {
		_, body = get(t, base+"/metrics")
		return !strings.Contains(body, `target="gamma"`)
	})
}

func TestLifecycleEndpointsNeedTheFlag(t *testing.T) {
	// Covered in internal/web; here only the daemon wiring: with the flag,
	// POST …/probe on an unknown target is 404.
	e := newEnv(t)
	e.manifest("a.json", "a")
	e.config("global: {state_dir: state}\ntargets: []\n")
	_, base := e.start(false)
	if code, _ := post(t, base+"/api/v1/targets/nope/probe"); code != 404 {
		t.Fatalf("probe of unknown target: %d", code)
	}
	// Ready once the start's restore and first sync are done: on a busy
	// machine that can be after the first request.
	eventually(t, 20*time.Second, "/-/ready to answer 200", func() bool {
		code, _ := get(t, base+"/-/ready")
		return code == 200
	})
}
