package metrics

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// contentType is the text exposition format 0.0.4, which every Prometheus
// version accepts whatever its Accept header offers.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// scratch is what a scrape renders and compresses with: the exposition's
// buffer and a gzip writer (about a megabyte of compressor state). The
// Metrics keeps one and a scrape uses it when no other scrape does; a
// sync.Pool would not do, since the garbage collector empties it many
// times between two scrapes of a busy daemon, and a scrape that allocates
// 10 MB afresh during a collection is made to pay for marking in
// proportion — hundreds of milliseconds with 10,000 targets' runs about.
//
// The kept buffer is outside the Go heap (keptBuffer): 10.5 MB for 10,000
// targets, which on the heap raised the collector's goal by as much again
// and cost about 2 KiB of RSS a target, a tenth of DESIGN §14's budget.
type scratch struct {
	sync.Mutex
	exp *keptBuffer
	gz  *gzip.Writer
}

// keptBuffer is a buffer of anonymous memory (mapBytes), given back when
// the keptBuffer is no longer reachable: when the Metrics is not, or when
// a larger one took its place. Never unmapped while reachable, it is
// never unmapped under a scrape that renders into it.
type keptBuffer struct{ b []byte }

func newKeptBuffer(n int) *keptBuffer {
	b := mapBytes(n)
	if b == nil {
		return nil
	}
	e := &keptBuffer{b: b[:0]}
	runtime.AddCleanup(e, unmapBytes, b)
	return e
}

// buffer returns an empty buffer for an exposition of about want bytes:
// if kept, the Metrics' kept one, grown to it if need be; else one on the
// heap. Only the kept scratch may hold anonymous memory: it stays
// reachable from the Metrics through the whole scrape, where a scrape's
// own scratch could be collected, and its memory unmapped, while the
// scrape still writes into the slice, which the collector does not see.
func (sc *scratch) buffer(want int, kept bool) []byte {
	if want += want / 8; !kept || want > maxKeptExposition {
		return make([]byte, 0, want)
	}
	if sc.exp == nil || cap(sc.exp.b) < want {
		sc.exp = newKeptBuffer(max(want, 64<<10))
		if sc.exp == nil {
			return make([]byte, 0, want)
		}
	}
	return sc.exp.b
}

// maxKeptExposition bounds the buffer a Metrics keeps between scrapes.
const maxKeptExposition = 64 << 20

// Handler serves /metrics: g's families (driftd's own series and the Go
// and process collectors) through client_golang's encoder, then the
// per-target families. The per-target part is rendered into a buffer
// under the read lock and written out after it, so a slow client never
// holds up a finishing run. A Gather error is answered 500, as promhttp's
// default does.
func (m *Metrics) Handler(g prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mfs, err := g.Gather()
		if err != nil {
			http.Error(w, "error gathering metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		sc, kept := &scratch{}, m.scratch.TryLock() // another scrape has the kept one: its own
		if kept {
			sc = &m.scratch
			defer m.scratch.Unlock()
		}
		buf := bytes.NewBuffer(sc.buffer(int(m.lastSize.Load()), kept))
		enc := expfmt.NewEncoder(buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				http.Error(w, "error encoding metrics: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		body := m.AppendTargets(buf.Bytes())
		m.lastSize.Store(int64(len(body))) // the next scrape's buffer is sized to it
		h := w.Header()
		h.Set("Content-Type", contentType)
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
			if sc.gz == nil {
				sc.gz, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
			} else {
				sc.gz.Reset(w)
			}
			defer func() { _ = sc.gz.Close() }()
			out = sc.gz
		} else {
			h.Set("Content-Length", strconv.Itoa(len(body)))
		}
		_, _ = out.Write(body)
	})
}

func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		enc, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			return true
		}
	}
	return false
}

