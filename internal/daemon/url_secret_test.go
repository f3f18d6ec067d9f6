package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestURLQuerySecretNeverShown: a credential in a target URL's query
// reaches no page, API answer, metric, log line or state file; the key
// name still shows where the URL does.
func TestURLQuerySecretNeverShown(t *testing.T) {
	e := newEnv(t)
	ok := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer ok.Close()
	redirect := mcptest.NewServer(mcptest.Options{Fault: mcptest.FaultRedirect})
	defer redirect.Close()
	e.manifest("a.json", "a")
	q := "?api_key=" + marker
	e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - {name: ok, url: %q, manifest: a.json}
  - {name: redirect, url: %q, manifest: a.json}
  - {name: down, url: %q, manifest: a.json}
`, ok.URL+q, redirect.URL+q, "http://127.0.0.1:1/mcp"+q))
	d, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="ok"}`, 1)
	waitMetric(t, base, `driftd_probe_success{target="redirect"}`, 0)
	waitMetric(t, base, `driftd_probe_success{target="down"}`, 0)

	if _, out := get(t, base+"/api/v1/targets/ok"); !strings.Contains(out, `api_key=\u003credacted\u003e`) && !strings.Contains(out, "api_key=<redacted>") {
		t.Errorf("the report's base_url lost the key name or was not redacted:\n%s", out)
	}
	for _, path := range []string{"/", "/targets/ok", "/targets/redirect", "/targets/down", "/config",
		"/api/v1/targets", "/api/v1/targets/ok", "/api/v1/targets/redirect", "/api/v1/targets/down",
		"/api/v1/targets/down/history", "/metrics"} {
		code, out := get(t, base+path)
		if code != 200 {
			t.Errorf("GET %s: %d", path, code)
		}
		if strings.Contains(out, marker) {
			t.Errorf("GET %s shows the URL's secret", path)
		}
	}
	stop(t, d)
	if strings.Contains(e.log.String(), marker) {
		t.Error("a log line contains the URL's secret")
	}
	files, _ := filepath.Glob(filepath.Join(e.dir, "state", "*"))
	if len(files) == 0 {
		t.Fatal("no state files written")
	}
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), marker) {
			t.Errorf("state file %s contains the URL's secret", f)
		}
	}
}
