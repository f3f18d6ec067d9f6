package validate

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// exported is every series name driftd exports (docs/metrics.md), with the
// labels each carries. Histograms are listed as their _bucket, _sum and
// _count series. anyLabels marks driftd_target_info, which also carries the
// labels configured on each target.
var exported = map[string][]string{}

const anyLabels = "*"

func init() {
	add := func(name string, lbls ...string) { exported[name] = lbls }
	histogram := func(name string, lbls ...string) {
		add(name+"_bucket", append(slices.Clone(lbls), "le")...)
		add(name+"_sum", lbls...)
		add(name+"_count", lbls...)
	}
	add("driftd_build_info", "version", "revision", "branch", "goversion", "goos", "goarch", "tags")
	add("driftd_config_last_reload_successful")
	add("driftd_config_last_reload_success_timestamp_seconds")
	add("driftd_targets")
	add("driftd_target_info", "target", "classification", "protocol_revision", "server_name", "server_version", anyLabels)
	add("driftd_target_restored", "target")
	add("driftd_probe_success", "target")
	histogram("driftd_probe_duration_seconds", "target") // target only with --metrics.per-target-histograms
	add("driftd_probe_last_duration_seconds", "target")
	add("driftd_probe_interval_seconds", "target")
	add("driftd_probe_last_run_timestamp_seconds", "target")
	add("driftd_probe_last_success_timestamp_seconds", "target")
	add("driftd_probes_total", "target", "result")
	add("driftd_probe_failures_total", "target", "reason")
	add("driftd_probe_skipped_total", "target")
	add("driftd_oauth_login_required", "target")
	add("driftd_tools", "target", "source")
	add("driftd_findings", "target", "rule", "severity")
	add("driftd_finding", "target", "kind", "rule", "severity", "tool")
	add("driftd_list_items", "target", "kind", "source")
	add("driftd_finding_series_dropped", "target")
	add("driftd_findings_opened_total", "target", "rule", "severity")
	add("driftd_findings_resolved_total", "target", "rule", "severity")
	add("driftd_served_changes_total", "target", "change")
	add("driftd_findings_ignored", "target")
	add("driftd_ignores_stale", "target")
	add("driftd_mcp_requests_total", "method", "outcome")
	histogram("driftd_mcp_request_duration_seconds", "method")
	histogram("driftd_scheduler_start_lateness_seconds")
	add("driftd_log_ring_bytes")
	add("driftd_log_ring_capacity_bytes")
	add("driftd_inflight_response_bytes")
	add("driftd_inflight_response_bytes_limit")
	add("driftd_inflight_refusals_total")
	add("driftd_otlp_export_failures_total")
	add("driftd_state_write_failures_total")
	add("driftd_state_read_failures_total")
	add("driftd_state_removed_total")
	add("driftd_sd_targets", "source")
	add("driftd_sd_rejected_targets", "source")
	add("driftd_sd_skipped_remotes", "source")
	add("driftd_sd_refresh_failures_total", "source", "reason")
	add("driftd_sd_last_success_timestamp_seconds", "source")
	add("driftd_sd_last_refresh_successful", "source")
}

// Labels that the scrape adds to every series (static configs, the
// prometheus-operator's ServiceMonitor relabelling, a cluster's external
// label), besides a metric's own.
var scrapeLabels = []string{"job", "instance", "namespace", "pod", "service", "container", "endpoint", "cluster"}

// recorded is every series the mixin's recording rules (deploy/mixin/
// rules.libsonnet) write, with the labels each carries: rules and alerts
// may read them as they read driftd's own. TestRecordingRulesAreKnown
// holds this list to the mixin's.
var recorded = map[string][]string{
	"driftd:finding_breaking:timestamp": {"target", "kind", "rule", "severity", "tool"},
	"driftd:finding_breaking:exported":  {"target", "kind", "rule", "severity", "tool"},
	"driftd:findings_breaking:untooled": {"target", "rule", "severity"},
	"driftd:finding_breaking:held":      {"target", "kind", "rule", "severity", "tool"},
	"driftd:tool_missing:active":        {"target", "kind", "rule", "severity", "tool"},
	"driftd:schema_breaking:active":     {"target", "kind", "rule", "severity", "tool"},
	"driftd:surface_breaking:active":    {"target", "kind", "rule", "severity", "tool"},
}

var promql = parser.NewParser(parser.Options{})

// exprMetrics parses a PromQL expression and returns the metric names it
// selects. Every selector must name a metric driftd exports, a series the
// mixin records, or up (when allowUp), and match only on labels it has.
func exprMetrics(expr string, allowUp bool) ([]string, error) {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", expr, err)
	}
	var names []string
	var errs []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName {
				if m.Type != labels.MatchEqual {
					errs = append(errs, fmt.Sprintf("selector %s matches __name__ with %s: name the metric", vs, m.Type))
				}
				name = m.Value
			}
		}
		if name == "up" && allowUp {
			names = append(names, name)
			return nil
		}
		lbls, ok := exported[name]
		if !ok {
			lbls, ok = recorded[name]
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("%q is not a metric driftd exports", name))
			return nil
		}
		names = append(names, name)
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName || slices.Contains(lbls, m.Name) || slices.Contains(lbls, anyLabels) || slices.Contains(scrapeLabels, m.Name) {
				continue
			}
			errs = append(errs, fmt.Sprintf("%s has no label %q (it has %v)", name, m.Name, lbls))
		}
		return nil
	})
	if len(errs) > 0 {
		return names, fmt.Errorf("%q: %s", expr, strings.Join(errs, "; "))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%q selects no metric", expr)
	}
	return names, nil
}

func TestExprMetrics(t *testing.T) {
	for _, tc := range []struct {
		expr string
		ok   bool
	}{
		{`sum by (rule) (driftd_findings{severity="ERROR"})`, true},
		{`histogram_quantile(0.9, sum by (le) (rate(driftd_probe_duration_seconds_bucket{target=~".*"}[5m])))`, true},
		{`driftd_target_info{team="payments"}`, true},
		{`driftd_findings{pod="x"}`, true},
		{`driftd:tool_missing:active{tool="x"}`, true},
		{`driftd:findings_breaking:untooled{tool="x"}`, false},
		{`driftd_probe_duration_seconds`, false}, // a histogram's own name is no series
		{`driftd_findings{tool="x"}`, false},     // only driftd_finding has tool
		{`driftd_nope`, false},
		{`up == 0`, false},
		{`sum(`, false},
		{`1 + 1`, false},
	} {
		_, err := exprMetrics(tc.expr, false)
		if (err == nil) != tc.ok {
			t.Errorf("exprMetrics(%q): %v, want ok=%v", tc.expr, err, tc.ok)
		}
	}
}

// Every metric listed here must still be documented in docs/metrics.md, so
// the list (and the dashboard and rules checked against it) follows the docs.
func TestExportedMetricsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Skipf("docs/metrics.md: %v", err)
	}
	for name := range exported {
		base := name
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, s); ok && strings.HasSuffix(b, "_seconds") {
				base = b
			}
		}
		if !strings.Contains(string(doc), "`"+base+"`") {
			t.Errorf("%s is not in docs/metrics.md", base)
		}
	}
}