// AppendTargets appends the per-target families to b in the text format:
// each family's series together, targets in name order.
func (m *Metrics) AppendTargets(b []byte) []byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := &expo{b: b}
	m.render(e)
	return e.b
}

// established is the report a target's established facts are read from:
// rep while it succeeded, else the latest successful one, if any.
func (st *targetState) established(rep *probe.Report) *probe.Report {
	if rep.Success || st.lastOK == nil {
		return rep
	}
	return st.lastOK
}

// each calls f for every target with a published run, in name order.
func (m *Metrics) each(f func(name string, st *targetState, rep *probe.Report)) {
	for _, name := range m.names {
		st := m.targets[name]
		if st.run != nil && st.run.Report != nil {
			f(name, st, st.run.Report)
		}
	}
}

func (m *Metrics) render(e *expo) {
	m.renderFindings(e)
	e.family("driftd_findings_ignored", "gauge", "Findings suppressed by ignore entries on the last run (targets with ignore entries).")
	m.each(func(name string, st *targetState, rep *probe.Report) {
		if st.meta.Ignores > 0 || len(rep.Ignored)+rep.IgnoredOmitted > 0 {
			e.start("driftd_findings_ignored").label("target", name).value(float64(len(rep.Ignored) + rep.IgnoredOmitted))
		}
	})
	m.renderCounts(e, "driftd_findings_opened_total", "Findings that appeared, by rule and severity.", func(st *targetState) counts { return st.opened }, "rule", "severity")
	m.renderCounts(e, "driftd_findings_resolved_total", "Findings that went away, by rule and severity.", func(st *targetState) counts { return st.resolved }, "rule", "severity")
	e.family("driftd_ignores_stale", "gauge", "Ignore entries that matched nothing or have expired (targets with ignore entries).")
	m.each(func(name string, st *targetState, rep *probe.Report) {
		if st.meta.Ignores > 0 || len(rep.StaleIgnores) > 0 {
			e.start("driftd_ignores_stale").label("target", name).value(float64(len(rep.StaleIgnores)))
		}
	})
	m.renderDuration(e)
	m.renderCounts(e, "driftd_probe_failures_total", "Failed probe runs by reason.", func(st *targetState) counts { return st.failures }, "reason")
	e.family("driftd_probe_interval_seconds", "gauge", "The current period of the target's schedule.")
	for _, name := range m.names {
		if st := m.targets[name]; st.interval > 0 {
			e.start("driftd_probe_interval_seconds").label("target", name).value(st.interval.Seconds())
		}
	}
	e.family("driftd_probe_last_duration_seconds", "gauge", "Duration of the target's last run.")
	m.each(func(name string, _ *targetState, rep *probe.Report) {
		e.start("driftd_probe_last_duration_seconds").label("target", name).value(rep.DurationSeconds)
	})
	e.family("driftd_probe_last_run_timestamp_seconds", "gauge", "When the target's last run ended.")
	m.each(func(name string, _ *targetState, rep *probe.Report) {
		end := rep.StartedAt.Add(secondsDuration(rep.DurationSeconds))
		e.start("driftd_probe_last_run_timestamp_seconds").label("target", name).value(float64(end.UnixNano()) / 1e9)
	})
	e.family("driftd_probe_last_success_timestamp_seconds", "gauge", "When the target's last successful run ended.")
	m.each(func(name string, st *targetState, _ *probe.Report) {
		if !st.lastSuccess.IsZero() {
			e.start("driftd_probe_last_success_timestamp_seconds").label("target", name).value(float64(st.lastSuccess.UnixNano()) / 1e9)
		}
	})
	e.family("driftd_probe_skipped_total", "counter", "Runs that were due while the previous run of the target still ran.")
	for _, name := range m.names {
		e.start("driftd_probe_skipped_total").label("target", name).value(float64(m.targets[name].skipped))
	}
	e.family("driftd_probe_success", "gauge", "Whether the last run of the target could list and compare its tools.")
	m.each(func(name string, _ *targetState, rep *probe.Report) {
		e.start("driftd_probe_success").label("target", name).value(boolValue(rep.Success))
	})
	e.family("driftd_probes_total", "counter", "Probe runs by result.")
	for _, name := range m.names {
		st := m.targets[name]
		e.start("driftd_probes_total").label("result", "failure").label("target", name).value(float64(st.probesFailed))
		e.start("driftd_probes_total").label("result", "success").label("target", name).value(float64(st.probesOK))
	}
	m.renderCounts(e, "driftd_served_changes_total", "Run-to-run changes of the served tool set, by CHG id.", func(st *targetState) counts { return st.servedChanges }, "change")
	e.family("driftd_served_last_change_timestamp_seconds", "gauge", "When the served tool set last changed between runs.")
	m.each(func(name string, st *targetState, _ *probe.Report) {
		if lc := st.run.State.ServedLastChange; !lc.IsZero() {
			e.start("driftd_served_last_change_timestamp_seconds").label("target", name).value(float64(lc.UnixNano()) / 1e9)
		}
	})
	m.renderInfo(e)
	e.family("driftd_tools", "gauge", "Tools declared in the manifest and served on the last successful listing.")
	m.each(func(name string, st *targetState, rep *probe.Report) {
		e.start("driftd_tools").label("source", "declared").label("target", name).value(float64(rep.Tools.Declared))
		if ok := st.established(rep); ok.Success {
			e.start("driftd_tools").label("source", "served").label("target", name).value(float64(ok.Tools.Served))
		}
	})
	e.family("driftd_list_items", "gauge", "Prompts, resources and resource templates (kind) declared in the manifest and served on the last successful run; only for lists the run read.")
	m.each(func(name string, st *targetState, rep *probe.Report) {
		ok := st.established(rep)
		for _, k := range mcp.ItemKinds {
			if c := rep.ListCounts(k); c != nil {
				e.start("driftd_list_items").label("kind", string(k)).label("source", "declared").label("target", name).value(float64(c.Declared))
			}
			if c := ok.ListCounts(k); c != nil && ok.Success {
				e.start("driftd_list_items").label("kind", string(k)).label("source", "served").label("target", name).value(float64(c.Served))
			}
		}
	})
}

