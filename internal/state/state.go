// Package state keeps the last-run state of each target and diffs every
// run against it (DESIGN §10).
//
// Per target it keeps, in memory and in state_dir/<target>.json, the
// active findings by fingerprint, a SHA-256 per served tool and a bounded
// history of change events. The full served snapshot (every tool's raw
// definition) lives only on disk, in state_dir/snapshots/<target>.json,
// and is read only when a tool's hash differs from the previous run
// (DESIGN §14): the steady state costs one hash per tool and no I/O.
//
// Files are written atomically (temp file, fsync, rename, fsync dir), so a
// kill -9 leaves the old or the new file, never a torn one. A corrupt file
// is moved aside and the target starts fresh (DESIGN §16); for a
// baseline-mode target the daemon then holds it in "needs review" rather
// than trust a new first surface. A file of a newer format is never
// moved or overwritten.
package state

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"slices"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

// FormatVersion is the version of the state and snapshot files. A file of
// any other version is treated as corrupt: guessing at a format we did not
// write could resurrect or drop findings.
const FormatVersion = 1

// DefaultHistoryLimit bounds the history when Apply is given no limit.
const DefaultHistoryLimit = 500

// The kinds of history events.
const (
	KindOpened       = "opened"
	KindResolved     = "resolved"
	KindServedChange = "served_change"
	// KindBaseline records a baseline-mode target's baseline: recorded
	// from its first successful run, or accepted (by whom, why).
	KindBaseline = "baseline"
)

// Tool is one served tool definition, the wire's own type: state reads its
// Name and exact Raw JSON. The hash is taken over Raw as given, so pass the
// server's bytes unchanged (a server that reorders keys costs a snapshot
// read and a write, but yields no event, since the comparison is semantic).
type Tool = mcp.Tool

// State is one target's last-run state, exactly as stored on disk. It holds
// nothing from the report beyond these fields: no messages of active
// findings, no trace ids, nothing a request carried.
//
// A State returned by Load or Apply is read-only for its users: Apply
// builds a new State when something changed and shares unchanged maps.
type State struct {
	Target  string `json:"target"`
	Version int    `json:"version"`
	// Findings are the active findings keyed by fingerprint.
	Findings map[string]ActiveFinding `json:"findings"`
	// ToolHashes maps a served tool's name to the hex SHA-256 of its raw
	// definition as last served.
	ToolHashes Hashes `json:"tool_hashes"`
	// Omitted counts the active findings past catalogue.MaxPerRule that
	// Findings does not hold, as the last run that compared reported them.
	Omitted []catalogue.Omitted `json:"omitted,omitempty"`
	// ServedLastChange is when the served set was first recorded or last
	// changed; zero means no successful listing was ever recorded.
	ServedLastChange time.Time `json:"served_last_change"`
	// History is the record of events, newest last, bounded by Apply's
	// limit, kept in a file of its own (history.go): a State in memory
	// carries just the events not yet written (pending), and Store.History
	// reads the rest from disk, so the daemon does not hold a hundred
	// events per target between runs. Set only when read from a state file
	// of an older release, which kept it there.
	History []Event `json:"history,omitempty"`
	// FailingSince is when the current streak of failed runs began; zero
	// while the last run succeeded. It changes only when the target goes
	// from up to failing or back, so the steady state writes nothing.
	FailingSince time.Time `json:"failing_since,omitzero"`
	// LastCompared is when a run last listed and compared the served set,
	// as of the last write of this file: after a restart it is a lower
	// bound (Run.LastCompared is exact while the daemon runs).
	LastCompared time.Time `json:"last_compared,omitzero"`
	// Baseline is a baseline-mode target's recorded surface; nil for a
	// target compared against a manifest, or before its first successful
	// run.
	Baseline *Baseline `json:"baseline,omitempty"`
	// SurfaceDigest is a baseline-mode target's surface digest
	// (SurfaceDigest) as its last successful run served it: what an
	// accept must name.
	SurfaceDigest string `json:"surface_digest,omitempty"`
	// PendingAccept is an accept waiting for a run that serves its
	// digest (docs/security.md#baseline-approval); nil when none.
	PendingAccept *Accept `json:"pending_accept,omitempty"`
	// NeedsReview says why a baseline-mode target's baseline cannot be
	// trusted (its state file was corrupt, or written by a newer driftd):
	// no baseline is recorded until an operator accepts one.
	NeedsReview string `json:"needs_review,omitempty"`
	// LastRun is the latest run as of the last write of this file, what
	// /metrics publishes for the target after a restart until its first
	// run (lastrun.go); nil in files written before it existed.
	LastRun *LastRun `json:"last_run,omitempty"`

	// readOnly is set by Load for a file written by a newer driftd: Save
	// never overwrites it.
	readOnly bool
	// dirty is set by Apply when the State differs from what Save last
	// wrote, and cleared by a successful Save: a failed write (full disk)
	// is retried on the next run even if that run changes nothing.
	dirty bool
	// snap is the served set to write to the snapshot file, when snapPending.
	// It is held only until Save succeeds, so the steady state keeps no
	// definitions in memory.
	snap        []Tool
	snapPending bool
	// pending are the events since the last successful Save, newest last,
	// at most historyLimit of them; Save appends them to the file's.
	pending      []Event
	historyLimit int
	// active is Findings in a stable order, built with the State (Apply,
	// Load, NewState) and never after: readers share it.
	active []ActiveFinding
}

