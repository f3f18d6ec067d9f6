package daemon_test

import (
	"fmt"
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
	e.nowhere(d, base, []string{"/", "/targets/ok", "/targets/redirect", "/targets/down", "/config",
		"/api/v1/targets", "/api/v1/targets/ok", "/api/v1/targets/redirect", "/api/v1/targets/down",
		"/api/v1/targets/down/history", "/metrics"}, marker, "the URL's secret")
}