// renderCounts writes a per-target counter family keyed by one or two
// label values (two joined by "\xff"), labels in name order with target
// last — the callers' label names all sort before "target".
func (m *Metrics) renderCounts(e *expo, name, help string, of func(*targetState) counts, labels ...string) {
	e.family(name, "counter", help)
	var keys []string // one slice for every target's keys
	for _, target := range m.names {
		c := of(m.targets[target])
		keys = c.appendKeys(keys[:0])
		for _, k := range keys {
			e.start(name)
			if len(labels) == 2 {
				a, b, _ := strings.Cut(k, "\xff")
				e.label(labels[0], a).label(labels[1], b)
			} else {
				e.label(labels[0], k)
			}
			e.label("target", target).value(float64(c[k]))
		}
	}
}

// renderFindings writes driftd_finding (capped per target),
// driftd_finding_series_dropped (where the cap dropped any) and
// driftd_findings. Every target's tool series and counts go into one
// slice each, a target's a run of it, and one map, cleared between
// targets, says which series a target kept: a map or two a target made a
// scrape of 10,000 targets allocate 40,000 times, in the middle of the
// runs' garbage.
func (m *Metrics) renderFindings(e *expo) {
	type key struct{ rule, sev string }
	type keyCount struct {
		key
		n int
	}
	type perTarget struct {
		tools, counts [2]int // [from, to) in tools and counts
		dropped       int
	}
	all := make([]perTarget, len(m.names))
	var tools [][4]string
	var counts []keyCount
	seen := map[[4]string]bool{} // a target's kept tool series; one map for all
	count := func(from int, k key, n int) []keyCount {
		for j := from; j < len(counts); j++ {
			if counts[j].key == k {
				counts[j].n += n
				return counts
			}
		}
		return append(counts, keyCount{k, n})
	}
	for i, name := range m.names {
		st := m.targets[name]
		if st.run == nil {
			continue
		}
		pt := &all[i]
		pt.tools[0], pt.counts[0] = len(tools), len(counts)
		clear(seen)
		for _, f := range st.run.State.Active() {
			counts = count(pt.counts[0], key{f.Rule, string(f.Severity)}, 1)
			if f.Tool == "" {
				continue
			}
			kind := f.ItemKind
			if kind == "" {
				kind = "tool"
			}
			k := [4]string{kind, f.Rule, string(f.Severity), sanitize.Name(f.Tool)}
			if seen[k] {
				continue
			}
			if len(seen) >= st.meta.SeriesLimit {
				pt.dropped++
				continue
			}
			seen[k] = true
			tools = append(tools, k)
		}
		for _, o := range st.run.State.Omitted {
			counts = count(pt.counts[0], key{o.Rule, string(o.Severity)}, o.Count)
		}
		pt.tools[1], pt.counts[1] = len(tools), len(counts)
	}
	e.family("driftd_finding", "gauge", "One active finding that names a tool, prompt, resource or resource template (kind), capped per target.")
	for i, name := range m.names {
		ts := tools[all[i].tools[0]:all[i].tools[1]]
		slices.SortFunc(ts, func(a, b [4]string) int { return slices.Compare(a[:], b[:]) })
		for _, k := range ts {
			e.start("driftd_finding").label("kind", k[0]).label("rule", k[1]).label("severity", k[2]).label("target", name).label("tool", k[3]).value(1)
		}
	}
	e.family("driftd_finding_series_dropped", "gauge", "Active findings with a tool left out of driftd_finding by the per-target cap (targets where it dropped any).")
	for i, name := range m.names {
		if all[i].dropped > 0 {
			e.start("driftd_finding_series_dropped").label("target", name).value(float64(all[i].dropped))
		}
	}
	e.family("driftd_findings", "gauge", "Active findings by rule and severity.")
	for i, name := range m.names {
		cs := counts[all[i].counts[0]:all[i].counts[1]]
		slices.SortFunc(cs, func(a, b keyCount) int {
			if c := strings.Compare(a.rule, b.rule); c != 0 {
				return c
			}
			return strings.Compare(a.sev, b.sev)
		})
		for _, c := range cs {
			e.start("driftd_findings").label("rule", c.rule).label("severity", c.sev).label("target", name).value(float64(c.n))
		}
	}
}

