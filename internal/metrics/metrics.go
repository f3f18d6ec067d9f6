// Package metrics turns published runs into Prometheus series.
//
// driftd's own series (build, reloads, targets, MCP requests, faults,
// scheduler lateness, the probe duration histogram) are client_golang
// metrics in a registry. The per-target families are read from each
// target's latest published run and the counters kept beside it, and
// rendered into that target's lines whenever they change (render.go):
// driftd probes on its own clock, so what a run found outlives the run.
// A target's counters start at 0 when it is scheduled and go, with every
// other series of it, when it is removed. At start, a target's gauges are
// its last run saved in the state file, marked restored, until it runs
// (Restore): a restart leaves no gap. The handler (handler.go)
// writes both in the format the scraper negotiates.
package metrics

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

// BuildInfo identifies the running binary: prometheus/common/version's
// fields, as driftd_build_info labels them.
type BuildInfo struct{ Version, Revision, Branch, GoVersion, GoOS, GoArch, Tags string }

// collector is client_golang's driftd_build_info, the one Prometheus and
// the exporters register, labelled from b rather than from the package
// variables so that what the daemon was given is what it exposes.
func (b BuildInfo) collector() prometheus.Collector {
	return versioncollector.NewCollector("driftd", versioncollector.WithExtraConstLabels(prometheus.Labels{
		"version": b.Version, "revision": b.Revision, "branch": b.Branch,
		"goversion": b.GoVersion, "goos": b.GoOS, "goarch": b.GoArch, "tags": b.Tags,
	}))
}

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
	// OAuth is true for a target with an oauth identity: its
	// driftd_oauth_* series exist; Login for one whose identity is a
	// person's session (driftd_oauth_login_required).
	OAuth, Login bool
}

// durationBuckets are driftd_probe_duration_seconds' upper bounds.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics holds every driftd series.
type Metrics struct {
	opts Options
	// now is the clock of the counters' creation times (_created).
	now func() time.Time

	mu      sync.RWMutex
	targets map[string]*targetState
	// names is the targets' names, sorted.
	names []string
	// info is driftd_target_info's label names: the fixed ones plus the
	// union of the targets' configured labels.
	info []string
	// renderBuf is what a target's lines are rendered into before they
	// are copied out (targetState.render).
	renderBuf []byte

	reloadOK, reloadTime, targetCount prometheus.Gauge
	requests                          *prometheus.CounterVec
	requestDuration                   *prometheus.HistogramVec
	lateness                          prometheus.Histogram
	otlpFailures, stateWrite          prometheus.Counter
	stateRead, stateRemoved           prometheus.Counter
	// duration is driftd_probe_duration_seconds: one histogram for the
	// instance, or one child per target with Options.PerTargetHistograms.
	duration          prometheus.Histogram
	durationPerTarget *prometheus.HistogramVec
	sd                *sdMetrics
}

// targetState is one target's series: the run its gauges are read from
// and its counters. Guarded by Metrics.mu.
type targetState struct {
	meta     Target
	interval time.Duration
	// run is the target's latest published run; nil until the target's
	// first run since start, unless its saved run was restored (restored).
	run         *state.Run
	lastSuccess time.Time
	// lastOK is the latest successful run's report: what a failed run
	// cannot say (the served counts, the server and revision it
	// established) is read from it, so those series neither vanish nor
	// change their labels while a target is down. The same pointer as
	// run's report while runs succeed.
	lastOK *probe.Report
	// restored is set while run is the target's last run saved before
	// start (Restore), cleared by its first run since.
	restored bool
	// out is the target's series as /metrics writes them, rendered
	// again whenever they change.
	out *rendered

	// since is when the target was scheduled: the creation time of the
	// counters that start at 0 then, one for every value of their labels
	// (driftd_probes_total, driftd_oauth_token_requests_total).
	since                  time.Time
	probesOK, probesFailed uint64
	tokenRequests          []uint64 // by oauth.Outcomes' index
	// The rest are created at their first event (docs/metrics.md, "What
	// a target costs in series"): at 0 they would be 12 of a healthy
	// target's series, and driftd_probes_total{result="failure"}, at 0
	// from the start, already counts every failed run.
	skipped          lazyCounts // one counter, key ""
	failures         lazyCounts // by reason
	opened, resolved lazyCounts // by rule "\xff" severity
	servedChanges    lazyCounts // by CHG id
}

