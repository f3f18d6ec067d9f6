package metrics

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/state"
)

// targetLines are the lines of a target's series in an exposition whose
// family is one of names' (the families a restore keeps).
func targetLines(b []byte, target string, names ...string) []string {
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if !strings.Contains(line, `target="`+target+`"`) {
			continue
		}
		for _, n := range names {
			if strings.HasPrefix(line, n+"{") {
				out = append(out, line)
			}
		}
	}
	return out
}

var restoredFamilies = []string{"driftd_finding", "driftd_findings", "driftd_probe_success", "driftd_probe_last_run_timestamp_seconds",
	"driftd_probe_last_success_timestamp_seconds", "driftd_probe_last_duration_seconds", "driftd_target_info"}

// A restart publishes the saved run: the same gauges as before it, marked
// restored, counters at 0, until the target's first run clears the mark
// (the series goes).
func TestRestoreKeepsGauges(t *testing.T) {
	missing := catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "cancel_order"}
	for _, tc := range []struct {
		name string
		runs []bool // the runs before the restart, success or not
	}{{"up", []bool{true}}, {"failing after a success", []bool{true, false}}, {"never up", []bool{false}}} {
		t.Run(tc.name, func(t *testing.T) {
			targets := []Target{{Name: "orders", Labels: map[string]string{"team": "payments"}, SeriesLimit: 10, Ignores: 1}}
			reg := prometheus.NewPedanticRegistry()
			before := New(reg, BuildInfo{}, Options{})
			before.SetTargets(targets)
			run := state.Loaded(state.NewState("orders"))
			var rec *state.LastRun
			for i, ok := range tc.runs {
				rep := fixedReport("orders", ok, missing)
				rep.StartedAt = rep.StartedAt.Add(time.Duration(i) * time.Minute)
				run = state.Apply(run, rep, rep.StartedAt, 0, nil)
				rec = state.NewLastRun(run.Report, rec)
				run.State = run.State.Record(rec)
				before.Observe(run)
			}
			want := targetLines(exposition(t, before, reg), "orders", restoredFamilies...)

			reg2 := prometheus.NewPedanticRegistry()
			after := New(reg2, BuildInfo{}, Options{})
			after.SetTargets(targets)
			after.Restore(state.Loaded(run.State))
			b := exposition(t, after, reg2)
			parse(t, b)
			got := targetLines(b, "orders", restoredFamilies...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("restored series differ\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, must := range []string{`driftd_target_restored{target="orders"} 1`, `driftd_probes_total{result="success",target="orders"} 0`,
				`driftd_probes_total{result="failure",target="orders"} 0`} {
				if !bytes.Contains(b, []byte(must+"\n")) {
					t.Errorf("missing %s", must)
				}
			}
			// The counters of this process: those created at their first
			// event have had none.
			for _, not := range []string{"driftd_probe_failures_total{", "driftd_probe_skipped_total{"} {
				if bytes.Contains(b, []byte(not)) {
					t.Errorf("%s before any run since start:\n%s", not, b)
				}
			}
			if bytes.Contains(b, []byte("driftd_tools{")) || bytes.Contains(b, []byte("driftd_findings_ignored{")) {
				t.Errorf("a listing's counts are not saved, yet restored:\n%s", b)
			}
			rep := fixedReport("orders", true, missing)
			rep.StartedAt = rep.StartedAt.Add(time.Hour)
			after.Observe(state.Apply(state.Loaded(run.State), rep, rep.StartedAt, 0, nil))
			if b := exposition(t, after, reg2); bytes.Contains(b, []byte(`driftd_target_restored{`)) || !bytes.Contains(b, []byte(`driftd_probes_total{result="success",target="orders"} 1`+"\n")) {
				t.Errorf("the first run since start did not clear the mark:\n%s", b)
			}
		})
	}
}

// A state without a saved run (a file written before LastRun existed)
// publishes nothing until the first run, as before.
func TestRestoreWithoutSavedRun(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, BuildInfo{}, Options{})
	m.SetTargets([]Target{{Name: "orders", SeriesLimit: 10}})
	m.Restore(state.Loaded(state.NewState("orders")))
	if b := exposition(t, m, reg); bytes.Contains(b, []byte("driftd_probe_success{")) || bytes.Contains(b, []byte("driftd_target_restored{")) {
		t.Errorf("published a run that was never saved:\n%s", b)
	}
}

// A target dropped by one reload and added back by the next, its runtime
// kept meanwhile, publishes its last run of this process again at once,
// not counted again and not marked restored.
func TestRestoreReAdded(t *testing.T) {
	targets := []Target{{Name: "orders", SeriesLimit: 10}}
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, BuildInfo{}, Options{})
	m.SetTargets(targets)
	rep := fixedReport("orders", true, catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "cancel_order"})
	run := state.Apply(state.Loaded(state.NewState("orders")), rep, rep.StartedAt, 0, nil)
	run.State = run.State.Record(state.NewLastRun(run.Report, nil))
	m.Observe(run)
	want := targetLines(exposition(t, m, reg), "orders", append(restoredFamilies, "driftd_tools")...)
	m.SetTargets(nil)
	m.SetTargets(targets)
	m.Restore(run)
	b := exposition(t, m, reg)
	if got := targetLines(b, "orders", append(restoredFamilies, "driftd_tools")...); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("re-added target's series differ\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !bytes.Contains(b, []byte(`driftd_probes_total{result="success",target="orders"} 0`+"\n")) {
		t.Errorf("missing driftd_probes_total{result=\"success\",target=\"orders\"} 0")
	}
	if bytes.Contains(b, []byte(`driftd_target_restored{`)) {
		t.Errorf("a run of this process published again is marked restored:\n%s", b)
	}
}

// A state file written before runs were saved still restores the
// findings and probe_success: an upgrade's first restart keeps the
// pages too. It has no times, server or revision to publish.
func TestRestoreOlderStateFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failing bool
		success string
	}{{"up", false, "1"}, {"failing", true, "0"}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := fixedReport("orders", true, catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "cancel_order"})
			st := *state.Apply(state.Loaded(state.NewState("orders")), rep, rep.StartedAt, 0, nil).State // no LastRun: as an older file
			if tc.failing {
				st.FailingSince = rep.StartedAt.Add(time.Hour)
			}
			reg := prometheus.NewPedanticRegistry()
			m := New(reg, BuildInfo{}, Options{})
			m.SetTargets([]Target{{Name: "orders", SeriesLimit: 10}})
			m.Restore(state.Loaded(&st))
			b := exposition(t, m, reg)
			parse(t, b)
			for _, must := range []string{
				`driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders",tool="cancel_order"} 1`,
				`driftd_probe_success{target="orders"} ` + tc.success,
				`driftd_target_restored{target="orders"} 1`,
			} {
				if !bytes.Contains(b, []byte(must+"\n")) {
					t.Errorf("missing %s", must)
				}
			}
			for _, not := range []string{"driftd_probe_last_run_timestamp_seconds{", "driftd_probe_last_success_timestamp_seconds{", "driftd_probe_last_duration_seconds{", "driftd_target_info{"} {
				if bytes.Contains(b, []byte(not)) {
					t.Errorf("an older file has no %s, yet it is published", not)
				}
			}
		})
	}
}
