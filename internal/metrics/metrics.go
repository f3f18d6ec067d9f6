// Package metrics turns probe reports into Prometheus series. Results
// outlive the run that produced them, so per-target gauges are rendered at
// scrape time from the latest report (a custom Collector), while counters
// are long-lived vectors whose series are deleted when a target goes.
package metrics

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/state"
)

// BuildInfo identifies the running binary.
type BuildInfo struct{ Version, Revision, GoVersion string }

// Target is what the metrics need to know of a configured target.
type Target struct {
	Name   string
	Labels map[string]string
	// SeriesLimit caps driftd_finding series (those with a tool label).
	SeriesLimit int
}

// Metrics holds every driftd series.
type Metrics struct {
	mu      sync.RWMutex
	targets map[string]*targetState

	reloadOK, reloadTime, targetCount prometheus.Gauge
	probes, failures, skipped         *prometheus.CounterVec
	opened, resolved, servedChanges   *prometheus.CounterVec
	duration                          *prometheus.HistogramVec
	requests                          *prometheus.CounterVec
	requestDuration                   *prometheus.HistogramVec
	otlpFailures, stateWrite          prometheus.Counter
	stateRead                         prometheus.Counter
}

// targetState is the latest per-target data the collector renders.
type targetState struct {
	meta     Target
	interval time.Duration
	// run is the latest published outcome; its report is nil before the
	// first run since start.
	run         *state.Run
	lastSuccess time.Time
	// series are the counter series this target made, for Remove.
	series []series
	made   map[seriesKey]struct{}
}

type series struct {
	vec    *prometheus.CounterVec
	values []string
}

type seriesKey struct {
	vec    *prometheus.CounterVec
	values string
}

// New creates the metrics and registers them with reg.
func New(reg prometheus.Registerer, build BuildInfo) *Metrics {
	m := &Metrics{
		targets:     map[string]*targetState{},
		reloadOK:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_config_last_reload_successful", Help: "Whether the last configuration reload attempt succeeded."}),
		reloadTime:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_config_last_reload_success_timestamp_seconds", Help: "Timestamp of the last successful configuration reload."}),
		targetCount: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_targets", Help: "Number of targets this instance probes."}),
		probes:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_probes_total", Help: "Probe runs by result."}, []string{"target", "result"}),
		failures:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_probe_failures_total", Help: "Failed probe runs by reason."}, []string{"target", "reason"}),
		skipped:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_probe_skipped_total", Help: "Runs that were due while the previous run of the target still ran."}, []string{"target"}),
		opened:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_findings_opened_total", Help: "Findings that appeared, by rule and severity."}, []string{"target", "rule", "severity"}),
		resolved:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_findings_resolved_total", Help: "Findings that went away, by rule and severity."}, []string{"target", "rule", "severity"}),
		servedChanges: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_served_changes_total",
			Help: "Run-to-run changes of the served tool set, by CHG id."}, []string{"target", "change"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "driftd_probe_duration_seconds", Help: "Duration of probe runs.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"target"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_mcp_requests_total",
			Help: "MCP requests sent, by method and outcome (success or a failure reason)."}, []string{"method", "outcome"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "driftd_mcp_request_duration_seconds", Help: "Duration of MCP requests.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"method"}),
		otlpFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_otlp_export_failures_total", Help: "Trace exports that failed."}),
		stateWrite:   prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_state_write_failures_total", Help: "State files that could not be written."}),
		stateRead:    prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_state_read_failures_total", Help: "State files that could not be read and were moved aside."}),
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_build_info", Help: "driftd build information.",
		ConstLabels: prometheus.Labels{"version": build.Version, "revision": build.Revision, "goversion": build.GoVersion}})
	buildInfo.Set(1)
	reg.MustRegister(buildInfo, m.reloadOK, m.reloadTime, m.targetCount, m.probes, m.failures, m.skipped, m.opened, m.resolved,
		m.servedChanges, m.duration, m.requests, m.requestDuration, m.otlpFailures, m.stateWrite, m.stateRead, collector{m})
	for _, method := range []string{"server/discover", "initialize", "notifications/initialized", "tools/list"} {
		m.requests.WithLabelValues(method, "success")
	}
	return m
}

// SetTargets reconciles the configured targets: new ones get their series,
// removed ones lose every series, counters included.
func (m *Metrics) SetTargets(ts []Target) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keep := map[string]bool{}
	for _, t := range ts {
		keep[t.Name] = true
		st, ok := m.targets[t.Name]
		if !ok {
			st = &targetState{}
			m.targets[t.Name] = st
			m.counter(st, m.probes, t.Name, "success")
			m.counter(st, m.probes, t.Name, "failure")
			m.counter(st, m.skipped, t.Name)
		}
		st.meta = t
	}
	for name := range m.targets {
		if !keep[name] {
			m.removeLocked(name)
		}
	}
	m.targetCount.Set(float64(len(m.targets)))
}

