// Package metrics turns published runs into Prometheus series.
//
// driftd's own series (build, reloads, targets, MCP requests, faults,
// scheduler lateness) are client_golang metrics in a registry. The
// per-target families — gauges read from each target's latest published
// run and the per-target counters — are kept as plain numbers per target
// and written straight into the text exposition at scrape time: at 10,000
// targets that is ~140,000 series, and building a protobuf message per
// series only to print it again cost more than the whole budget (DESIGN
// §14: a scrape ≤ 300 ms). A removed target's series go with its entry.
package metrics

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

// BuildInfo identifies the running binary.
type BuildInfo struct{ Version, Revision, GoVersion string }

// Options choose how much detail the per-target series carry.
type Options struct {
	// PerTargetHistograms gives driftd_probe_duration_seconds a target
	// label (15 series per target). Off, it is one histogram for the
	// instance; driftd_probe_last_duration_seconds carries each target's
	// latest duration either way.
	PerTargetHistograms bool
	// LogRing, if set, reports the bytes the status pages' log ring holds
	// and its bound (driftd_log_ring_bytes, driftd_log_ring_capacity_bytes).
	LogRing func() (held, bound int)
	// Inflight, if set, is the daemon's pool of response bytes in flight
	// (global.max_inflight_bytes), read at scrape time.
	Inflight *mcp.Pool
}

// Target is what the metrics need to know of a configured target.
type Target struct {
	Name   string
	Labels map[string]string
	// SeriesLimit caps driftd_finding series (those with a tool label).
	SeriesLimit int
	// Ignores is the number of ignore entries that apply to the target;
	// driftd_findings_ignored and driftd_ignores_stale exist for targets
	// that have any.
	Ignores int
}

// durationBuckets are driftd_probe_duration_seconds' upper bounds.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics holds every driftd series.
type Metrics struct {
	opts Options
	// lastSize is the length of the last exposition /metrics served.
	lastSize atomic.Int64
	scratch  scratch

	mu      sync.RWMutex
	targets map[string]*targetState
	// names is the targets' names, sorted: the order of every family.
	names []string
	// duration is the instance-wide probe duration histogram, when it
	// has no target label.
	duration histogram

	reloadOK, reloadTime, targetCount prometheus.Gauge
	requests                          *prometheus.CounterVec
	requestDuration                   *prometheus.HistogramVec
	lateness                          prometheus.Histogram
	otlpFailures, stateWrite          prometheus.Counter
	stateRead                         prometheus.Counter
	sd                                *sdMetrics
}

// targetState is one target's series: the run its gauges are read from
// and its counters. Guarded by Metrics.mu.
type targetState struct {
	meta     Target
	interval time.Duration
	// run is the target's latest published run; nil until the target's
	// first run since start.
	run         *state.Run
	lastSuccess time.Time
	// lastOK is the latest successful run's report: what a failed run
	// cannot say (the served counts, the server and revision it
	// established) is read from it, so those series neither vanish nor
	// change their labels while a target is down. The same pointer as
	// run's report while runs succeed.
	lastOK *probe.Report

	probesOK, probesFailed, skipped uint64
	failures                        counts // by reason
	opened, resolved                counts // by rule "\xff" severity
	servedChanges                   counts // by CHG id
	duration                        histogram
}

// counts is a set of counters by one label value (or two joined by
// "\xff"), rendered in sorted order.
type counts map[string]uint64

func (c *counts) inc(key string) {
	if *c == nil {
		*c = counts{}
	}
	(*c)[key]++
}

// appendKeys appends c's keys to out, sorted.
func (c counts) appendKeys(out []string) []string {
	from := len(out)
	for k := range c {
		out = append(out, k)
	}
	slices.Sort(out[from:])
	return out
}

// histogram is a cumulative-at-render histogram over durationBuckets.
type histogram struct {
	buckets []uint64 // per bucket, not cumulative; nil until observed
	count   uint64
	sum     float64
}

func (h *histogram) observe(v float64) {
	if h.buckets == nil {
		h.buckets = make([]uint64, len(durationBuckets))
	}
	for i, ub := range durationBuckets {
		if v <= ub {
			h.buckets[i]++
			break
		}
	}
	h.count++
	h.sum += v
}

