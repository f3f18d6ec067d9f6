package state

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/probe"
)

// Transition is what one run changed: the events it appended to the
// history, split by kind, and whether the new State must be saved.
type Transition struct {
	Opened        []Event
	Resolved      []Event
	ServedChanges []Event
	// Initial is true when the run was diffed against a state that never
	// recorded a listing (NeverListed): a target's first runs in a new
	// state dir, or after its file was moved aside. Its Opened are then
	// the findings the target already had, not news: they are recorded
	// and kept in the history as opened, but driftd_findings_opened_total
	// creates their counters at 0 instead of counting them, so a first
	// start pages nobody with "new finding" (docs/metrics.md).
	Initial bool
	// Changed is true when the State differs from what is on disk (or a
	// previous Save failed): only then does the caller call Save.
	Changed bool
	// SnapshotErr is set when some tool's hash changed but its previous
	// definition could not be read (snapshot missing, corrupt, or stale
	// after a crash between the two files). Those tools get no detailed
	// events; the new hashes are recorded so the next run does not retry.
	// The caller logs and counts it; it never fails the run.
	SnapshotErr error
}

// apply diffs one run against prev and returns the next State and what
// changed. It never modifies prev; when nothing changed it returns prev
// itself, allocating nothing beyond a pooled scratch set.
//
// findings are the run's active (not ignored) findings. They replace the
// active set on every run, failed runs included: a failed run's findings
// (e.g. MCP-DRIFT-PROTOCOL-UNSUPPORTED) open and the findings it could not
// re-establish resolve, so the state always matches the last report and
// the findings gauge.
//
// compared is false for a failed run (see diffFindings). served is the
// served set, compared against prev.ToolHashes. servedOK false means the
// run listed nothing new: the served comparison is skipped and the hashes
// are kept, so a failed run never looks like "all tools removed", and a
// run served the last run's listing (probe.Report.ServedAsBefore) hashes
// nothing again. The first successful listing (prev has never recorded one)
// records the set silently: a fresh state is not "everything was added".
// A tool listed twice counts once, first occurrence wins.
//
// loadPrev reads the previous served snapshot; Apply calls it at most
// once, and only when a tool present in both runs has a different hash
// (the caller passes func() ([]Tool, error) { return store.LoadSnapshot(t) }).
// It may be nil, which makes such tools a SnapshotErr.
//
// historyLimit bounds the history (DefaultHistoryLimit when <= 0). c are
// the program's caches: the served definitions' digests and the schema
// diffs of changed tools go through them (nil: computed, not kept).
func apply(c *probe.Caches, prev *State, now time.Time, findings []catalogue.Finding, served []Tool, compared, servedOK bool,
	historyLimit int, loadPrev func() ([]Tool, error)) (*State, Transition) {
	if prev == nil {
		prev = NewState("")
	}
	if unchanged(c, prev, findings, served, servedOK) {
		return prev, Transition{}
	}
	now = now.UTC() // strips the monotonic reading; files stay readable
	if historyLimit <= 0 {
		historyLimit = DefaultHistoryLimit
	}
	next := &State{
		Target:           prev.Target,
		Version:          FormatVersion,
		ToolHashes:       prev.ToolHashes,
		ServedLastChange: prev.ServedLastChange,
		Baseline:         prev.Baseline,
		SurfaceDigest:    prev.SurfaceDigest,
		PendingAccept:    prev.PendingAccept,
		NeedsReview:      prev.NeedsReview,
		readOnly:         prev.readOnly,
		snap:             prev.snap,
		snapPending:      prev.snapPending,
	}
	tr := Transition{Initial: prev.NeverListed()}
	findingsChanged := diffFindings(prev, next, now, findings, compared, &tr)
	servedChanged := false
	if servedOK {
		servedChanged = diffServed(c, prev, next, now, served, loadPrev, &tr)
	}
	events := len(tr.Opened) + len(tr.Resolved) + len(tr.ServedChanges)
	tr.Changed = findingsChanged || servedChanged || events > 0 || prev.dirty || prev.snapPending
	if !tr.Changed {
		return prev, tr
	}
	next.pending = appendHistory(prev.pending, historyLimit, tr.Opened, tr.Resolved, tr.ServedChanges)
	next.historyLimit = historyLimit
	next.dirty = true
	return next.index(), tr
}

