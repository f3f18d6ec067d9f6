package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/state"
)

// openedCounts are driftd_findings_opened_total's values of target by
// rule, and their creation times, as an OpenMetrics scraper reads them.
func openedCounts(t *testing.T, m *Metrics, reg *prometheus.Registry, target string) (map[string]float64, map[string]time.Time) {
	t.Helper()
	body, ct := scrape(t, m.Handler(reg), openMetrics)
	fams := decode(t, body, ct)
	n, created := map[string]float64{}, map[string]time.Time{}
	for _, s := range fams["driftd_findings_opened_total"].GetMetric() {
		var rule, tgt string
		for _, l := range s.GetLabel() {
			switch l.GetName() {
			case "rule":
				rule = l.GetValue()
			case "target":
				tgt = l.GetValue()
			}
		}
		if tgt == target {
			n[rule] = s.GetCounter().GetValue()
			created[rule] = s.GetCounter().GetCreatedTimestamp().AsTime()
		}
	}
	return n, created
}

// The findings a target has on its first run in a new state dir are not
// news: their opened counters are created at 0, at that run. A finding
// that opens later counts 1; after a restart on the saved state the same
// findings count nothing, and the counters are created again only by an
// opening.
func TestOpenedInitialFindingsCreatedAtZero(t *testing.T) {
	missing := catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "refund"}
	undeclared := catalogue.Finding{Rule: catalogue.DriftToolUndeclared, Severity: catalogue.Warn, Tool: "debug"}
	schema := catalogue.Finding{Rule: catalogue.DriftSchema, Severity: catalogue.Error, Tool: "search"}
	targets := []Target{{Name: "orders", SeriesLimit: 10}}
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Load("orders")
	if err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewPedanticRegistry()
	m := New(reg, BuildInfo{}, Options{})
	m.now = func() time.Time { return clock }
	m.SetTargets(targets)
	rep := fixedReport("orders", true, missing, undeclared)
	run := state.Apply(state.Loaded(st), rep, rep.StartedAt, 0, nil)
	m.Observe(run)
	n, created := openedCounts(t, m, reg, "orders")
	if len(n) != 2 || n[catalogue.DriftToolMissing] != 0 || n[catalogue.DriftToolUndeclared] != 0 || !created[catalogue.DriftToolMissing].Equal(clock) {
		t.Fatalf("first run: opened %v created %v; want both rules at 0, created %v", n, created, clock)
	}

	later := clock.Add(5 * time.Minute)
	m.now = func() time.Time { return later }
	rep2 := fixedReport("orders", true, missing, undeclared, schema)
	rep2.StartedAt = rep.StartedAt.Add(5 * time.Minute)
	run2 := state.Apply(run, rep2, rep2.StartedAt, 0, nil)
	m.Observe(run2)
	n, created = openedCounts(t, m, reg, "orders")
	if n[catalogue.DriftSchema] != 1 || !created[catalogue.DriftSchema].Equal(later) || n[catalogue.DriftToolMissing] != 0 {
		t.Fatalf("a finding opened on the second run: opened %v; want %s 1, created %v", n, catalogue.DriftSchema, later)
	}
	if err := store.Save(run2.State); err != nil {
		t.Fatal(err)
	}

	// A restart: a new process reads the saved state, publishes it, runs.
	reg2 := prometheus.NewPedanticRegistry()
	m2 := New(reg2, BuildInfo{}, Options{})
	m2.now = func() time.Time { return later.Add(time.Hour) }
	m2.SetTargets(targets)
	saved, err := store.Load("orders")
	if err != nil {
		t.Fatal(err)
	}
	loaded := state.Loaded(saved)
	m2.Restore(loaded)
	rep3 := fixedReport("orders", true, missing, undeclared, schema)
	rep3.StartedAt = rep2.StartedAt.Add(time.Hour)
	run3 := state.Apply(loaded, rep3, rep3.StartedAt, 0, nil)
	m2.Observe(run3)
	if n, _ := openedCounts(t, m2, reg2, "orders"); len(n) != 0 {
		t.Fatalf("after a restart the same findings opened %v; want no counter", n)
	}
	rep4 := fixedReport("orders", true, schema)
	rep4.StartedAt = rep3.StartedAt.Add(time.Minute)
	run4 := state.Apply(run3, rep4, rep4.StartedAt, 0, nil)
	m2.Observe(run4)
	if n, _ := openedCounts(t, m2, reg2, "orders"); len(n) != 0 {
		t.Fatalf("resolving findings opened %v", n)
	}
	// They come back: that is news.
	rep5 := fixedReport("orders", true, missing, schema)
	rep5.StartedAt = rep4.StartedAt.Add(time.Minute)
	m2.Observe(state.Apply(run4, rep5, rep5.StartedAt, 0, nil))
	if n, _ := openedCounts(t, m2, reg2, "orders"); len(n) != 1 || n[catalogue.DriftToolMissing] != 1 {
		t.Fatalf("a finding back after it resolved: opened %v; want %s 1", n, catalogue.DriftToolMissing)
	}
}
