package metrics

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// rendered is one target's series, rendered when they change (the way
// kube-state-metrics keeps its objects' series) and concatenated family
// by family at scrape time: through client_golang's registry, 10,000
// targets' series cost a scrape ten times DESIGN §14's 300 ms
// (docs/metrics.md). It is never written after it is built.
//
// The lines are those of the text format and OpenMetrics alike, but for
// a counter's: its sample carries its creation time, from which the
// handler writes OpenMetrics' _created sample (lineWriter.counter).
type rendered struct {
	b []byte
	// end[f] is where family f's lines end; they start where f-1's end.
	end [numFamilies]int32
}

func (r *rendered) family(f int) []byte {
	if r == nil {
		return nil
	}
	from := int32(0)
	if f > 0 {
		from = r.end[f-1]
	}
	return r.b[from:r.end[f]]
}

// sortedOutcomes are oauth.Outcomes' indices in label order.
var sortedOutcomes = func() []int {
	out := make([]int, len(oauth.Outcomes))
	for i := range out {
		out[i] = i
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(oauth.Outcomes[a], oauth.Outcomes[b]) })
	return out
}()

// render renders the target's series; info is driftd_target_info's
// label names. The lines are written into buf, then copied to a slice of
// their size: a buffer grown by appending would keep up to twice that.
// It returns buf, grown, for the next render.
func (st *targetState) render(name string, info []string, buf []byte) (*rendered, []byte) {
	w := &lineWriter{name: name, b: buf[:0]}
	r := &rendered{}
	for f := 0; f < numFamilies; f++ {
		if f == famFinding { // famFinding, famFindingDropped and famFindings, from one pass
			st.renderFindings(w, r)
			f = famFindings
			continue
		}
		st.renderFamily(w, f, info)
		r.end[f] = int32(len(w.b))
	}
	r.b = bytes.Clone(w.b)
	return r, w.b
}

func (st *targetState) renderFamily(w *lineWriter, f int, info []string) {
	name := families[f].name
	var rep, est *probe.Report
	if st.run != nil && st.run.Report != nil {
		rep = st.run.Report
		est = st.established(rep)
	}
	if st.restored {
		switch f {
		case famIgnored, famStale, famListItems, famTools:
			return // not saved: they wait for the target's first run
		case famLastDuration, famLastRun, famInfo:
			if rep.StartedAt.IsZero() {
				return // a state file from before runs were saved has no times, server or revision
			}
		}
	}
	switch f {
	case famIgnored:
		if rep != nil && (st.meta.Ignores > 0 || len(rep.Ignored)+rep.IgnoredOmitted > 0) {
			w.gauge(name, float64(len(rep.Ignored)+rep.IgnoredOmitted))
		}
	case famOpened:
		w.lazy(name, st.opened, "rule", "severity")
	case famResolved:
		w.lazy(name, st.resolved, "rule", "severity")
	case famStale:
		if rep != nil && (st.meta.Ignores > 0 || len(rep.StaleIgnores) > 0) {
			w.gauge(name, float64(len(rep.StaleIgnores)))
		}
	case famListItems:
		if rep != nil {
			for _, k := range mcp.ItemKinds {
				if c := rep.ListCounts(k); c != nil {
					w.gauge(name, float64(c.Declared), "kind", string(k), "source", "declared")
				}
				if c := est.ListCounts(k); c != nil && est.Success {
					w.gauge(name, float64(c.Served), "kind", string(k), "source", "served")
				}
			}
		}
	case famOAuthLogin:
		if st.meta.Login {
			v := 0.0
			if u := rep.OAuthUse(); u != nil && u.LoginRequired != nil && *u.LoginRequired {
				v = 1
			}
			w.gauge(name, v)
		}
	case famOAuthExpiry, famOAuthIssued:
		if u := rep.OAuthUse(); u != nil && u.TokenIssuedAt != nil && st.meta.OAuth {
			at := u.TokenExpiresAt
			if f == famOAuthIssued {
				at = u.TokenIssuedAt
			}
			w.gauge(name, float64(at.UnixMilli())/1e3)
		}
	case famOAuthRequests:
		if st.meta.OAuth {
			for _, i := range sortedOutcomes {
				w.counter(name, st.tokenRequests[i], st.since, "outcome", oauth.Outcomes[i])
			}
		}
	case famFailures:
		w.lazy(name, st.failures, "reason")
	case famInterval:
		if st.interval > 0 {
			w.gauge(name, st.interval.Seconds())
		}
	case famLastDuration:
		if rep != nil {
			w.gauge(name, rep.DurationSeconds)
		}
	case famLastRun:
		if rep != nil {
			w.gauge(name, unixSeconds(rep.StartedAt.Add(secondsDuration(rep.DurationSeconds))))
		}
	case famLastSuccess:
		if rep != nil && !st.lastSuccess.IsZero() {
			w.gauge(name, unixSeconds(st.lastSuccess))
		}
	case famSkipped:
		w.lazy(name, st.skipped)
	case famSuccess:
		if rep != nil {
			w.gauge(name, boolValue(rep.Success))
		}
	case famProbes:
		w.counter(name, st.probesFailed, st.since, "result", "failure")
		w.counter(name, st.probesOK, st.since, "result", "success")
	case famServedChanges:
		w.lazy(name, st.servedChanges, "change")
	case famInfo:
		if rep != nil {
			w.gauge(name, 1, st.infoLabels(info)...)
		}
	case famRestored:
		if rep != nil && st.restored {
			w.gauge(name, 1)
		}
	case famTools:
		if rep != nil {
			w.gauge(name, float64(rep.Tools.Declared), "source", "declared")
			if est.Success {
				w.gauge(name, float64(est.Tools.Served), "source", "served")
			}
		}
	}
}