// Remove deletes every series of a target that is no longer configured.
func (m *Metrics) Remove(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeLocked(name)
	m.targetCount.Set(float64(len(m.targets)))
}

func (m *Metrics) removeLocked(name string) {
	st, ok := m.targets[name]
	if !ok {
		return
	}
	delete(m.targets, name)
	// Exact deletes of the series this target made: a partial-match
	// delete scans every series of the vector, which made removing
	// 10,000 targets quadratic.
	for _, sr := range st.series {
		sr.vec.DeleteLabelValues(sr.values...)
	}
	m.duration.DeleteLabelValues(name)
}

// SetInterval records a target's schedule period (driftd_probe_interval_seconds).
func (m *Metrics) SetInterval(name string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.targets[name]; ok {
		st.interval = d
	}
}

// Observe records one finished run: the daemon's published outcome, read
// as it is (the finding gauges render its state's active findings, so a
// failed run, which compared nothing, does not make earlier findings
// vanish from /metrics).
func (m *Metrics) Observe(r *state.Run) {
	rep := r.Report
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.targets[rep.Target]
	if !ok {
		return // removed while it ran
	}
	st.run = r
	if rep.Success {
		st.lastSuccess = rep.StartedAt.Add(time.Duration(rep.DurationSeconds * float64(time.Second)))
		m.counter(st, m.probes, rep.Target, "success").Inc()
	} else {
		m.counter(st, m.probes, rep.Target, "failure").Inc()
		m.counter(st, m.failures, rep.Target, string(rep.FailureReason)).Inc()
	}
	m.duration.WithLabelValues(rep.Target).Observe(rep.DurationSeconds)
	for _, e := range r.Opened {
		m.counter(st, m.opened, rep.Target, e.Rule, string(e.Severity)).Inc()
	}
	for _, e := range r.Resolved {
		m.counter(st, m.resolved, rep.Target, e.Rule, string(e.Severity)).Inc()
	}
	for _, e := range r.ServedChanges {
		m.counter(st, m.servedChanges, rep.Target, e.Change).Inc()
	}
}

// counter returns vec's series of values, remembering it among the
// target's series so that removing the target deletes exactly these.
// Callers hold m.mu for writing.
func (m *Metrics) counter(st *targetState, vec *prometheus.CounterVec, values ...string) prometheus.Counter {
	key := seriesKey{vec, strings.Join(values, "\xff")}
	if _, ok := st.made[key]; !ok {
		if st.made == nil {
			st.made = map[seriesKey]struct{}{}
		}
		st.made[key] = struct{}{}
		st.series = append(st.series, series{vec, values})
	}
	return vec.WithLabelValues(values...)
}

// Skipped counts a run that was due while the previous one still ran.
func (m *Metrics) Skipped(name string) {
	m.mu.RLock()
	_, ok := m.targets[name]
	m.mu.RUnlock()
	if ok {
		m.skipped.WithLabelValues(name).Inc() // made by SetTargets
	}
}

// Exchange counts one MCP request; it is the probe's OnExchange hook.
func (m *Metrics) Exchange(ex *mcp.Exchange) {
	outcome := "success"
	if ex.Err != nil {
		outcome = string(mcp.Classify(ex.Err))
	}
	m.requests.WithLabelValues(ex.Method, outcome).Inc()
	m.requestDuration.WithLabelValues(ex.Method).Observe(ex.Duration.Seconds())
}

// ReloadResult records a configuration reload attempt.
func (m *Metrics) ReloadResult(ok bool, at time.Time) {
	if ok {
		m.reloadOK.Set(1)
		m.reloadTime.Set(float64(at.UnixNano()) / 1e9)
		return
	}
	m.reloadOK.Set(0)
}

// OTLPExportFailed, StateWriteFailed and StateReadFailed count faults of
// driftd's own.
func (m *Metrics) OTLPExportFailed() { m.otlpFailures.Inc() }

// StateWriteFailed counts a state file that could not be written.
func (m *Metrics) StateWriteFailed() { m.stateWrite.Inc() }

// StateReadFailed counts a state file that was corrupt or unreadable.
func (m *Metrics) StateReadFailed() { m.stateRead.Inc() }

func sortedNames(m map[string]*targetState) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