// renderDuration writes driftd_probe_duration_seconds: one histogram per
// target with Options.PerTargetHistograms, else one for the instance.
func (m *Metrics) renderDuration(e *expo) {
	const name = "driftd_probe_duration_seconds"
	e.family(name, "histogram", "Duration of probe runs.")
	write := func(h *histogram, target string) {
		var cum uint64
		for i, ub := range durationBuckets {
			if h.buckets != nil {
				cum += h.buckets[i]
			}
			e.start(name+"_bucket").label("le", strconv.FormatFloat(ub, 'g', -1, 64))
			if target != "" {
				e.label("target", target)
			}
			e.value(float64(cum))
		}
		e.start(name+"_bucket").label("le", "+Inf")
		if target != "" {
			e.label("target", target)
		}
		e.value(float64(h.count))
		for _, part := range []struct {
			suffix string
			v      float64
		}{{"_sum", h.sum}, {"_count", float64(h.count)}} {
			e.start(name + part.suffix)
			if target != "" {
				e.label("target", target)
			}
			e.value(part.v)
		}
	}
	if !m.opts.PerTargetHistograms {
		write(&m.duration, "")
		return
	}
	for _, name := range m.names {
		if st := m.targets[name]; st.duration.count > 0 {
			write(&st.duration, name)
		}
	}
}

