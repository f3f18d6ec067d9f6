package metrics

import (
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"target"}, labels...), nil)
}

// The per-target families, all with a target label. Their names, labels
// and help are what the shipped alerts, rules and dashboard read
// (docs/metrics.md).
var (
	findingDesc = desc("driftd_finding", "One active finding that names a tool, prompt, resource or resource template (kind), capped per target.",
		"kind", "rule", "severity", "tool")
	findingDroppedDesc = desc("driftd_finding_series_dropped", "Active findings with a tool left out of driftd_finding by the per-target cap (targets where it dropped any).")
	findingsDesc       = desc("driftd_findings", "Active findings by rule and severity.", "rule", "severity")
	ignoredDesc        = desc("driftd_findings_ignored", "Findings suppressed by ignore entries on the last run (targets with ignore entries).")
	openedDesc         = desc("driftd_findings_opened_total", "Findings that appeared, by rule and severity.", "rule", "severity")
	resolvedDesc       = desc("driftd_findings_resolved_total", "Findings that went away, by rule and severity.", "rule", "severity")
	staleDesc          = desc("driftd_ignores_stale", "Ignore entries that matched nothing or have expired (targets with ignore entries).")
	failuresDesc       = desc("driftd_probe_failures_total", "Failed probe runs by reason.", "reason")
	intervalDesc       = desc("driftd_probe_interval_seconds", "The current period of the target's schedule.")
	lastDurationDesc   = desc("driftd_probe_last_duration_seconds", "Duration of the target's last run.")
	lastRunDesc        = desc("driftd_probe_last_run_timestamp_seconds", "When the target's last run ended.")
	lastSuccessDesc    = desc("driftd_probe_last_success_timestamp_seconds", "When the target's last successful run ended.")
	skippedDesc        = desc("driftd_probe_skipped_total", "Runs that were due while the previous run of the target still ran.")
	successDesc        = desc("driftd_probe_success", "Whether the last run of the target could list and compare its tools.")
	probesDesc         = desc("driftd_probes_total", "Probe runs by result.", "result")
	servedChangesDesc  = desc("driftd_served_changes_total", "Run-to-run changes of the served tool set, by CHG id.", "change")
	servedChangeDesc   = desc("driftd_served_last_change_timestamp_seconds", "When the served tool set last changed between runs.")
	toolsDesc          = desc("driftd_tools", "Tools declared in the manifest and served on the last successful listing.", "source")
	listItemsDesc      = desc("driftd_list_items", "Prompts, resources and resource templates (kind) declared in the manifest and served on the last successful run; only for lists the run read.",
		"kind", "source")
)

// targetInfo is driftd_target_info's descriptor and its label names: the
// fixed ones (config.TargetInfoLabels, target among them) plus the
// targets' configured ones, which config keeps from colliding with them,
// in name order.
type targetInfo struct {
	desc   *prometheus.Desc
	labels []string
}

func newTargetInfo(configured []string) targetInfo {
	labels := slices.Clone(config.TargetInfoLabels)
	for _, l := range configured {
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	slices.Sort(labels)
	return targetInfo{prometheus.NewDesc("driftd_target_info",
		"Identity of a target: its classification, the protocol revision and server it established, and its configured labels.", labels, nil), labels}
}

// collector renders the per-target families from each target's latest
// published run and its counters, at scrape time, under the read lock.
type collector struct{ m *Metrics }

// Describe sends the families' descriptors. driftd_target_info's labels
// change with the configuration; its descriptor's identity (the name) does
// not, which is what the registry checks.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{findingDesc, findingDroppedDesc, findingsDesc, ignoredDesc, openedDesc, resolvedDesc, staleDesc,
		failuresDesc, intervalDesc, lastDurationDesc, lastRunDesc, lastSuccessDesc, skippedDesc, successDesc, probesDesc,
		servedChangesDesc, servedChangeDesc, toolsDesc, listItemsDesc, newTargetInfo(nil).desc} {
		ch <- d
	}
}

// Collect sends every target's series.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.RLock()
	defer m.mu.RUnlock()
	f := &findingSets{seen: map[[4]string]bool{}}
	for _, name := range m.names {
		st := m.targets[name]
		st.collectCounters(ch, name)
		if st.interval > 0 {
			ch <- prometheus.MustNewConstMetric(intervalDesc, prometheus.GaugeValue, st.interval.Seconds(), name)
		}
		if st.run == nil || st.run.Report == nil {
			continue // scheduled, not run since start
		}
		st.collectRun(ch, name, m.info)
		f.collect(ch, name, st)
	}
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, n uint64, st *targetState, labels ...string) {
	ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, float64(n), st.since, labels...)
}

