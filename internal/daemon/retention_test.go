package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// firstSeen reads the first_seen of every finding in target's state file.
func firstSeen(t *testing.T, dir, target string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "state", target+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Findings map[string]struct {
			FirstSeen string `json:"first_seen"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for fp, f := range st.Findings {
		out[fp] = f.FirstSeen
	}
	return out
}

// TestStateRetention: a target removed from the configuration keeps its
// state while global.state_retention has not passed, and resumes it when
// it comes back (its findings keep their first_seen); once the retention
// has passed, its state and snapshot files are removed, counted and
// logged.
func TestStateRetention(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("ab.json", "a", "b") // b is not served: a finding to keep
	cfg := func(retention string, targets ...string) {
		body := fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state, state_retention: %s}\ntargets:\n", retention)
		for _, name := range targets {
			body += fmt.Sprintf("  - {name: %s, url: %q, manifest: ab.json}\n", name, srv.URL)
		}
		e.config(body)
	}
	cfg("1h", "kept", "gone")
	d, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="gone"}`, 1)
	waitMetric(t, base, `driftd_probe_success{target="kept"}`, 1)
	before := firstSeen(t, e.dir, "gone")
	if len(before) == 0 {
		t.Fatal("no finding recorded for gone")
	}

	// Removed, within the retention: the files stay, through sweeps.
	cfg("1h", "kept")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "gone's series removed", func() bool {
		_, body := get(t, base+"/metrics")
		_, ok := metric(body, `driftd_probe_success{target="gone"}`)
		return !ok
	})
	// The reload's reconcile has swept (a 1h retention sweeps every 30
	// minutes besides): a file is never removed on first sight.
	for _, f := range []string{"state/gone.json", "state/snapshots/gone.json"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err != nil {
			t.Fatalf("%s removed within the retention: %v", f, err)
		}
	}
	// Back: it resumes its state.
	cfg("1h", "kept", "gone")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	waitMetricAtLeast(t, base, `driftd_probes_total{result="success",target="gone"}`, 1)
	if after := firstSeen(t, e.dir, "gone"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("gone came back with a fresh state: first_seen %v, was %v", after, before)
	}

	// Removed for longer than a 2s retention: its files go, counted.
	cfg("2s", "kept")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, base, "driftd_state_removed_total", 1)
	for _, f := range []string{"state/gone.json", "state/snapshots/gone.json"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s still there after the retention: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "state", "kept.json")); err != nil {
		t.Errorf("a configured target's state was removed: %v", err)
	}
	if !strings.Contains(e.log.String(), `level=INFO msg="state of a vanished target removed" target=gone`) {
		t.Errorf("no INFO line for the removal:\n%s", e.log.String())
	}
}
