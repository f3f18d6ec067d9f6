package metrics

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fixedReport(target string, success bool, findings ...catalogue.Finding) *probe.Report {
	rev := "2026-07-28"
	rep := &probe.Report{
		Target: target, StartedAt: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), DurationSeconds: 0.042, Success: success,
		Classification:   probe.Classification{Class: "production", Reason: "environment set in config"},
		ProtocolRevision: probe.Revision{Value: &rev},
		ServerInfo:       &mcp.Implementation{Name: "orders", Version: "2.3.0"},
		Tools:            probe.ToolCounts{Declared: 3, Served: 2, Pages: 1},
		Findings:         findings,
		Ignored:          []catalogue.Finding{{Rule: catalogue.DriftToolUndeclared}},
		StaleIgnores:     []catalogue.StaleIgnore{},
	}
	if !success {
		rep.FailureReason = mcp.ReasonTimeout
	}
	return rep
}

// observed runs rep through the state step of the pipeline, from a fresh
// state, as the daemon does before it publishes.
func observed(rep *probe.Report) *state.Run {
	return state.Apply(state.Loaded(state.NewState(rep.Target)), rep, rep.StartedAt, 0, nil)
}

// clock is the counters' clock in the tests: when scenario schedules its
// targets and publishes their runs.
var clock = time.Date(2026, 12, 2, 12, 1, 0, 0, time.UTC)

func scenario(reg *prometheus.Registry, opts Options) *Metrics {
	m := New(reg, BuildInfo{Version: "1.0.0", Revision: "abc", Branch: "main", GoVersion: "go1.26.8", GoOS: "linux", GoArch: "amd64", Tags: "netgo"}, opts)
	m.now = func() time.Time { return clock }
	m.SetTargets([]Target{{Name: "orders", Labels: map[string]string{"team": "payments"}, SeriesLimit: 2, Ignores: 1}, {Name: "search", SeriesLimit: 200}})
	m.SetInterval("orders", 5*time.Minute)
	m.SetInterval("search", time.Minute)
	missing := catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "cancel_order"}
	orders := observed(fixedReport("orders", true, missing,
		catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "refund"},
		catalogue.Finding{Rule: catalogue.DriftToolUndeclared, Severity: catalogue.Warn, Tool: strings.Repeat("x", 300)},
		catalogue.Finding{Rule: catalogue.ConfServerInfo, Severity: catalogue.Info}))
	// What the run changed, as state would say it: one opening, one tool
	// removed from the served set.
	orders.Transition = state.Transition{
		Opened:        []state.Event{{Kind: state.KindOpened, Rule: missing.Rule, Severity: missing.Severity, Tool: missing.Tool}},
		ServedChanges: []state.Event{{Kind: state.KindServedChange, Tool: "gone", Change: catalogue.ChgToolRemoved}},
	}
	st := *orders.State
	st.ServedLastChange = time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	orders.State = &st
	m.Observe(orders)
	m.Observe(observed(fixedReport("search", false)))
	m.Skipped("search")
	m.Exchange(&mcp.Exchange{Method: "tools/list", Duration: 3 * time.Millisecond})
	m.ReloadResult(true, time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	return m
}

// exposition is what /metrics serves, through the handler, to a client
// that names no format.
func exposition(t *testing.T, m *Metrics, reg *prometheus.Registry) []byte {
	t.Helper()
	body, _ := scrape(t, m.Handler(reg), "")
	return body
}

// scrape is one GET /metrics with accept as the Accept header (none when
// empty); it returns the body and its content type.
func scrape(t testing.TB, h http.Handler, accept string) ([]byte, string) {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes(), rec.Header().Get("Content-Type")
}

// parse reads an exposition with the Prometheus text parser, which
// rejects a family split in two, a malformed line or a duplicate series.
func parse(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, b)
	}
	return mfs
}

func TestExpositionGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		opts   Options
	}{{"testdata/scenario.prom", Options{}}, {"testdata/scenario-per-target.prom", Options{PerTargetHistograms: true}}} {
		t.Run(tc.golden, func(t *testing.T) { expositionGolden(t, tc.golden, tc.opts) })
	}
}