// ActiveFinding is a finding that is open, as stored in the state file.
type ActiveFinding struct {
	// Fingerprint is the key the finding is stored under; it is not
	// repeated in the file.
	Fingerprint string             `json:"-"`
	Rule        string             `json:"rule"`
	Severity    catalogue.Severity `json:"severity"`
	Tool        string             `json:"tool,omitempty"`
	// ItemKind is the finding's kind (prompt, resource,
	// resource_template); empty for tools.
	ItemKind  string    `json:"kind,omitempty"`
	Direction string    `json:"direction,omitempty"`
	Pointer   string    `json:"pointer,omitempty"`
	Change    string    `json:"change,omitempty"`
	Grade     string    `json:"grade,omitempty"`
	FirstSeen time.Time `json:"first_seen"`
}

// Event is one history entry: a finding opened or resolved, or one served
// change. For served changes Change is the CHG id (catalogue.ChgToolAdded,
// ChgToolRemoved, or catalogue.ServedChangeID of a CompareTool finding)
// and Fingerprint is empty.
type Event struct {
	Time     time.Time          `json:"time"`
	Kind     string             `json:"kind"`
	Rule     string             `json:"rule,omitempty"`
	Severity catalogue.Severity `json:"severity,omitempty"`
	Tool     string             `json:"tool,omitempty"`
	// ItemKind is the finding's kind (prompt, resource,
	// resource_template); empty for tools. Kind is the event's own kind.
	ItemKind    string `json:"item_kind,omitempty"`
	Pointer     string `json:"pointer,omitempty"`
	Direction   string `json:"direction,omitempty"`
	Change      string `json:"change,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Message     string `json:"message,omitempty"`
	// By is who accepted a baseline (KindBaseline events only): the
	// identity the web server authenticated, or "anonymous".
	By string `json:"by,omitempty"`
	// ClaimedBy is the accept's own "by" claim, unverified, kept apart
	// from By and never in its place.
	ClaimedBy string `json:"claimed_by,omitempty"`
	// Digest is the surface digest a baseline event recorded or accepted.
	Digest string `json:"digest,omitempty"`
}

// NewState returns the empty state of a target that has never run.
func NewState(target string) *State {
	return &State{
		Target:     target,
		Version:    FormatVersion,
		Findings:   map[string]ActiveFinding{},
		ToolHashes: Hashes{},
		active:     []ActiveFinding{},
	}
}

// NeverListed reports whether st has never recorded a successful listing
// of the served set: the state of a target that has not yet been compared
// since its state file was created (a new state dir, a file moved aside).
// The first listing is recorded silently (no served changes), and the
// findings opened until then are initial (Transition.Initial).
func (st *State) NeverListed() bool {
	return st.ServedLastChange.IsZero() && st.ToolHashes.Len() == 0
}

// Active returns the active findings sorted by rule, tool, pointer and
// fingerprint: the order the finding gauges cap their series in. It is
// shared; do not modify it.
func (st *State) Active() []ActiveFinding { return st.active }

// index builds the sorted view of Findings. Called once per new State.
func (st *State) index() *State {
	st.active = make([]ActiveFinding, 0, len(st.Findings))
	for fp, f := range st.Findings {
		f.Fingerprint = fp
		st.active = append(st.active, f)
	}
	slices.SortFunc(st.active, func(a, b ActiveFinding) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.Fingerprint, b.Fingerprint))
	})
	return st
}

// Dirty reports whether st holds changes that no Save has written yet.
func (st *State) Dirty() bool { return st.dirty || st.snapPending }

// active is the stored form of f, first seen at first.
func active(f catalogue.Finding, first time.Time) ActiveFinding {
	return ActiveFinding{
		Rule: f.Rule, Severity: f.Severity, Tool: f.Tool, ItemKind: f.Kind, Direction: f.Direction,
		Pointer: f.Pointer, Change: f.Change, Grade: f.Grade, FirstSeen: first,
	}
}

// digest is the SHA-256 of raw. Surrounding whitespace is not part of a
// JSON value and does not survive a snapshot round trip, so it is not
// hashed. The digest is remembered in c (probe.Caches.Digest): the hash
// must be the same in every process, being written to disk, and a
// target's definitions are almost always the ones it served last time.
func digest(c *probe.Caches, raw []byte) [sha256.Size]byte {
	return c.Digest(bytes.TrimSpace(raw))
}
