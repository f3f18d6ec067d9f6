package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestOutageOnEverySurface is issue 16's outage: a target with a finding,
// then its server dies. /metrics, the API, the index, the target page and
// the log all say the same: failing since the first failed run, the
// finding still active, stale, last seen at the last run that compared.
func TestOutageOnEverySurface(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	e.manifest("ab.json", "a", "b")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state}\ntargets:\n  - {name: orders, url: %q, manifest: ab.json}\n", srv.URL))
	_, base := e.start(false)
	waitMetric(t, base, `driftd_findings{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders"}`, 1)
	srv.Close()
	waitMetric(t, base, `driftd_probe_success{target="orders"}`, 0)

	// /metrics keeps the finding: an outage resolves nothing.
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders",tool="b"} 1`) {
		t.Error("/metrics lost the finding during the outage")
	}
	// The API: the row and the report agree with /metrics.
	_, body := get(t, base+"/api/v1/targets")
	var rows []struct {
		Name, Health, Drift, Worst, Reason string
		FailingSince                       *time.Time `json:"failing_since"`
		LastCompared                       *time.Time `json:"last_compared"`
		Stale                              bool
		Findings                           map[string]int
	}
	if err := json.Unmarshal(apiData(body), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v: %s", err, body)
	}
	row := rows[0]
	if row.Health != "failing" || row.FailingSince == nil || row.Reason == "" || row.Drift != "drifted" || row.Worst != "ERROR" ||
		!row.Stale || row.Findings["ERROR"] != 1 || row.Findings["INFO"] != 1 || row.LastCompared == nil || !row.LastCompared.Before(*row.FailingSince) {
		t.Errorf("targets row during the outage: %+v", row)
	}
	_, body = get(t, base+"/api/v1/targets/orders")
	var rep struct {
		Success bool
		Status  struct {
			Health string
			Stale  bool
		}
		Active []struct {
			Rule, Tool string
			Stale      bool
			LastSeen   *time.Time `json:"last_seen"`
			Message    string
		} `json:"active_findings"`
	}
	if err := json.Unmarshal(apiData(body), &rep); err != nil {
		t.Fatal(err)
	}
	var missing int
	for _, f := range rep.Active {
		if f.Rule == "MCP-DRIFT-TOOL-MISSING" && f.Tool == "b" && f.Stale && f.LastSeen != nil && f.Message != "" {
			missing++
		}
	}
	if rep.Success || rep.Status.Health != "failing" || !rep.Status.Stale || len(rep.Active) != 2 || missing != 1 {
		t.Errorf("report during the outage: %s", body)
	}
	// The pages.
	_, page := get(t, base+"/targets/orders")
	for _, want := range []string{"The last run failed", "Failing since", "could not be re-checked", ">b<", "stale", "MCP-DRIFT-TOOL-MISSING"} {
		if !strings.Contains(page, want) {
			t.Errorf("target page lacks %q", want)
		}
	}
	if strings.Contains(page, "No active findings") {
		t.Error("target page says no findings during the outage")
	}
	_, index := get(t, base+"/")
	for _, want := range []string{"failing", "drifted · ERROR", "stale"} {
		if !strings.Contains(index, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	// The log says when the streak began.
	if !strings.Contains(e.log.String(), "failing_since=") {
		t.Error(`no "run failed" line with failing_since`)
	}
}

// TestMissingManifestFailsAtOnce: a target whose manifest is missing is
// an ERROR line by the time Start returns, and a failed target (reason
// config) at once, long before its schedule (an hour) would run it.
func TestMissingManifestFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.config("global: {schedule: \"@every 1h\", timeout: 2s, state_dir: state}\ntargets:\n  - {name: orders, url: \"http://127.0.0.1:1/mcp\", manifest: nope.json}\n")
	_, base := e.start(false)
	if log := e.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "manifest unreadable") {
		t.Errorf("no ERROR line when Start returned:\n%s", log)
	}
	body := waitMetric(t, base, `driftd_probe_failures_total{reason="config",target="orders"}`, 1)
	if v, ok := metric(body, `driftd_probe_success{target="orders"}`); !ok || v != 0 {
		t.Errorf("driftd_probe_success = %v, %v", v, ok)
	}
	_, rows := get(t, base+"/api/v1/targets")
	if !strings.Contains(rows, `"health": "failing"`) || !strings.Contains(rows, `"reason": "config"`) {
		t.Errorf("targets row: %s", rows)
	}
}