// diffFindings fills next.Findings and the opened/resolved events, and
// reports whether the active set differs from prev's in any stored field.
//
// A failed run (compared is false) compared nothing, so it is no evidence
// that an earlier finding went away: those stay active, unresolved, and only
// a successful run resolves them. Otherwise a one-run outage would resolve
// MCP-DRIFT-TOOL-MISSING and the recovery re-open it, paging twice.
func diffFindings(prev, next *State, now time.Time, findings []catalogue.Finding, compared bool, tr *Transition) bool {
	next.Findings = make(map[string]ActiveFinding, len(findings))
	changed := false
	for _, f := range findings {
		fp := fingerprint(prev.Target, f)
		if _, dup := next.Findings[fp]; dup {
			continue // same identity twice in one run: one active finding
		}
		old, ok := prev.Findings[fp]
		if !ok {
			next.Findings[fp] = active(f, now)
			tr.Opened = append(tr.Opened, Event{
				Time: now, Kind: KindOpened, Rule: f.Rule, Severity: f.Severity, Tool: f.Tool, ItemKind: f.Kind,
				Pointer: f.Pointer, Direction: f.Direction, Change: f.Change, Fingerprint: fp, Message: f.Message,
			})
			continue
		}
		// Severity can move under the same fingerprint (an override
		// changed): store it, but it is neither opened nor resolved.
		a := active(f, old.FirstSeen)
		changed = changed || a != old
		next.Findings[fp] = a
	}
	for fp, old := range prev.Findings {
		if _, ok := next.Findings[fp]; !ok && !compared {
			next.Findings[fp] = old
			continue
		}
		if _, ok := next.Findings[fp]; !ok {
			tr.Resolved = append(tr.Resolved, Event{
				Time: now, Kind: KindResolved, Rule: old.Rule, Severity: old.Severity, Tool: old.Tool, ItemKind: old.ItemKind,
				Pointer: old.Pointer, Direction: old.Direction, Change: old.Change, Fingerprint: fp,
			})
		}
	}
	// Map order is random; the history and the caller's logs should not be.
	slices.SortFunc(tr.Resolved, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.Fingerprint, b.Fingerprint))
	})
	return changed || len(tr.Opened) > 0 || len(tr.Resolved) > 0
}

// fingerprint is f's fingerprint, computed only if the probe left it empty.
func fingerprint(target string, f catalogue.Finding) string {
	if f.Fingerprint != "" {
		return f.Fingerprint
	}
	return catalogue.Fingerprint(target, f)
}

// appendHistory returns a new slice (prev's may be shared with a State a
// reader still holds) with the events appended, trimmed to the newest limit
// (DefaultHistoryLimit when limit <= 0).
func appendHistory(prev []Event, limit int, groups ...[]Event) []Event {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	n := len(prev)
	for _, g := range groups {
		n += len(g)
	}
	out := make([]Event, 0, min(n, limit))
	skip := max(n-limit, 0) // the oldest events fall off first
	for _, src := range append([][]Event{prev}, groups...) {
		if skip >= len(src) {
			skip -= len(src)
			continue
		}
		out = append(out, src[skip:]...)
		skip = 0
	}
	return out
}

// scratch pools the name sets of the steady-state check, so that 10,000
// targets share a few maps instead of allocating one per run.
var scratch = sync.Pool{New: func() any { m := make(map[string]struct{}); return &m }}

// unchanged reports, without allocating, whether the run leaves prev
// exactly as it is. It is conservative: any doubt goes to the full diff.
func unchanged(c *probe.Caches, prev *State, findings []catalogue.Finding, served []Tool, servedOK bool) bool {
	if prev.dirty || prev.snapPending {
		return false
	}
	p := scratch.Get().(*map[string]struct{})
	seen := *p
	defer func() { clear(seen); scratch.Put(p) }()
	for _, f := range findings {
		if f.Fingerprint == "" {
			return false
		}
		old, ok := prev.Findings[f.Fingerprint]
		if !ok || active(f, old.FirstSeen) != old {
			return false
		}
		seen[f.Fingerprint] = struct{}{}
	}
	if len(seen) != len(prev.Findings) {
		return false
	}
	if !servedOK {
		return true
	}
	if prev.NeverListed() {
		return false // the first listing must be recorded
	}
	clear(seen)
	for _, t := range served {
		if _, dup := seen[t.Name]; dup {
			continue
		}
		old, ok := prev.ToolHashes.Get(t.Name)
		if !ok || digest(c, t.Raw) != old {
			return false
		}
		seen[t.Name] = struct{}{}
	}
	return len(seen) == prev.ToolHashes.Len()
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