// lazyCount is a counter created at its first event rather than when its
// target is scheduled — its labels take too many values to create them
// all up front (rule × severity, CHG ids), or a healthy target never
// counts it (failure reasons, skipped runs): it is created at its
// first event, which its created time records, so a scraper that reads
// OpenMetrics' _created sees that first event as an increase from 0.
// driftd_findings_opened_total's counters of a target's initial findings
// (state.Transition.Initial) are created at 0 instead: no event.
type lazyCount struct {
	n       uint64
	created time.Time
}

// lazyCounts is a set of lazyCount by one label value, or two joined by
// "\xff".
type lazyCounts map[string]*lazyCount

func (c *lazyCounts) inc(key string, now time.Time) {
	c.create(key, now).n++
}

// create returns the counter of key, creating it at 0 at now if it does
// not exist yet: the series appears without counting an event.
func (c *lazyCounts) create(key string, now time.Time) *lazyCount {
	if *c == nil {
		*c = lazyCounts{}
	}
	lc, ok := (*c)[key]
	if !ok {
		lc = &lazyCount{created: now}
		(*c)[key] = lc
	}
	return lc
}

// New creates the metrics and registers every driftd series with reg:
// its own, and the per-target families' collector.
func New(reg prometheus.Registerer, build BuildInfo, opts Options) *Metrics {
	m := &Metrics{
		opts:        opts,
		now:         time.Now,
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
		stateRemoved: prometheus.NewCounter(prometheus.CounterOpts{Name: "driftd_state_removed_total",
			Help: "Targets whose state files were removed, gone from the configuration and discovery for global.state_retention."}),
	}
	m.info = targetInfoLabels(nil)
	durationOpts := prometheus.HistogramOpts{Name: "driftd_probe_duration_seconds", Help: "Duration of probe runs.", Buckets: durationBuckets}
	var duration prometheus.Collector
	if opts.PerTargetHistograms {
		m.durationPerTarget = prometheus.NewHistogramVec(durationOpts, []string{"target"})
		duration = m.durationPerTarget
	} else {
		m.duration = prometheus.NewHistogram(durationOpts)
		duration = m.duration
	}
	reg.MustRegister(build.collector(), m.reloadOK, m.reloadTime, m.targetCount, m.requests, m.requestDuration, m.lateness,
		m.otlpFailures, m.stateWrite, m.stateRead, m.stateRemoved, duration)
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

// SetTargets reconciles the configured targets: a new one is scheduled,
// its counters created at 0; a removed one loses every series, counters
// included.
func (m *Metrics) SetTargets(ts []Target) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keep := make(map[string]bool, len(ts))
	changed := map[string]bool{}
	for _, t := range ts {
		keep[t.Name] = true
		st, ok := m.targets[t.Name]
		if !ok {
			st = &targetState{since: m.now(), tokenRequests: make([]uint64, len(oauth.Outcomes))}
			m.targets[t.Name] = st
			if m.durationPerTarget != nil {
				m.durationPerTarget.WithLabelValues(t.Name)
			}
		}
		if !ok || st.meta.SeriesLimit != t.SeriesLimit || st.meta.Ignores != t.Ignores || st.meta.OAuth != t.OAuth || st.meta.Login != t.Login || !maps.Equal(st.meta.Labels, t.Labels) {
			changed[t.Name] = true
		}
		st.meta = t
	}
	for name := range m.targets {
		if !keep[name] {
			m.removeLocked(name)
		}
	}
	info := m.info
	m.sortLocked()
	for name, st := range m.targets {
		if changed[name] || !slices.Equal(info, m.info) {
			m.renderLocked(name, st)
		}
	}
}

// Remove deletes every series of a target that is no longer configured.
func (m *Metrics) Remove(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.targets[name]; ok {
		m.removeLocked(name)
		info := m.info
		m.sortLocked()
		if !slices.Equal(info, m.info) {
			for name, st := range m.targets {
				m.renderLocked(name, st)
			}
		}
	}
}

func (m *Metrics) removeLocked(name string) {
	delete(m.targets, name)
	if m.durationPerTarget != nil {
		m.durationPerTarget.DeleteLabelValues(name)
	}
}

// sortLocked refreshes what follows from the set of targets: their
// order, their count and driftd_target_info's labels.
func (m *Metrics) sortLocked() {
	m.names = m.names[:0]
	var labels []string
	for name, st := range m.targets {
		m.names = append(m.names, name)
		for k := range st.meta.Labels {
			labels = append(labels, k)
		}
	}
	slices.Sort(m.names)
	m.info = targetInfoLabels(labels)
	m.targetCount.Set(float64(len(m.targets)))
}

