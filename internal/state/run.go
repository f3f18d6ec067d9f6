package state

import (
	"slices"
	"time"

	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// Run is one target's latest outcome as every reader sees it: the report
// of its last run (nil before the first run since start), the State after
// that run, and what the run changed. The daemon publishes a *Run and
// replaces it whole; nothing in a published Run is ever written again, so
// metrics, the API and the status pages read it without a lock.
type Run struct {
	Report *probe.Report
	State  *State
	Transition
	// Compared is the report of the last run that listed and compared
	// the served set: Report itself when it succeeded, else the one
	// before it (nil before the first such run since start). The active
	// findings' messages and evidence are read from it.
	Compared *probe.Report
	// LastCompared is when that run ended (State.LastCompared, a lower
	// bound, until the first run since start).
	LastCompared time.Time
}

// Loaded is the Run of a target that has not run since start: its state
// as read from disk, no report.
func Loaded(st *State) *Run { return &Run{State: st, LastCompared: st.LastCompared} }

// Apply is the pipeline's state step: it diffs rep against prev's state
// and returns the next Run. The report is not modified: the returned
// Run's Report is a copy carrying this run's served changes, so a reader
// of the previous Run never sees them appear. The caller saves
// Run.State when Run.Changed, before it publishes the Run.
//
// Findings in rep replace the active set (a failed run resolves nothing;
// see apply); the served set is compared only when the run listed it.
// loadPrev reads the previous served snapshot, at most once, only when a
// tool's definition changed.
//
// Apply keeps nothing between calls: a program applying runs passes its
// caches to ApplyWith.
func Apply(prev *Run, rep *probe.Report, now time.Time, historyLimit int, loadPrev func() ([]Tool, error)) *Run {
	return ApplyWith(nil, prev, rep, now, historyLimit, loadPrev)
}

// ApplyWith is Apply through c, the program's caches (probe.NewCaches),
// which remember the served definitions' digests and the schema diffs of
// changed tools; nil remembers nothing.
func ApplyWith(c *probe.Caches, prev *Run, rep *probe.Report, now time.Time, historyLimit int, loadPrev func() ([]Tool, error)) *Run {
	st, tr := apply(c, prev.State, now, rep.Findings, boundedNames(rep.Served()), rep.Success, rep.Success && !rep.ServedAsBefore(), historyLimit, loadPrev)
	if rep.Success && !slices.Equal(st.Omitted, rep.FindingsOmitted) && (len(st.Omitted) > 0 || len(rep.FindingsOmitted) > 0) {
		// A failed run keeps the counts, as it keeps the findings.
		next := *st
		next.Omitted, next.dirty = slices.Clone(rep.FindingsOmitted), true
		st, tr.Changed = &next, true
	}
	st, tr.Changed = health(st, rep, now, tr.Changed)
	out := rep.Copy()
	out.ServedChanges = make([]probe.ServedChange, len(tr.ServedChanges))
	for i, e := range tr.ServedChanges {
		out.ServedChanges[i] = e.ServedChange()
	}
	run := &Run{Report: out, State: st, Transition: tr, Compared: prev.Compared, LastCompared: prev.LastCompared}
	if rep.Success {
		run.Compared, run.LastCompared = out, now.UTC() // the time its findings were recorded, first_seen's clock
	}
	return run
}

// health records the transitions between up and failing in the state:
// FailingSince is set by the first failed run of a streak and cleared by
// the next successful one; LastCompared rides along whenever the state is
// written anyway. st is copied, never modified: a reader may hold it.
func health(st *State, rep *probe.Report, now time.Time, changed bool) (*State, bool) {
	failing, wasFailing := !rep.Success, !st.FailingSince.IsZero()
	if failing == wasFailing && !(changed && rep.Success) {
		return st, changed
	}
	next := *st // maps and the sorted view are shared, read-only
	if failing {
		next.FailingSince = rep.StartedAt.UTC()
	} else {
		next.FailingSince, next.LastCompared = time.Time{}, now.UTC()
	}
	next.dirty = true
	return &next, true
}

// ServedChange is a served-change event as the report's served_changes
// section shows it.
func (e Event) ServedChange() probe.ServedChange {
	return probe.ServedChange{Change: e.Change, Tool: e.Tool, Direction: e.Direction, Pointer: e.Pointer, Message: e.Message}
}

// boundedNames returns served with every name as the one sanitiser bounds
// it (a copy, when one changes): a state file keys its hashes by name and
// its served-change events name the tool, and a megabyte-long name must
// make neither a megabyte-long key nor event. This is the one place state
// bounds a served name.
func boundedNames(served []Tool) []Tool {
	out := served
	for i, t := range served {
		if n := sanitize.Name(t.Name); n != t.Name {
			if &out[0] == &served[0] {
				out = slices.Clone(served)
			}
			out[i].Name = n
		}
	}
	return out
}
