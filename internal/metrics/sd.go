package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// sdMetrics are the driftd_sd_* series, one set per discovery source. The
// source label is the source's key (file:GLOB, registry:URL,
// kubernetes:NAMESPACES[;SELECTOR]): written in the config, so bounded.
type sdMetrics struct {
	targets, rejected, skipped, lastSuccess, lastOK *prometheus.GaugeVec
	failures                                        *prometheus.CounterVec
}

func newSDMetrics(reg prometheus.Registerer) *sdMetrics {
	s := &sdMetrics{
		targets: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftd_sd_targets",
			Help: "Targets a discovery source currently finds (its last good set)."}, []string{"source"}),
		rejected: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftd_sd_rejected_targets",
			Help: "Targets a discovery source found that are not probed: invalid, or a name already taken."}, []string{"source"}),
		skipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftd_sd_skipped_remotes",
			Help: "Registry remotes left out: not streamable-http, or a URL driftd does not probe."}, []string{"source"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftd_sd_last_success_timestamp_seconds",
			Help: "When a discovery source last refreshed without error."}, []string{"source"}),
		lastOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "driftd_sd_last_refresh_successful",
			Help: "Whether a discovery source's last refresh succeeded (1) or failed and kept its last good set (0)."}, []string{"source"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_sd_refresh_failures_total",
			Help: "Refreshes of a discovery source that failed; the source keeps its last good set."}, []string{"source", "reason"}),
	}
	reg.MustRegister(s.targets, s.rejected, s.skipped, s.lastSuccess, s.lastOK, s.failures)
	return s
}

// SDRefreshed records a successful refresh of source finding n targets.
func (m *Metrics) SDRefreshed(source string, n int, at time.Time) {
	m.sd.targets.WithLabelValues(source).Set(float64(n))
	m.sd.lastSuccess.WithLabelValues(source).Set(float64(at.UnixNano()) / 1e9)
	m.sd.lastOK.WithLabelValues(source).Set(1)
}

// SDFailed counts a failed refresh of source, which keeps n targets.
func (m *Metrics) SDFailed(source, reason string, n int) {
	m.sd.targets.WithLabelValues(source).Set(float64(n))
	m.sd.failures.WithLabelValues(source, reason).Inc()
	m.sd.lastOK.WithLabelValues(source).Set(0)
}

// SDSkipped sets the remotes a registry source left out.
func (m *Metrics) SDSkipped(source string, n int) {
	m.sd.skipped.WithLabelValues(source).Set(float64(n))
}

// SDRejected sets, per source, the targets found but not probed; a source
// not in rejected has none.
func (m *Metrics) SDRejected(sources []string, rejected map[string]int) {
	for _, s := range sources {
		m.sd.rejected.WithLabelValues(s).Set(float64(rejected[s]))
	}
}

// SDForget drops a source's series: it is no longer configured.
func (m *Metrics) SDForget(source string) {
	l := prometheus.Labels{"source": source}
	m.sd.targets.DeletePartialMatch(l)
	m.sd.rejected.DeletePartialMatch(l)
	m.sd.skipped.DeletePartialMatch(l)
	m.sd.lastSuccess.DeletePartialMatch(l)
	m.sd.lastOK.DeletePartialMatch(l)
	m.sd.failures.DeletePartialMatch(l)
}
