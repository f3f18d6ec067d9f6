package metrics

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/probe"
)

// healthyRun is a healthy target's run: its manifest declares 3 tools,
// the server serves them, the run succeeded and found nothing.
func healthyRun(name string, oauth bool) *probe.Report {
	rep := fixedReport(name, true)
	rep.Tools.Served = rep.Tools.Declared
	rep.Ignored, rep.StaleIgnores = nil, nil
	if oauth {
		issued := rep.StartedAt.Add(-time.Minute)
		expires := issued.Add(time.Hour)
		rep.AuthPosture.OAuth = &probe.OAuthUse{Grant: "client_credentials", Scheme: "Bearer",
			TokenRequests: []string{"success"}, TokenIssuedAt: &issued, TokenExpiresAt: &expires}
	}
	return rep
}

// targetSeries counts one target's series on /metrics by family, in the
// text format (the series a Prometheus stores) and in OpenMetrics (the
// samples, _created included, that a Prometheus without
// created-timestamp ingestion also stores as series).
func targetSeries(t *testing.T, m *Metrics, reg *prometheus.Registry, target string) (text, om map[string]int) {
	t.Helper()
	count := func(accept string) map[string]int {
		body, _ := scrape(t, m.Handler(reg), accept)
		out := map[string]int{}
		for line := range strings.SplitSeq(string(body), "\n") {
			if strings.HasPrefix(line, "#") || !strings.Contains(line, fmt.Sprintf("target=%q", target)) {
				continue
			}
			out[line[:strings.IndexAny(line, "{ ")]]++
		}
		return out
	}
	return count(""), count(openMetrics)
}

func total(c map[string]int) (n int) {
	for _, v := range c {
		n += v
	}
	return n
}

// TestSeriesPerHealthyTarget counts what a healthy target costs in
// series, family by family: the table of docs/metrics.md ("What a
// target costs in series"). A target with an oauth identity adds its
// token families. Run with -v to print the table.
func TestSeriesPerHealthyTarget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target Target
		want   map[string]int // text-format series by family
		om     int            // OpenMetrics samples
	}{
		{"healthy", Target{Name: "plain", SeriesLimit: 200}, map[string]int{
			"driftd_target_info": 1, "driftd_probe_success": 1, "driftd_probe_last_duration_seconds": 1,
			"driftd_probe_interval_seconds": 1, "driftd_probe_last_run_timestamp_seconds": 1,
			"driftd_probe_last_success_timestamp_seconds": 1, "driftd_probes_total": 2, "driftd_tools": 2,
		}, 12},
		{"oauth", Target{Name: "machine", SeriesLimit: 200, OAuth: true}, map[string]int{
			"driftd_target_info": 1, "driftd_probe_success": 1, "driftd_probe_last_duration_seconds": 1,
			"driftd_probe_interval_seconds": 1, "driftd_probe_last_run_timestamp_seconds": 1,
			"driftd_probe_last_success_timestamp_seconds": 1, "driftd_probes_total": 2, "driftd_tools": 2,
			"driftd_oauth_token_requests_total": 10, "driftd_oauth_token_issued_timestamp_seconds": 1,
			"driftd_oauth_token_expiry_timestamp_seconds": 1,
		}, 34},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m := New(reg, BuildInfo{Version: "1"}, Options{})
			m.now = func() time.Time { return clock }
			m.SetTargets([]Target{tc.target})
			m.SetInterval(tc.target.Name, 5*time.Minute)
			// Two runs: the first records the served set, the second
			// finds it unchanged.
			for i := range 2 {
				rep := healthyRun(tc.target.Name, tc.target.OAuth)
				rep.StartedAt = rep.StartedAt.Add(time.Duration(i) * 5 * time.Minute)
				m.Observe(observed(rep))
			}
			text, om := targetSeries(t, m, reg, tc.target.Name)
			names := slices.Sorted(maps.Keys(text))
			for _, n := range names {
				t.Logf("%-48s %2d", n, text[n])
			}
			t.Logf("%-48s %2d series, %d OpenMetrics samples", "total", total(text), total(om))
			if !maps.Equal(text, tc.want) {
				t.Errorf("series by family %v, want %v", text, tc.want)
			}
			if total(om) != tc.om {
				t.Errorf("%d OpenMetrics samples, want %d", total(om), tc.om)
			}
		})
	}
}

// TestSeriesAt10kHealthyTargets counts the series of /metrics with
// 10,000 healthy targets, the text format's sample lines: the per-target
// ones are TestSeriesPerHealthyTarget's 10 a target, and the instance's
// own (build, reloads, MCP requests, lateness, faults, the duration
// histogram) are the rest. Run with -v to print the figure.
func TestSeriesAt10kHealthyTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 targets")
	}
	const n = 10_000
	reg := prometheus.NewRegistry()
	m := New(reg, BuildInfo{Version: "1"}, Options{})
	ts := make([]Target, n)
	for i := range ts {
		ts[i] = Target{Name: fmt.Sprintf("server-%05d", i), SeriesLimit: 200}
	}
	m.SetTargets(ts)
	for _, tg := range ts {
		m.SetInterval(tg.Name, 5*time.Minute)
		m.Observe(observed(healthyRun(tg.Name, false)))
	}
	count := func(accept string) (all, perTarget int) {
		body, _ := scrape(t, m.Handler(reg), accept)
		for line := range strings.SplitSeq(string(body), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			all++
			if strings.Contains(line, `target="`) {
				perTarget++
			}
		}
		return all, perTarget
	}
	all, perTarget := count("")
	omAll, omPerTarget := count(openMetrics)
	t.Logf("%d targets: %d series (%d per-target, %.1f a target); OpenMetrics %d samples (%d per-target)", n, all, perTarget, float64(perTarget)/n, omAll, omPerTarget)
	if perTarget != 10*n || omPerTarget != 12*n {
		t.Errorf("%d per-target series and %d OpenMetrics samples, want %d and %d", perTarget, omPerTarget, 10*n, 12*n)
	}
}
