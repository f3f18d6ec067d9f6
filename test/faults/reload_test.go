package faults_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestDaemonReloadBrokenManifest: `driftd run`, its manifest broken on disk
// and then SIGHUP. The reload is refused (driftd_config_last_reload_successful
// 0, an ERROR line at the config's line), and the target keeps being
// checked against the manifest it read before: its runs succeed and none
// fails with reason config.
func TestDaemonReloadBrokenManifest(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	config := writeFile(t, dir, "driftd.yml", fmt.Appendf(nil, `global: {schedule: "@every 1s", timeout: 2s, state_dir: state}
targets:
  - name: orders
    url: %q
    manifest: declared.json
    http_client: {authorization: {type: Bearer, credentials_file: token}}
`, mock(mcptest.Options{})(t)))

	p := startDaemon(t, config)
	base, log := p.base, p.log
	waitFor := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(within); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s after %v:\n%.4000s", what, within, log.String())
			}
		}
	}
	series := func(name string) (float64, bool) { return seriesValue(get(base+"/metrics").body, name) }
	waitFor("success of orders", 20*time.Second, func() bool {
		v, ok := series(`driftd_probe_success{target="orders"}`)
		return ok && v == 1
	})

	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a",`))
	broke := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("driftd_config_last_reload_successful 0", 10*time.Second, func() bool {
		v, ok := series("driftd_config_last_reload_successful")
		return ok && v == 0
	})
	waitFor("an ERROR line naming the manifest's config line", 5*time.Second, func() bool {
		for line := range strings.Lines(log.String()) {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "configuration reload failed") &&
				strings.Contains(line, "driftd.yml:5: targets[0].manifest: ") {
				return true
			}
		}
		return false
	})

	// Runs go on against the manifest read before the break.
	var last struct {
		StartedAt time.Time `json:"started_at"`
		Success   bool      `json:"success"`
	}
	waitFor("a run started after the break", 20*time.Second, func() bool {
		r := get(base + "/api/v1/targets/orders")
		return r.err == nil && json.Unmarshal(apiData(r.body), &last) == nil && last.StartedAt.After(broke)
	})
	if !last.Success {
		t.Errorf("the run after the break failed: %s", get(base+"/api/v1/targets/orders").body)
	}
	if v, ok := series(`driftd_probe_failures_total{reason="config",target="orders"}`); ok && v > 0 {
		t.Errorf("%v runs failed with reason config", v)
	}
	if page := get(base + "/").body; !strings.Contains(page, "configuration reload failed") {
		t.Error("the status page shows no reload banner")
	}
}

// seriesValue is the value of the series whose line starts with name (as
// exposed, labels included), and whether it is there.
func seriesValue(body, name string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