func expositionGolden(t *testing.T, golden string, opts Options) {
	reg := prometheus.NewPedanticRegistry()
	m := scenario(reg, opts)
	got := exposition(t, m, reg)
	parse(t, got)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/metrics -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("exposition differs from %s (go test ./internal/metrics -update):\n%s", golden, got)
	}
	for _, must := range []string{
		`driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders",tool="cancel_order"} 1`,
		`driftd_finding_series_dropped{target="orders"} 1`,
		`driftd_target_info{classification="production",protocol_revision="2026-07-28",server_name="orders",server_version="2.3.0",target="orders",team="payments"} 1`,
		`driftd_probe_failures_total{reason="timeout",target="search"} 1`,
	} {
		if !strings.Contains(string(got), must) {
			t.Errorf("missing %s", must)
		}
	}
}

// A failed run compares nothing and establishes nothing: the series read
// from what a run established (the served counts, the server and
// revision on driftd_target_info) keep the last successful run's values,
// so they neither vanish nor start a new series while a target is down.
func TestFailedRunKeepsWhatWasEstablished(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, BuildInfo{Version: "1.0.0"}, Options{})
	m.SetTargets([]Target{{Name: "orders", SeriesLimit: 10}})
	ok := fixedReport("orders", true)
	ok.Prompts = &probe.ToolCounts{Declared: 2, Served: 2}
	m.Observe(observed(ok))
	pick := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "driftd_target_info{") || strings.HasPrefix(l, "driftd_tools{") || strings.HasPrefix(l, "driftd_list_items{") {
				out = append(out, l)
			}
		}
		return out
	}
	before := pick(exposition(t, m, reg))
	failed := fixedReport("orders", false)
	failed.ProtocolRevision, failed.ServerInfo, failed.Tools.Served = probe.Revision{Reason: "unreachable"}, nil, 0
	failed.Prompts = &probe.ToolCounts{Declared: 2}
	m.Observe(observed(failed))
	after := pick(exposition(t, m, reg))
	if len(before) != 5 || !slices.Equal(before, after) {
		t.Fatalf("a failed run changed what was established:\nbefore %q\nafter  %q", before, after)
	}
}

// TestTargetInfoLabelsAreConfigs: driftd_target_info's fixed labels are
// config.TargetInfoLabels, the list config checks target labels against,
// plus the configured labels.
func TestTargetInfoLabelsAreConfigs(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := scenario(reg, Options{})
	for _, mf := range parse(t, exposition(t, m, reg)) {
		if mf.GetName() != "driftd_target_info" {
			continue
		}
		var got []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			got = append(got, lp.GetName())
		}
		want := append(slices.Clone(config.TargetInfoLabels), "team")
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("driftd_target_info labels %v, want %v", got, want)
		}
		return
	}
	t.Fatal("no driftd_target_info")
}

// newPlain is a Metrics on a registry of its own, with the default
// options.
func newPlain() (*Metrics, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return New(reg, BuildInfo{Version: "1", Revision: "r", GoVersion: "go"}, Options{}), reg
}

// observeEach makes ts the targets and publishes a successful run of each
// with one INFO finding.
func observeEach(m *Metrics, ts []Target) {
	m.SetTargets(ts)
	for _, tg := range ts {
		m.Observe(observed(fixedReport(tg.Name, true, catalogue.Finding{Rule: catalogue.AuthAnonymousList, Severity: catalogue.Info})))
	}
}

// TestFindingSeriesCap: a target with more tool findings than its series
// cap, each tool named by two findings, keeps the first tools in the
// state's order, counts every finding of a tool left out, and counts all
// of them by rule.
func TestFindingSeriesCap(t *testing.T) {
	m, reg := newPlain()
	m.SetTargets([]Target{{Name: "big", SeriesLimit: 12}})
	var fs []catalogue.Finding
	for i := range 20 {
		for _, ptr := range []string{"/a", "/b"} {
			fs = append(fs, catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: fmt.Sprintf("t%02d", i), Pointer: ptr})
		}
	}
	m.Observe(observed(fixedReport("big", true, fs...)))
	fams := parse(t, exposition(t, m, reg))
	var tools []string
	for _, s := range fams["driftd_finding"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "tool" {
				tools = append(tools, l.GetValue())
			}
		}
	}
	want := make([]string, 12)
	for i := range want {
		want[i] = fmt.Sprintf("t%02d", i)
	}
	if !slices.Equal(tools, want) {
		t.Errorf("driftd_finding tools %v, want %v", tools, want)
	}
	if got := fams["driftd_finding_series_dropped"].GetMetric()[0].GetGauge().GetValue(); got != 16 {
		t.Errorf("driftd_finding_series_dropped %v, want 16 (two findings each of 8 tools)", got)
	}
	if got := fams["driftd_findings"].GetMetric()[0].GetGauge().GetValue(); got != 40 {
		t.Errorf("driftd_findings %v, want 40", got)
	}
}
