package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/state"
)

const marker = "MARKER-daemon-5ecr3t"

// TestDaemonLifecycle is the end-to-end: several mock targets at
// @every 1s; findings become series; drift introduced mid-test opens a
// finding (counter and history), reverting it resolves it, and a restart on
// the same state_dir opens nothing again.
func TestDaemonLifecycle(t *testing.T) {
	e := newEnv(t)
	clean := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer clean.Close()
	drifting := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer drifting.Close()
	authed := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), BearerToken: marker})
	defer authed.Close()
	e.manifest("ab.json", "a", "b")
	e.manifest("a.json", "a")
	e.write("token", marker)
	e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - {name: clean, url: %q, manifest: ab.json, labels: {team: payments}}
  - {name: drifting, url: %q, manifest: ab.json}
  - name: authed
    url: %q
    manifest: a.json
    http_client:
      authorization: {type: Bearer, credentials_file: token}
`, clean.URL, drifting.URL, authed.URL))
	d, base := e.start(false)

	body := waitMetric(t, base, `driftd_probe_success{target="clean"}`, 1)
	waitMetric(t, base, `driftd_probe_success{target="authed"}`, 1)
	waitMetric(t, base, `driftd_probe_success{target="drifting"}`, 1)
	for _, want := range []string{
		`driftd_findings{rule="MCP-AUTH-ANONYMOUS-LIST",severity="INFO",target="clean"}`,
		`driftd_tools{source="served",target="clean"}`,
		`driftd_target_info{classification="local",protocol_revision="2026-07-28",server_name="mcptest",server_version="0.0.0",target="clean",team="payments"}`,
		`driftd_probe_interval_seconds{target="clean"}`,
	} {
		if _, ok := metric(body, want); !ok {
			t.Errorf("missing series %s", want)
		}
	}

	drifting.SetTools(mockTools("a"))
	opened := `driftd_findings_opened_total{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="drifting"}`
	body = waitMetric(t, base, opened, 1)
	if _, ok := metric(body, `driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="drifting",tool="b"}`); !ok {
		t.Error("no driftd_finding series naming the missing tool")
	}
	var history []state.Event
	_, h := get(t, base+"/api/v1/targets/drifting/history")
	if err := json.Unmarshal(apiData(h), &history); err != nil {
		t.Fatal(err)
	}
	if !hasEvent(history, "opened", "MCP-DRIFT-TOOL-MISSING", "b") || !hasEvent(history, "served_change", "", "b") {
		t.Errorf("history lacks the opened finding or the served change: %s", h)
	}

	var rep struct {
		ServedChanges []struct{ Change, Tool string } `json:"served_changes"`
	}
	eventually(t, 10*time.Second, "served_changes in the report", func() bool {
		_, r := get(t, base+"/api/v1/targets/drifting")
		json.Unmarshal(apiData(r), &rep)
		return len(rep.ServedChanges) > 0
	})
	if rep.ServedChanges[0].Change != "CHG-TOOL-REMOVED" || rep.ServedChanges[0].Tool != "b" {
		t.Errorf("served_changes = %+v", rep.ServedChanges)
	}
	// A failed run compared nothing: the finding stays on /metrics.
	drifting.SetOptions(func(o *mcptest.Options) { o.Fault = mcptest.FaultStatus500 })
	waitMetric(t, base, `driftd_probe_success{target="drifting"}`, 0)
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="drifting",tool="b"} 1`) {
		t.Error("a failed run made the active finding vanish from /metrics")
	}
	// The scheduler's lateness reaches /metrics (DESIGN §14).
	if _, body := get(t, base+"/metrics"); func() bool {
		v, ok := metric(body, "driftd_scheduler_start_lateness_seconds_count")
		return !ok || v < 1
	}() {
		t.Error("driftd_scheduler_start_lateness_seconds has no observations after runs")
	}
	drifting.SetOptions(func(o *mcptest.Options) { o.Fault = mcptest.FaultNone })
	drifting.SetTools(mockTools("a", "b"))
	waitMetric(t, base, `driftd_findings_resolved_total{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="drifting"}`, 1)

	e.nowhere(d, base, []string{"/", "/targets/clean", "/targets/authed", "/config", "/api/v1/targets", "/api/v1/targets/authed", "/api/v1/targets/authed/history", "/metrics"}, marker, "the secret")

	// Restart on the same state_dir: nothing is opened again.
	_, base = e.start(false)
	body = waitMetricAtLeast(t, base, `driftd_probes_total{result="success",target="drifting"}`, 2)
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "driftd_findings_opened_total{") && !strings.HasSuffix(line, " 0") {
			t.Errorf("restart re-opened a finding: %s", line)
		}
	}
}

func hasEvent(h []state.Event, kind, rule, tool string) bool {
	for _, e := range h {
		if e.Kind == kind && (rule == "" || e.Rule == rule) && e.Tool == tool {
			return true
		}
	}
	return false
}

// TestSlowTargetNeverOverlaps: a run longer than the schedule is never
// doubled, and the skipped runs are counted.
func TestSlowTargetNeverOverlaps(t *testing.T) {
	e := newEnv(t)
	slow := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), Delay: 1500 * time.Millisecond})
	defer slow.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 20s, state_dir: state}\ntargets:\n  - {name: slow, url: %q, manifest: a.json}\n", slow.URL))
	_, base := e.start(false)
	eventually(t, 30*time.Second, "a skipped run", func() bool {
		_, body := get(t, base+"/metrics")
		v, _ := metric(body, `driftd_probe_skipped_total{target="slow"}`)
		return v >= 1
	})
	// The mock logs every request; with no overlap, server/discover
	// requests never arrive while another run's are in flight. Count
	// starts: at most one discover per run.
	var starts, runs int
	for _, r := range slow.Requests() {
		if r.Method == "server/discover" {
			starts++
		}
	}
	_, body := get(t, base+"/metrics")
	v, _ := metric(body, `driftd_probes_total{result="success",target="slow"}`)
	runs = int(v)
	if starts > runs+1 {
		t.Fatalf("%d runs started but only %d finished: runs overlapped", starts, runs)
	}
}
