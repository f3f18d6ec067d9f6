package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/web"
)

// restoredFamilies are the per-target gauges a restart publishes from the
// saved run.
var restoredFamilies = []string{"driftd_finding", "driftd_findings", "driftd_probe_success", "driftd_probe_last_run_timestamp_seconds",
	"driftd_probe_last_success_timestamp_seconds", "driftd_probe_last_duration_seconds", "driftd_target_info"}

// seriesOf returns the lines of body of those families for target.
func seriesOf(body, target string, families []string) []string {
	var out []string
	for line := range strings.SplitSeq(body, "\n") {
		for _, f := range families {
			if strings.HasPrefix(line, f+"{") && strings.Contains(line, `target="`+target+`"`) {
				out = append(out, line)
			}
		}
	}
	return out
}

// trigger starts a run of target now (POST …/probe, as JSON: a request
// no page can forge).
func trigger(t *testing.T, base, target string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/v1/targets/"+target+"/probe", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.RequestHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("probe %s: %d", target, resp.StatusCode)
	}
}

// TestRestartKeepsSeries is a real restart in the middle of a firing
// MCPToolMissing page: the daemon runs once against the strict mock,
// which does not serve a declared tool, is stopped, and is started again
// on the same state dir with a schedule so long that no run happens. The
// restored series are the ones scraped before the stop, marked restored,
// and the counters start at 0. deploy/prometheus/alerts_test.yml's
// restart case is built from these scrapes (DRIFTD_RESTART_SCRAPES=DIR
// writes them there).
func TestRestartKeepsSeries(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("search_orders")})
	defer srv.Close()
	e.manifest("orders.json", "search_orders", "cancel_order")
	// A year between runs: the scheduler's first run falls at a random
	// offset within it, not during this test; the runs are triggered.
	cfg := fmt.Sprintf("global: {schedule: \"@every 8760h\", state_dir: state}\ntargets:\n  - {name: orders, url: %q, manifest: orders.json, environment: production}\n", srv.URL)
	e.config(cfg)
	d, base := e.start(false)
	trigger(t, base, "orders")
	waitMetric(t, base, `driftd_probes_total{result="success",target="orders"}`, 1)
	// A second run changes nothing, so it writes nothing: its times reach
	// the state file at the stop.
	trigger(t, base, "orders")
	before := waitMetric(t, base, `driftd_probes_total{result="success",target="orders"}`, 2)
	if _, ok := metric(before, `driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders",tool="cancel_order"}`); !ok {
		t.Fatalf("no MCPToolMissing series before the restart:\n%s", before)
	}
	stop(t, d)
	requests := len(srv.Requests())

	_, base = e.start(false)
	_, after := get(t, base+"/metrics")
	if got, want := seriesOf(after, "orders", restoredFamilies), seriesOf(before, "orders", restoredFamilies); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("restored series differ from those before the restart\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, want := range []struct {
		series string
		value  float64
	}{
		{`driftd_target_restored{target="orders"}`, 1},
		{`driftd_probes_total{result="success",target="orders"}`, 0},
		{`driftd_probes_total{result="failure",target="orders"}`, 0},
	} {
		if v, ok := metric(after, want.series); !ok || v != want.value {
			t.Errorf("%s = %v (present %v), want %v", want.series, v, ok, want.value)
		}
	}
	// Counters created at their first event have had none since start.
	for _, absent := range []string{`driftd_probe_failures_total{`, `driftd_probe_skipped_total{`} {
		if strings.Contains(after, absent) {
			t.Errorf("%s before any run since start", absent)
		}
	}
	if n := len(srv.Requests()); n != requests {
		t.Fatalf("a run happened after the restart (%d requests, %d before): the restored series were replaced", n, requests)
	}
	if dir := os.Getenv("DRIFTD_RESTART_SCRAPES"); dir != "" {
		os.WriteFile(filepath.Join(dir, "before.prom"), []byte(before), 0o644)
		os.WriteFile(filepath.Join(dir, "after.prom"), []byte(after), 0o644)
	}

	// The first run since the restart clears the mark.
	trigger(t, base, "orders")
	body := waitMetric(t, base, `driftd_probes_total{result="success",target="orders"}`, 1)
	if _, ok := metric(body, `driftd_target_restored{target="orders"}`); ok {
		t.Error("driftd_target_restored still exported after the first run since start")
	}
}

// TestRestartOlderStateFile: the first restart after an upgrade reads
// state files written before runs were saved (no last_run). The pages'
// series still hold: the findings and probe_success are restored; the
// times and driftd_target_info wait for the first run.
func TestRestartOlderStateFile(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("search_orders")})
	defer srv.Close()
	e.manifest("orders.json", "search_orders", "cancel_order")
	e.config(fmt.Sprintf("global: {schedule: \"@every 8760h\", state_dir: state}\ntargets:\n  - {name: orders, url: %q, manifest: orders.json}\n", srv.URL))
	d, base := e.start(false)
	trigger(t, base, "orders")
	waitMetric(t, base, `driftd_probe_success{target="orders"}`, 1)
	stop(t, d)
	path := filepath.Join(e.dir, "state", "orders.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]json.RawMessage
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if _, ok := file["last_run"]; !ok {
		t.Fatal("the state file saved no last_run")
	}
	delete(file, "last_run")
	b, _ = json.Marshal(file)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	_, base = e.start(false)
	_, body := get(t, base+"/metrics")
	for _, want := range []string{
		`driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders",tool="cancel_order"}`,
		`driftd_probe_success{target="orders"}`,
		`driftd_target_restored{target="orders"}`,
	} {
		if v, ok := metric(body, want); !ok || v != 1 {
			t.Errorf("%s = %v (present %v), want 1", want, v, ok)
		}
	}
	if _, ok := metric(body, `driftd_probe_last_run_timestamp_seconds{target="orders"}`); ok {
		t.Error("a last-run time published from a file that saved none")
	}
}