// New creates the metrics and registers driftd's own series with reg.
func New(reg prometheus.Registerer, build BuildInfo, opts Options) *Metrics {
	m := &Metrics{
		opts:        opts,
		targets:     map[string]*targetState{},
		reloadOK:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_config_last_reload_successful", Help: "Whether the last configuration reload attempt succeeded."}),
		reloadTime:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_config_last_reload_success_timestamp_seconds", Help: "Timestamp of the last successful configuration reload."}),
		targetCount: prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_targets", Help: "Number of targets this instance probes."}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "driftd_mcp_requests_total",
			Help: "MCP requests sent, by method and outcome (success or a failure reason)."}, []string{"method", "outcome"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "driftd_mcp_request_duration_seconds", Help: "Duration of MCP requests.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"method"}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "driftd_scheduler_start_lateness_seconds",
			Help:    "How long after its scheduled time each run started.",
			Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
		otlpFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_otlp_export_failures_total", Help: "Trace exports that failed."}),
		stateWrite:   prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_state_write_failures_total", Help: "State files that could not be written."}),
		stateRead:    prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_state_read_failures_total", Help: "State files that could not be read and were moved aside."}),
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{Name: "driftd_build_info", Help: "driftd build information.",
		ConstLabels: prometheus.Labels{"version": build.Version, "revision": build.Revision, "goversion": build.GoVersion}})
	buildInfo.Set(1)
	reg.MustRegister(buildInfo, m.reloadOK, m.reloadTime, m.targetCount, m.requests, m.requestDuration, m.lateness,
		m.otlpFailures, m.stateWrite, m.stateRead)
	m.sd = newSDMetrics(reg)
	if ring := opts.LogRing; ring != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "driftd_log_ring_bytes", Help: "Bytes of log lines the status pages' ring holds, all targets together."},
				func() float64 { held, _ := ring(); return float64(held) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "driftd_log_ring_capacity_bytes", Help: "The bound of the status pages' log ring (--log.ring-bytes)."},
				func() float64 { _, bound := ring(); return float64(bound) }))
	}
	if pool := opts.Inflight; pool != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "driftd_inflight_response_bytes", Help: "Response bytes the runs in flight hold, all targets together."},
				func() float64 { return float64(pool.InUse()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "driftd_inflight_response_bytes_limit", Help: "The pool of response bytes in flight (global.max_inflight_bytes); a run above its share fails when it is spent."},
				func() float64 { return float64(pool.Limit()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "driftd_inflight_refusals_total", Help: "Reads refused because the pool of response bytes in flight was spent; each fails its run as response_too_large."},
				func() float64 { return float64(pool.Refused()) }))
	}
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
	keep := make(map[string]bool, len(ts))
	for _, t := range ts {
		keep[t.Name] = true
		st, ok := m.targets[t.Name]
		if !ok {
			st = &targetState{}
			m.targets[t.Name] = st
		}
		st.meta = t
	}
	for name := range m.targets {
		if !keep[name] {
			delete(m.targets, name)
		}
	}
	m.sortLocked()
}

// Remove deletes every series of a target that is no longer configured.
func (m *Metrics) Remove(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.targets[name]; ok {
		delete(m.targets, name)
		m.sortLocked()
	}
}

func (m *Metrics) sortLocked() {
	m.names = m.names[:0]
	for name := range m.targets {
		m.names = append(m.names, name)
	}
	slices.Sort(m.names)
	m.targetCount.Set(float64(len(m.targets)))
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
		st.lastOK = rep
		st.lastSuccess = rep.StartedAt.Add(secondsDuration(rep.DurationSeconds))
		st.probesOK++
	} else {
		st.probesFailed++
		st.failures.inc(string(rep.FailureReason))
	}
	if m.opts.PerTargetHistograms {
		st.duration.observe(rep.DurationSeconds)
	} else {
		m.duration.observe(rep.DurationSeconds)
	}
	for _, e := range r.Opened {
		st.opened.inc(e.Rule + "\xff" + string(e.Severity))
	}
	for _, e := range r.Resolved {
		st.resolved.inc(e.Rule + "\xff" + string(e.Severity))
	}
	for _, e := range r.ServedChanges {
		st.servedChanges.inc(e.Change)
	}
}

// Skipped counts a run that was due while the previous one still ran.
func (m *Metrics) Skipped(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.targets[name]; ok {
		st.skipped++
	}
}

// Late records how long after its scheduled time a run started; it is the
// scheduler's OnLate hook.
func (m *Metrics) Late(_ string, late time.Duration) { m.lateness.Observe(late.Seconds()) }

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

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
