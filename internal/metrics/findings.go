package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/sanitize"
)

// findingSets sends a target's finding series: driftd_finding (one per
// active finding that names a tool, capped per target),
// driftd_finding_series_dropped (where the cap dropped any) and
// driftd_findings (by rule and severity). Its map and slice are reused
// from target to target, one set for a whole scrape.
type findingSets struct {
	seen   map[[4]string]bool // the target's kept tool series
	counts []ruleCount
}

type ruleCount struct {
	rule, severity string
	n              int
}

func (f *findingSets) count(rule, severity string, n int) {
	for i := range f.counts {
		if c := &f.counts[i]; c.rule == rule && c.severity == severity {
			c.n += n
			return
		}
	}
	f.counts = append(f.counts, ruleCount{rule, severity, n})
}

func (f *findingSets) collect(ch chan<- prometheus.Metric, name string, st *targetState) {
	clear(f.seen)
	f.counts = f.counts[:0]
	dropped := 0
	for _, fd := range st.run.State.Active() {
		f.count(fd.Rule, string(fd.Severity), 1)
		if fd.Tool == "" {
			continue
		}
		kind := fd.ItemKind
		if kind == "" {
			kind = "tool"
		}
		k := [4]string{kind, fd.Rule, string(fd.Severity), sanitize.Name(fd.Tool)}
		if f.seen[k] {
			continue
		}
		if len(f.seen) >= st.meta.SeriesLimit {
			dropped++
			continue
		}
		f.seen[k] = true
		ch <- prometheus.MustNewConstMetric(findingDesc, prometheus.GaugeValue, 1, name, k[0], k[1], k[2], k[3])
	}
	for _, o := range st.run.State.Omitted {
		f.count(o.Rule, string(o.Severity), o.Count)
	}
	if dropped > 0 {
		ch <- prometheus.MustNewConstMetric(findingDroppedDesc, prometheus.GaugeValue, float64(dropped), name)
	}
	for _, c := range f.counts {
		ch <- prometheus.MustNewConstMetric(findingsDesc, prometheus.GaugeValue, float64(c.n), name, c.rule, c.severity)
	}
}