// renderFindings renders driftd_finding (one series per active finding
// that names a tool, capped per target), driftd_finding_series_dropped
// (where the cap dropped any) and driftd_findings (by rule and severity),
// and sets their ends in r.
func (st *targetState) renderFindings(w *lineWriter, r *rendered) {
	if st.run == nil || st.run.Report == nil {
		r.end[famFinding], r.end[famFindingDropped], r.end[famFindings] = int32(len(w.b)), int32(len(w.b)), int32(len(w.b))
		return
	}
	type key struct{ rule, sev string }
	counts := map[key]int{}
	var tools [][4]string
	seen := map[[4]string]bool{}
	dropped := 0
	for _, fd := range st.run.State.Active() {
		counts[key{fd.Rule, string(fd.Severity)}]++
		if fd.Tool == "" {
			continue
		}
		kind := fd.ItemKind
		if kind == "" {
			kind = "tool"
		}
		k := [4]string{kind, fd.Rule, string(fd.Severity), sanitize.Name(fd.Tool)}
		switch {
		case seen[k]:
		case len(seen) >= st.meta.SeriesLimit:
			dropped++
		default:
			seen[k] = true
			tools = append(tools, k)
		}
	}
	for _, o := range st.run.State.Omitted {
		counts[key{o.Rule, string(o.Severity)}] += o.Count
	}
	slices.SortFunc(tools, func(a, b [4]string) int { return slices.Compare(a[:], b[:]) })
	for _, k := range tools {
		w.gauge(families[famFinding].name, 1, "kind", k[0], "rule", k[1], "severity", k[2], "tool", k[3])
	}
	r.end[famFinding] = int32(len(w.b))
	if dropped > 0 {
		w.gauge(families[famFindingDropped].name, float64(dropped))
	}
	r.end[famFindingDropped] = int32(len(w.b))
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.rule, b.rule); c != 0 {
			return c
		}
		return strings.Compare(a.sev, b.sev)
	})
	for _, k := range keys {
		w.gauge(families[famFindings].name, float64(counts[k]), "rule", k.rule, "severity", k.sev)
	}
	r.end[famFindings] = int32(len(w.b))
}