// collectCounters sends the target's counters: those created at 0 when
// it was scheduled, one for each value of their labels, and those created
// at their first event.
func (st *targetState) collectCounters(ch chan<- prometheus.Metric, name string) {
	counter(ch, probesDesc, st.probesFailed, st, name, "failure")
	counter(ch, probesDesc, st.probesOK, st, name, "success")
	counter(ch, skippedDesc, st.skipped, st, name)
	for i, r := range mcp.Reasons {
		counter(ch, failuresDesc, st.failures[i], st, name, string(r))
	}
	lazy := func(d *prometheus.Desc, cs lazyCounts) {
		for k, c := range cs {
			labels := append([]string{name}, strings.Split(k, "\xff")...)
			ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, float64(c.n), c.created, labels...)
		}
	}
	lazy(failuresDesc, st.otherFailures)
	lazy(openedDesc, st.opened)
	lazy(resolvedDesc, st.resolved)
	lazy(servedChangesDesc, st.servedChanges)
}

// collectRun sends the gauges read from the target's latest run.
func (st *targetState) collectRun(ch chan<- prometheus.Metric, name string, info targetInfo) {
	rep := st.run.Report
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, labels...)...)
	}
	if st.meta.Ignores > 0 || len(rep.Ignored)+rep.IgnoredOmitted > 0 {
		gauge(ignoredDesc, float64(len(rep.Ignored)+rep.IgnoredOmitted))
	}
	if st.meta.Ignores > 0 || len(rep.StaleIgnores) > 0 {
		gauge(staleDesc, float64(len(rep.StaleIgnores)))
	}
	gauge(lastDurationDesc, rep.DurationSeconds)
	gauge(lastRunDesc, unixSeconds(rep.StartedAt.Add(secondsDuration(rep.DurationSeconds))))
	if !st.lastSuccess.IsZero() {
		gauge(lastSuccessDesc, unixSeconds(st.lastSuccess))
	}
	gauge(successDesc, boolValue(rep.Success))
	if lc := st.run.State.ServedLastChange; !lc.IsZero() {
		gauge(servedChangeDesc, unixSeconds(lc))
	}
	est := st.established(rep)
	gauge(toolsDesc, float64(rep.Tools.Declared), "declared")
	if est.Success {
		gauge(toolsDesc, float64(est.Tools.Served), "served")
	}
	for _, k := range mcp.ItemKinds {
		if c := rep.ListCounts(k); c != nil {
			gauge(listItemsDesc, float64(c.Declared), string(k), "declared")
		}
		if c := est.ListCounts(k); c != nil && est.Success {
			gauge(listItemsDesc, float64(c.Served), string(k), "served")
		}
	}
	ch <- prometheus.MustNewConstMetric(info.desc, prometheus.GaugeValue, 1, st.infoValues(name, info.labels)...)
}

// established is the report a target's established facts are read from:
// rep while it succeeded, else the latest successful one, if any.
func (st *targetState) established(rep *probe.Report) *probe.Report {
	if rep.Success || st.lastOK == nil {
		return rep
	}
	return st.lastOK
}

// infoValues are driftd_target_info's label values for labels: the
// fixed ones — the classification from the latest run, the revision and
// server from the run that established them — and the target's
// configured labels, empty where it has none (which Prometheus treats as
// absent).
func (st *targetState) infoValues(name string, labels []string) []string {
	rep := st.run.Report
	est := st.established(rep)
	fixed := [5]string{name, rep.Classification.Class, revision(est.ProtocolRevision.Value), "", ""} // config.TargetInfoLabels' order
	if est.ServerInfo != nil {
		fixed[3], fixed[4] = sanitize.Name(est.ServerInfo.Name), sanitize.Name(est.ServerInfo.Version)
	}
	values := make([]string, len(labels))
	for i, l := range labels {
		if j := slices.Index(config.TargetInfoLabels, l); j >= 0 {
			values[i] = fixed[j]
		} else {
			values[i] = st.meta.Labels[l]
		}
	}
	return values
}

func revision(v *string) string {
	if v == nil {
		return "unknown"
	}
	return *v
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
