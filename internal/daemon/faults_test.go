package daemon_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/metrics"
)

// TestCorruptStateStartsFresh: a corrupt state file is moved aside and
// counted; the target runs anyway.
func TestCorruptStateStartsFresh(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("a.json", "a")
	os.MkdirAll(filepath.Join(e.dir, "state"), 0o750)
	e.write("state/one.json", `{"target":"one","version":1,"findings":{`)
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state}\ntargets:\n  - {name: one, url: %q, manifest: a.json}\n", srv.URL))
	_, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="one"}`, 1)
	waitMetric(t, base, "driftd_state_read_failures_total", 1)
	moved, _ := filepath.Glob(filepath.Join(e.dir, "state", "one.json.corrupt-*"))
	if len(moved) != 1 {
		t.Fatalf("corrupt file not moved aside: %v", moved)
	}
}

// TestMissingManifestIsATargetFailure: the daemon keeps running; the
// target fails with reason config.
func TestMissingManifestIsATargetFailure(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state}\ntargets:\n  - {name: good, url: %q, manifest: a.json}\n  - {name: bad, url: %q, manifest: nope.json}\n", srv.URL, srv.URL))
	_, base := e.start(false)
	// At least one: the target fails every second, and a loaded machine
	// can poll after the second failure.
	eventually(t, 20*time.Second, "a config failure of bad", func() bool {
		_, body := get(t, base+"/metrics")
		v, _ := metric(body, `driftd_probe_failures_total{reason="config",target="bad"}`)
		return v >= 1
	})
	waitMetric(t, base, `driftd_probe_success{target="good"}`, 1)
	if srv.Count("server/discover") == 0 {
		t.Fatal("the good target was not probed")
	}
}

// TestStateWriteFailureIsCounted: an unwritable state_dir is counted and
// probing goes on.
func TestStateWriteFailureIsCounted(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state}\ntargets:\n  - {name: one, url: %q, manifest: a.json}\n", srv.URL))
	_, base := e.start(false)
	// Replace the state directory by a file: every write now fails.
	os.RemoveAll(filepath.Join(e.dir, "state"))
	e.write("state", "not a directory")
	eventually(t, 20*time.Second, "a counted state write failure", func() bool {
		srv.SetTools(mockTools("a", fmt.Sprint(len(srv.Requests())))) // keep changing, so every run must write
		_, body := get(t, base+"/metrics")
		v, _ := metric(body, "driftd_state_write_failures_total")
		return v >= 1
	})
	waitMetric(t, base, `driftd_probe_success{target="one"}`, 1)
}

// TestWebConfigFile: --web.config.file puts driftd's own endpoints behind
// exporter-toolkit basic auth.
func TestWebConfigFile(t *testing.T) {
	e := newEnv(t)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	e.write("web.yml", "basic_auth_users:\n  ops: "+string(hash)+"\n")
	e.config("global: {state_dir: state}\ntargets: []\n")
	d, err := daemon.New(daemon.Options{ConfigFile: filepath.Join(e.dir, "driftd.yml"), ListenAddresses: []string{"127.0.0.1:0"},
		WebConfigFile: filepath.Join(e.dir, "web.yml"), Logger: slog.New(slog.DiscardHandler), Build: metrics.BuildInfo{Version: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer stop(t, d)
	url := "http://" + d.Addrs()[0] + "/metrics"
	if code, _ := get(t, url); code != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d", code)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.SetBasicAuth("ops", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("with credentials: %d", resp.StatusCode)
	}
}

// TestCollectorDownIsCountedNotFatal: with otlp_endpoint pointing at
// nothing, runs succeed and failed exports are counted.
func TestCollectorDownIsCountedNotFatal(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	dead := mcptest.NewServer(mcptest.Options{})
	deadURL := dead.BaseURL()
	dead.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state, otlp_endpoint: %q}\ntargets:\n  - {name: one, url: %q, manifest: a.json}\n", deadURL, srv.URL))
	_, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="one"}`, 1)
	eventually(t, 20*time.Second, "a counted export failure", func() bool {
		_, body := get(t, base+"/metrics")
		v, _ := metric(body, "driftd_otlp_export_failures_total")
		return v >= 1
	})
	if n := strings.Count(e.log.String(), "trace export failed"); n != 1 {
		t.Errorf("%d export warnings logged, want 1 (rate limited)", n)
	}
}