// established is the report a target's established facts are read from:
// rep while it succeeded, else the latest successful one, if any.
func (st *targetState) established(rep *probe.Report) *probe.Report {
	if rep.Success || st.lastOK == nil {
		return rep
	}
	return st.lastOK
}

// infoLabels are driftd_target_info's labels but target, as name-value
// pairs, for the label names info: the fixed ones
// (config.TargetInfoLabels) — the classification from the latest run,
// the revision and server from the run that established them — and the
// target's configured labels, empty where it has none (which Prometheus
// treats as absent).
func (st *targetState) infoLabels(info []string) []string {
	rep := st.run.Report
	est := st.established(rep)
	fixed := [5]string{"", rep.Classification.Class, revision(est.ProtocolRevision.Value), "", ""} // config.TargetInfoLabels' order
	if est.ServerInfo != nil {
		fixed[3], fixed[4] = sanitize.Name(est.ServerInfo.Name), sanitize.Name(est.ServerInfo.Version)
	}
	out := make([]string, 0, 2*len(info))
	for _, l := range info {
		switch j := slices.Index(config.TargetInfoLabels, l); {
		case l == "target":
		case j >= 0:
			out = append(out, l, fixed[j])
		default:
			out = append(out, l, st.meta.Labels[l])
		}
	}
	return out
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

// lineWriter appends one target's sample lines. Label pairs are given in
// name order; the target label is put in its place among them.
type lineWriter struct {
	b    []byte
	name string // the target's
}

func (w *lineWriter) sample(name string, labels []string, v float64) {
	w.b = append(w.b, name...)
	w.b = append(w.b, '{')
	target := false
	for i := 0; i < len(labels); i += 2 {
		if !target && labels[i] > "target" {
			w.label("target", w.name)
			target = true
		}
		w.label(labels[i], labels[i+1])
	}
	if !target {
		w.label("target", w.name)
	}
	w.b[len(w.b)-1] = '}'
	w.b = append(w.b, ' ')
	w.b = appendFloat(w.b, v)
}

func (w *lineWriter) label(name, value string) {
	w.b = append(w.b, name...)
	w.b = append(w.b, '=', '"')
	w.b = appendEscaped(w.b, value, true)
	w.b = append(w.b, '"', ',')
}

func (w *lineWriter) gauge(name string, v float64, labels ...string) {
	w.sample(name, labels, v)
	w.b = append(w.b, '\n')
}

// counter writes a counter's _total sample followed by createdMark and
// its creation time: the handler writes the sample alone in the text
// format, and the sample and its _created one in OpenMetrics. A _created
// line kept whole would be a third of a target's bytes.
func (w *lineWriter) counter(name string, n uint64, created time.Time, labels ...string) {
	w.sample(name, labels, float64(n))
	w.b = append(w.b, createdMark)
	w.b = appendFloat(w.b, unixSeconds(created))
	w.b = append(w.b, '\n')
}

// createdMark ends a counter's sample in rendered lines, before its
// creation time. A counter's labels never hold a 0 byte: the target's
// name (config's targetNamePattern), a result, reason, rule, severity or
// CHG id.
const createdMark = 0

// lazy writes counters created at their first event, keyed by one label
// value or two joined by "\xff", in key order.
func (w *lineWriter) lazy(name string, cs lazyCounts, labels ...string) {
	keys := make([]string, 0, len(cs))
	for k := range cs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pairs := make([]string, 2*len(labels))
	for _, k := range keys {
		values := strings.SplitN(k, "\xff", len(labels))
		for i, l := range labels {
			pairs[2*i], pairs[2*i+1] = l, values[i]
		}
		w.counter(name, cs[k].n, cs[k].created, pairs...)
	}
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendEscaped escapes as both formats ask: backslash and newline
// everywhere, the double quote in label values (and, in OpenMetrics, in
// help).
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
