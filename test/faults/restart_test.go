package faults_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

func hasValue(name string, want float64) func(string) bool {
	return func(body string) bool { v, ok := seriesValue(body, name); return ok && v == want }
}

// TestDaemonRestartKeepsSeries: `driftd run` with a page firing (a declared
// tool not served) is stopped, by SIGTERM and by SIGKILL, and started
// again on its state dir with a schedule that runs nothing during the
// test. Its first scrape already has the finding, probe_success, the
// target's info and its last run's time, marked driftd_target_restored 1;
// after SIGTERM the time is the last run's exactly, after SIGKILL that of
// the state file's last write.
func TestDaemonRestartKeepsSeries(t *testing.T) {
	needBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "token", []byte(marker+"\n"))
			writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"cancel_order","inputSchema":{"type":"object"}}]}`))
			url := mock(mcptest.Options{})(t)
			cfg := func(schedule string) string {
				return writeFile(t, dir, "driftd.yml", fmt.Appendf(nil, `global: {schedule: %q, timeout: 2s, state_dir: state}
targets:
  - name: orders
    url: %q
    manifest: declared.json
    http_client: {authorization: {type: Bearer, credentials_file: token}}
`, schedule, url))
			}
			finding := `driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders",tool="cancel_order"}`
			lastRun := `driftd_probe_last_run_timestamp_seconds{target="orders"}`
			first := startDaemon(t, cfg("@every 1s"))
			// Two runs: the second changes nothing and writes nothing.
			body := first.waitFor("two runs of orders", 20*time.Second, func(b string) bool {
				v, _ := seriesValue(b, `driftd_probes_total{result="success",target="orders"}`)
				_, ok := seriesValue(b, finding)
				return v >= 2 && ok
			})
			seen, _ := seriesValue(body, lastRun)
			first.stop(sig)

			second := startDaemon(t, cfg("@every 8760h"))
			after := second.waitFor("the restored run", 10*time.Second, hasValue(`driftd_target_restored{target="orders"}`, 1))
			for _, want := range []struct {
				series string
				value  float64
			}{{finding, 1}, {`driftd_probe_success{target="orders"}`, 1}, {`driftd_probes_total{result="success",target="orders"}`, 0}} {
				if v, ok := seriesValue(after, want.series); !ok || v != want.value {
					t.Errorf("after the restart %s = %v (present %v), want %v", want.series, v, ok, want.value)
				}
			}
			if !strings.Contains(after, `driftd_target_info{classification=`) {
				t.Error("no driftd_target_info after the restart")
			}
			restored, ok := seriesValue(after, lastRun)
			switch {
			case !ok:
				t.Error("no last-run time after the restart")
			case sig == syscall.SIGTERM && restored < seen:
				t.Errorf("restored last run %v is older than one scraped before the stop (%v)", restored, seen)
			}
			second.stop(syscall.SIGTERM)
		})
	}
}

// TestDaemonStateRetention: a target removed from the configuration by a
// SIGHUP reload loses its state and snapshot files once
// global.state_retention (2s here) has passed in the daemon's life,
// counted in driftd_state_removed_total; the configured one keeps its.
func TestDaemonStateRetention(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	url := mock(mcptest.Options{})(t)
	cfg := func(names ...string) string {
		body := "global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state, state_retention: 2s}\ntargets:\n"
		for _, n := range names {
			body += fmt.Sprintf("  - {name: %s, url: %q, manifest: declared.json, http_client: {authorization: {type: Bearer, credentials_file: token}}}\n", n, url)
		}
		return writeFile(t, dir, "driftd.yml", []byte(body))
	}
	p := startDaemon(t, cfg("kept", "gone"))
	p.waitFor("runs of both targets", 20*time.Second, func(b string) bool {
		return hasValue(`driftd_probe_success{target="kept"}`, 1)(b) && hasValue(`driftd_probe_success{target="gone"}`, 1)(b)
	})
	cfg("kept")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitFor("driftd_state_removed_total 1", 20*time.Second, hasValue("driftd_state_removed_total", 1))
	for _, f := range []string{"state/gone.json", "state/snapshots/gone.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "kept.json")); err != nil {
		t.Errorf("the configured target's state is gone: %v", err)
	}
	if !strings.Contains(p.log.String(), `msg="state of a vanished target removed" target=gone`) {
		t.Errorf("no log line for the removal:\n%.4000s", p.log.String())
	}
	p.stop(syscall.SIGTERM)
}
