package faults_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestDaemonFIFOs: a FIFO matching target_files and a FIFO where a state
// file belongs. open(2) on a FIFO waits for a writer, and once held start
// before the listener came up, and SIGTERM could not stop it. The daemon
// must serve /-/healthy within 2 s of start, run the regular target file's
// target, and stop within 10 s of SIGTERM.
func TestDaemonFIFOs(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	for _, d := range []string{"targets", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "targets", "fifo.yml"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "state", "orders.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := mock(mcptest.Options{})(t)
	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	writeFile(t, filepath.Join(dir, "targets"), "good.yml", fmt.Appendf(nil, "- {name: filed, url: %q, baseline: first_seen}\n", url))
	config := writeFile(t, dir, "driftd.yml", fmt.Appendf(nil, `global: {schedule: "@every 1s", timeout: 2s, state_dir: state}
targets:
  - {name: orders, url: %q, manifest: declared.json}
target_files: ["targets/*.yml"]
`, url))

	start := time.Now()
	p := startDaemon(t, config)
	base, log := p.base, p.log
	for {
		if resp, err := http.Get(base + "/-/healthy"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("/-/healthy not served within 2 s of start:\n%.4000s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The strict mock wants a token these targets do not send: a run that
	// ended (in auth_required) is what shows they were scheduled.
	p.waitFor("runs of the targets beside the FIFOs", 20*time.Second, func(body string) bool {
		_, okA := seriesValue(body, `driftd_probe_success{target="orders"}`)
		_, okB := seriesValue(body, `driftd_probe_success{target="filed"}`)
		return okA && okB
	})
	stopping := time.Now()
	p.stop(syscall.SIGTERM)
	if took := time.Since(stopping); took > 10*time.Second {
		t.Errorf("driftd took %v to stop after SIGTERM, more than 10 s", took)
	}
}
