package state

import (
	"time"

	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// LastRun is what a target's latest run said of it beyond its findings:
// the series /metrics publishes from that run (probe_success, the last
// run's and last success's times, the identity in driftd_target_info).
// The daemon publishes it at start, marked as restored, until the
// target's first run (docs/daemon.md, Restarts), so a restart leaves no
// gap in the series the alerts read.
//
// It is written with the state file: whenever the file is written anyway
// (Record), and at a graceful stop for every target whose file holds an
// older one, so a restart (a rollout, a node drain) restores the times
// exactly; after a kill they are those of the last write, a lower bound.
// A file written before this field existed has none (SavedRun says what
// such a file still tells). It is a field, not a new file format:
// FormatVersion is unchanged, and an older driftd reading a newer file
// ignores it.
type LastRun struct {
	// Ended is when the run ended.
	Ended           time.Time `json:"ended"`
	Success         bool      `json:"success"`
	DurationSeconds float64   `json:"duration_seconds"`
	// LastSuccess is when the latest successful run ended; zero if none
	// has since the file was first written.
	LastSuccess time.Time `json:"last_success,omitzero"`
	// Classification is the run's environment class; ProtocolRevision and
	// Server are what the latest successful run established (nil, empty
	// when none did), the server's name and version bounded as the
	// sanitiser bounds them.
	Classification   string              `json:"classification,omitempty"`
	ProtocolRevision *string             `json:"protocol_revision,omitempty"`
	Server           *mcp.Implementation `json:"server,omitempty"`
}

// NewLastRun is the record of rep, the run after prev (the record of the
// run before it, nil if none): a failed run keeps what the last
// successful one established.
func NewLastRun(rep *probe.Report, prev *LastRun) *LastRun {
	lr := &LastRun{
		Ended:           rep.StartedAt.Add(time.Duration(rep.DurationSeconds * float64(time.Second))).UTC(),
		Success:         rep.Success,
		DurationSeconds: rep.DurationSeconds,
		Classification:  rep.Classification.Class,
	}
	if !rep.Success && prev != nil && !prev.LastSuccess.IsZero() {
		lr.LastSuccess, lr.ProtocolRevision, lr.Server = prev.LastSuccess, prev.ProtocolRevision, prev.Server
		return lr
	}
	// A successful run, or a failed one before any success: what it
	// established itself, as metrics reads it (the server may have
	// answered initialize before the run failed).
	if rep.Success {
		lr.LastSuccess = lr.Ended
	}
	if v := rep.ProtocolRevision.Value; v != nil {
		rev := *v
		lr.ProtocolRevision = &rev
	}
	if si := rep.ServerInfo; si != nil {
		lr.Server = &mcp.Implementation{Name: sanitize.Name(si.Name), Version: sanitize.Name(si.Version)}
	}
	return lr
}

// Report is the record as a report of the run it describes, for the
// readers of a report's series (metrics): no findings, no listing. A
// failed run after a success leaves what that success established to
// Established.
func (lr *LastRun) Report(target string) *probe.Report {
	dur := time.Duration(lr.DurationSeconds * float64(time.Second))
	rep := &probe.Report{
		Target:          target,
		StartedAt:       lr.Ended.Add(-dur),
		DurationSeconds: lr.DurationSeconds,
		Success:         lr.Success,
		Classification:  probe.Classification{Class: lr.Classification},
	}
	if lr.Success || lr.LastSuccess.IsZero() {
		lr.establish(rep)
	}
	return rep
}

// Established is the report of the latest successful run as far as the
// record knows it (its revision and server), nil if none succeeded
// since the file was first written.
func (lr *LastRun) Established(target string) *probe.Report {
	if lr.LastSuccess.IsZero() {
		return nil
	}
	rep := &probe.Report{Target: target, Success: true, StartedAt: lr.LastSuccess, Classification: probe.Classification{Class: lr.Classification}}
	lr.establish(rep)
	return rep
}

func (lr *LastRun) establish(rep *probe.Report) {
	rep.ProtocolRevision = probe.Revision{Value: lr.ProtocolRevision}
	if lr.Server != nil {
		si := *lr.Server
		rep.ServerInfo = &si
	}
}

// Record returns st with rec as its LastRun: st itself when it already
// holds it, else a copy (st is read-only: a reader may hold it). It does
// not make the state dirty: the record rides along when the file is
// written anyway, and the daemon writes it at a graceful stop.
func (st *State) Record(rec *LastRun) *State {
	if st.LastRun != nil && *st.LastRun == *rec {
		return st
	}
	next := *st // maps, the sorted view and pending events are shared, read-only
	next.LastRun = rec
	return &next
}

// SavedRun is the run st's file saved: LastRun, or, for a file written
// before LastRun existed, what the file still says of the last run —
// whether it succeeded (FailingSince is written at every change between
// up and failing) — with no times, server or revision; nil for a target
// whose file records no run.
func (st *State) SavedRun() *LastRun {
	if st.LastRun != nil {
		return st.LastRun
	}
	if st.FailingSince.IsZero() && st.LastCompared.IsZero() && st.ServedLastChange.IsZero() {
		return nil
	}
	return &LastRun{Success: st.FailingSince.IsZero()}
}
