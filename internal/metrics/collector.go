package metrics

import (
	"slices"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// collector renders the per-target gauges from the latest reports at scrape
// time. It is unchecked (Describe sends nothing) because driftd_target_info
// carries the configured labels, which change on reload.
type collector struct{ m *Metrics }

var (
	descSuccess     = prometheus.NewDesc("driftd_probe_success", "Whether the last run of the target could list and compare its tools.", []string{"target"}, nil)
	descInterval    = prometheus.NewDesc("driftd_probe_interval_seconds", "The current period of the target's schedule.", []string{"target"}, nil)
	descLastRun     = prometheus.NewDesc("driftd_probe_last_run_timestamp_seconds", "When the target's last run ended.", []string{"target"}, nil)
	descLastSuccess = prometheus.NewDesc("driftd_probe_last_success_timestamp_seconds", "When the target's last successful run ended.", []string{"target"}, nil)
	descTools       = prometheus.NewDesc("driftd_tools", "Tools declared in the manifest and served on the last successful listing.", []string{"target", "source"}, nil)
	descFindings    = prometheus.NewDesc("driftd_findings", "Active findings by rule and severity.", []string{"target", "rule", "severity"}, nil)
	descFinding     = prometheus.NewDesc("driftd_finding", "One active finding that names a tool (capped per target).", []string{"target", "rule", "severity", "tool"}, nil)
	descDropped     = prometheus.NewDesc("driftd_finding_series_dropped", "Active findings with a tool left out of driftd_finding by the per-target cap.", []string{"target"}, nil)
	descLastChange  = prometheus.NewDesc("driftd_served_last_change_timestamp_seconds", "When the served tool set last changed between runs.", []string{"target"}, nil)
	descIgnored     = prometheus.NewDesc("driftd_findings_ignored", "Findings suppressed by ignore entries on the last run.", []string{"target"}, nil)
	descStale       = prometheus.NewDesc("driftd_ignores_stale", "Ignore entries that matched nothing or have expired.", []string{"target"}, nil)
)

// infoValues are the values of config.TargetInfoLabels, the one list of
// driftd_target_info's fixed labels (config rejects target labels that
// collide with them), in that order.
func infoValues(name string, rep *probe.Report) []string {
	values := []string{name, rep.Classification.Class, revision(rep.ProtocolRevision.Value), "", ""}
	if rep.ServerInfo != nil {
		values[3], values[4] = sanitize.Name(rep.ServerInfo.Name), sanitize.Name(rep.ServerInfo.Version)
	}
	return values
}

func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.RLock()
	defer m.mu.RUnlock()
	names := sortedNames(m.targets)
	info := infoDesc(m.targets)
	extra := info.extra
	for _, name := range names {
		st := m.targets[name]
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, labels...)...)
		}
		if st.interval > 0 {
			gauge(descInterval, st.interval.Seconds())
		}
		if st.run == nil || st.run.Report == nil {
			continue
		}
		rep := st.run.Report
		values := infoValues(name, rep)
		for _, k := range extra {
			values = append(values, st.meta.Labels[k])
		}
		ch <- prometheus.MustNewConstMetric(info.desc, prometheus.GaugeValue, 1, values...)
		success := 0.0
		if rep.Success {
			success = 1
		}
		gauge(descSuccess, success)
		end := rep.StartedAt.Add(secondsDuration(rep.DurationSeconds))
		gauge(descLastRun, float64(end.UnixNano())/1e9)
		if !st.lastSuccess.IsZero() {
			gauge(descLastSuccess, float64(st.lastSuccess.UnixNano())/1e9)
		}
		if lc := st.run.State.ServedLastChange; !lc.IsZero() {
			gauge(descLastChange, float64(lc.UnixNano())/1e9)
		}
		gauge(descTools, float64(rep.Tools.Declared), "declared")
		if rep.Success {
			gauge(descTools, float64(rep.Tools.Served), "served")
		}
		gauge(descIgnored, float64(len(rep.Ignored)+rep.IgnoredOmitted))
		gauge(descStale, float64(len(rep.StaleIgnores)))
		c.findings(ch, name, st)
	}
}

// findings renders driftd_findings counts and the capped per-tool series.
func (collector) findings(ch chan<- prometheus.Metric, name string, st *targetState) {
	type key struct{ rule, sev string }
	counts := map[key]int{}
	perTool := map[[3]string]bool{}
	dropped := 0
	for _, f := range st.run.State.Active() {
		counts[key{f.Rule, string(f.Severity)}]++
		if f.Tool == "" {
			continue
		}
		k := [3]string{f.Rule, string(f.Severity), sanitize.Name(f.Tool)}
		if perTool[k] {
			continue
		}
		if len(perTool) >= st.meta.SeriesLimit {
			dropped++
			continue
		}
		perTool[k] = true
		ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, 1, name, k[0], k[1], k[2])
	}
	for _, o := range st.run.State.Omitted {
		counts[key{o.Rule, string(o.Severity)}] += o.Count
	}
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].rule+keys[i].sev < keys[j].rule+keys[j].sev })
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(descFindings, prometheus.GaugeValue, float64(counts[k]), name, k.rule, k.sev)
	}
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.GaugeValue, float64(dropped), name)
}

type targetInfo struct {
	desc  *prometheus.Desc
	extra []string
}

// infoDesc builds driftd_target_info's descriptor: the fixed labels plus
// the union of every target's configured labels (empty where a target has
// none, which Prometheus treats as absent).
func infoDesc(targets map[string]*targetState) targetInfo {
	seen := map[string]bool{}
	for _, st := range targets {
		for k := range st.meta.Labels {
			seen[k] = true
		}
	}
	extra := make([]string, 0, len(seen))
	for k := range seen {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	return targetInfo{
		desc: prometheus.NewDesc("driftd_target_info", "Identity of a target: its classification, the protocol revision and server it established, and its configured labels.",
			append(slices.Clone(config.TargetInfoLabels), extra...), nil),
		extra: extra,
	}
}

func revision(v *string) string {
	if v == nil {
		return "unknown"
	}
	return *v
}