// renderInfo writes driftd_target_info: the fixed labels
// (config.TargetInfoLabels) plus the union of every target's configured
// labels, empty where a target has none (which Prometheus treats as
// absent), all in name order.
func (m *Metrics) renderInfo(e *expo) {
	seen := map[string]bool{}
	for _, st := range m.targets {
		for k := range st.meta.Labels {
			seen[k] = true
		}
	}
	names := slices.Clone(config.TargetInfoLabels)
	for k := range seen {
		names = append(names, k)
	}
	slices.Sort(names)
	e.family("driftd_target_info", "gauge", "Identity of a target: its classification, the protocol revision and server it established, and its configured labels.")
	m.each(func(name string, st *targetState, rep *probe.Report) {
		fixed := infoValues(name, rep, st.established(rep))
		e.start("driftd_target_info")
		for _, l := range names {
			if i := slices.Index(config.TargetInfoLabels, l); i >= 0 {
				e.label(l, fixed[i])
			} else {
				e.label(l, st.meta.Labels[l])
			}
		}
		e.value(1)
	})
}

// infoValues are the values of config.TargetInfoLabels, the one list of
// driftd_target_info's fixed labels (config rejects target labels that
// collide with them), in that order: the classification from rep, the
// revision and server from est, the run that established them.
// An array, not a slice: one a target escaped to the heap.
func infoValues(name string, rep, est *probe.Report) [5]string {
	values := [5]string{name, rep.Classification.Class, revision(est.ProtocolRevision.Value), "", ""}
	if est.ServerInfo != nil {
		values[3], values[4] = sanitize.Name(est.ServerInfo.Name), sanitize.Name(est.ServerInfo.Version)
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

// expo appends the text exposition format. A family's HELP and TYPE are
// written before its first series, so a family without series leaves
// nothing, as client_golang's encoder does.
type expo struct {
	b       []byte
	pending []byte // the current family's header, until its first series
	labels  int    // labels written on the current series
}

func (e *expo) family(name, typ, help string) {
	e.pending = e.pending[:0]
	e.pending = append(e.pending, "# HELP "...)
	e.pending = append(e.pending, name...)
	e.pending = append(e.pending, ' ')
	e.pending = appendEscaped(e.pending, help, false)
	e.pending = append(e.pending, "\n# TYPE "...)
	e.pending = append(e.pending, name...)
	e.pending = append(e.pending, ' ')
	e.pending = append(e.pending, typ...)
	e.pending = append(e.pending, '\n')
}

func (e *expo) start(name string) *expo {
	if len(e.pending) > 0 {
		e.b = append(e.b, e.pending...)
		e.pending = e.pending[:0]
	}
	e.b = append(e.b, name...)
	e.labels = 0
	return e
}

func (e *expo) label(name, value string) *expo {
	if e.labels == 0 {
		e.b = append(e.b, '{')
	} else {
		e.b = append(e.b, ',')
	}
	e.labels++
	e.b = append(e.b, name...)
	e.b = append(e.b, '=', '"')
	e.b = appendEscaped(e.b, value, true)
	e.b = append(e.b, '"')
	return e
}

func (e *expo) value(v float64) {
	if e.labels > 0 {
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ' ')
	switch {
	case math.IsInf(v, 1):
		e.b = append(e.b, "+Inf"...)
	case math.IsInf(v, -1):
		e.b = append(e.b, "-Inf"...)
	case math.IsNaN(v):
		e.b = append(e.b, "NaN"...)
	default:
		e.b = strconv.AppendFloat(e.b, v, 'g', -1, 64)
	}
	e.b = append(e.b, '\n')
}

// appendEscaped escapes as the text format asks: backslash and newline
// everywhere, the double quote in label values.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '"' && quote:
			b = append(b, '\\', '"')
		default:
			b = append(b, c)
		}
	}
	return b
}