// renderLocked renders a target's series after they changed.
func (m *Metrics) renderLocked(name string, st *targetState) {
	st.out, m.renderBuf = st.render(name, m.info, m.renderBuf)
}

// targetInfoLabels are driftd_target_info's label names: the fixed ones
// (config.TargetInfoLabels) plus the targets' configured ones, which
// config keeps from colliding with them, in name order.
func targetInfoLabels(configured []string) []string {
	labels := slices.Clone(config.TargetInfoLabels)
	for _, l := range configured {
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	slices.Sort(labels)
	return labels
}

// SetInterval records a target's schedule period (driftd_probe_interval_seconds).
func (m *Metrics) SetInterval(name string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.targets[name]; ok && st.interval != d {
		st.interval = d
		m.renderLocked(name, st)
	}
}

// Observe records one finished run: the daemon's published outcome, read
// as it is (the finding gauges read its state's active findings, so a
// failed run, which compared nothing, does not make earlier findings
// vanish from /metrics).
func (m *Metrics) Observe(r *state.Run) {
	rep := r.Report
	if rep == nil {
		return // a state loaded from disk: no run to count
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.targets[rep.Target]
	if !ok {
		return // removed while it ran
	}
	now := m.now()
	st.run, st.restored = r, false
	if rep.Success {
		st.lastOK = rep
		st.lastSuccess = rep.StartedAt.Add(secondsDuration(rep.DurationSeconds))
		st.probesOK++
	} else {
		st.probesFailed++
		st.failures.inc(string(rep.FailureReason), now)
	}
	if m.durationPerTarget != nil {
		m.durationPerTarget.WithLabelValues(rep.Target).Observe(rep.DurationSeconds)
	} else {
		m.duration.Observe(rep.DurationSeconds)
	}
	if u := rep.AuthPosture.OAuth; u != nil {
		for _, o := range u.TokenRequests {
			if i := slices.Index(oauth.Outcomes, o); i >= 0 {
				st.tokenRequests[i]++
			}
		}
	}
	for _, e := range r.Opened {
		if r.Initial {
			// What the target already had when its state began is not
			// news: the counter is created at 0, so neither increase()
			// nor a series born at 1 reads it as an opening.
			st.opened.create(e.Rule+"\xff"+string(e.Severity), now)
		} else {
			st.opened.inc(e.Rule+"\xff"+string(e.Severity), now)
		}
	}
	for _, e := range r.Resolved {
		st.resolved.inc(e.Rule+"\xff"+string(e.Severity), now)
	}
	for _, e := range r.ServedChanges {
		st.servedChanges.inc(e.Change, now)
	}
	m.renderLocked(rep.Target, st)
}

// Restore publishes the last run saved for a target that has not run
// since start: r is its state as loaded (no report), whose LastRun is
// read as that run's report. Its gauges — findings, probe_success, the
// last run's and success's times, driftd_target_info — are then what
// they were before the restart, and driftd_target_restored is 1, until
// its first run. Its counters stay at 0: they count this process's runs.
// The counts of a listing (driftd_tools, driftd_list_items) and of
// ignores are not saved and wait for that run. A target whose state
// holds no saved run is left as it is, and so is one whose series are
// published already.
//
// A target removed and added back while its runtime was kept (a reload
// that dropped it, one that restored it) has a run of this process
// already, with its report: that run is published as it is, uncounted.
//
// A state file written before runs were saved (state.State.SavedRun)
// still restores the findings and probe_success, without times or info.
func (m *Metrics) Restore(r *state.Run) {
	if r.State == nil || r.State.SavedRun() == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	name := r.State.Target
	st, ok := m.targets[name]
	if !ok || st.run != nil {
		return
	}
	lr := r.State.SavedRun()
	if r.Report != nil {
		st.run, st.lastOK, st.lastSuccess = r, r.Compared, lr.LastSuccess
	} else {
		st.run = &state.Run{Report: lr.Report(name), State: r.State, LastCompared: r.LastCompared}
		st.lastOK, st.lastSuccess, st.restored = lr.Established(name), lr.LastSuccess, true
	}
	m.renderLocked(name, st)
}

// Skipped counts a run that was due while the previous one still ran.
func (m *Metrics) Skipped(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.targets[name]; ok {
		st.skipped.inc("", m.now())
		m.renderLocked(name, st)
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

// StateRemoved counts a vanished target whose state files were removed.
func (m *Metrics) StateRemoved() { m.stateRemoved.Inc() }

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
