package state

import (
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

// The states of a target's probe health and of its drift.
const (
	HealthPending = "pending" // no run since start, none recorded before
	HealthUp      = "up"      // the last run listed and compared the tools
	HealthFailing = "failing" // the last run did not; Reason says why

	DriftUnknown = "unknown" // nothing was ever compared
	DriftClean   = "clean"   // no active findings
	DriftDrifted = "drifted" // active findings; Worst is the worst severity
)

// Status is what every surface says of a target — the index, the target
// page, the API, the logs — computed in one place from the published Run,
// so that none can disagree with another or with /metrics, which renders
// the same active findings. Probe health and drift are separate: a target
// can be failing and drifted at once, and during an outage its findings
// stay active but stale (not re-checked since LastCompared).
type Status struct {
	Health string `json:"health"`
	// FailingSince is when the current streak of failed runs began.
	FailingSince *time.Time `json:"failing_since,omitempty"`
	// Reason and Message are the last run's failure, when it failed.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`

	Drift string             `json:"drift"`
	Worst catalogue.Severity `json:"worst,omitempty"`
	// DriftedSince is the first_seen of the oldest active finding.
	DriftedSince *time.Time `json:"drifted_since,omitempty"`
	// LastCompared is when a run last listed and compared the tools.
	LastCompared *time.Time `json:"last_compared,omitempty"`
	// Stale is set when the active findings were not re-checked by the
	// last run (it failed): they are as of LastCompared.
	Stale bool `json:"stale"`
	// Findings counts the active findings by severity, those past the
	// per-rule cap included.
	Findings map[catalogue.Severity]int `json:"findings"`
	// Baseline is a baseline-mode target's baseline and served surface
	// digests, its pending accept and why it needs review; nil for a
	// target compared against a manifest.
	Baseline *BaselineStatus `json:"baseline,omitempty"`
}

// BaselineStatus is what the pages and the API show of a baseline-mode
// target's baseline, next to its drift: an accept must name ServedDigest.
type BaselineStatus struct {
	// ServedDigest is the surface digest its last successful run served.
	ServedDigest string `json:"served_digest,omitempty"`
	// Digest, Origin and RecordedAt describe the recorded baseline.
	Digest     string     `json:"digest,omitempty"`
	Origin     string     `json:"origin,omitempty"`
	RecordedAt *time.Time `json:"recorded_at,omitempty"`
	// PendingAccept waits for a run that serves its digest.
	PendingAccept *Accept `json:"pending_accept,omitempty"`
	// NeedsReview says why no baseline is trusted until one is accepted.
	NeedsReview string `json:"needs_review,omitempty"`
}

// baselineStatus is st's BaselineStatus, nil when st has nothing of one.
func baselineStatus(st *State) *BaselineStatus {
	if st.Baseline == nil && st.SurfaceDigest == "" && st.PendingAccept == nil && st.NeedsReview == "" {
		return nil
	}
	b := &BaselineStatus{ServedDigest: st.SurfaceDigest, PendingAccept: st.PendingAccept, NeedsReview: st.NeedsReview}
	if r := st.Baseline; r != nil {
		at := r.RecordedAt
		b.Digest, b.Origin, b.RecordedAt = r.Digest, r.Origin, &at
	}
	return b
}

// Status computes the target's status from its published run.
func (r *Run) Status() Status {
	st := r.State
	s := Status{
		Health:   HealthPending,
		Drift:    DriftUnknown,
		Findings: map[catalogue.Severity]int{catalogue.Error: 0, catalogue.Warn: 0, catalogue.Info: 0},
		Baseline: baselineStatus(st),
	}
	if !st.FailingSince.IsZero() {
		since := st.FailingSince
		s.Health, s.FailingSince = HealthFailing, &since
	}
	if rep := r.Report; rep != nil {
		if rep.Success {
			s.Health = HealthUp
		} else {
			s.Health, s.Reason, s.Message = HealthFailing, string(rep.FailureReason), rep.FailureMessage
		}
	}
	if !r.LastCompared.IsZero() {
		at := r.LastCompared
		s.LastCompared = &at
	}
	if s.LastCompared == nil && len(st.Findings) == 0 && st.ServedLastChange.IsZero() {
		return s // never compared: drift unknown
	}
	s.Drift = DriftClean
	for _, f := range st.Active() {
		s.Findings[f.Severity]++
		if f.Severity.Rank() > s.Worst.Rank() {
			s.Worst = f.Severity
		}
		if s.DriftedSince == nil || f.FirstSeen.Before(*s.DriftedSince) {
			first := f.FirstSeen
			s.DriftedSince = &first
		}
	}
	for _, o := range st.Omitted {
		s.Findings[o.Severity] += o.Count
		if o.Severity.Rank() > s.Worst.Rank() {
			s.Worst = o.Severity
		}
	}
	if s.Worst != "" {
		s.Drift = DriftDrifted
	}
	s.Stale = s.Health == HealthFailing && s.Drift == DriftDrifted
	return s
}

// Finding is one active finding as every surface shows it: what the last
// run that compared said of it (its message and evidence, when that run
// is in memory), since when it has held, and whether it is stale.
type Finding struct {
	catalogue.Finding
	FirstSeen time.Time `json:"first_seen"`
	// LastSeen is when a run last saw it: the last run that compared.
	LastSeen *time.Time `json:"last_seen,omitempty"`
	// Stale is set when the last run failed and could not re-check it.
	Stale bool `json:"stale"`
}

// Findings returns the active findings in the state's order (by rule,
// tool, pointer), each with its message from the last compared report
// when the daemon has it (not before the first run since start).
func (r *Run) Findings() []Finding {
	byFP := map[string]catalogue.Finding{}
	if r.Compared != nil {
		for _, f := range r.Compared.Findings {
			byFP[f.Fingerprint] = f
		}
	}
	stale := r.Report != nil && !r.Report.Success
	out := make([]Finding, 0, len(r.State.Active()))
	for _, a := range r.State.Active() {
		f, ok := byFP[a.Fingerprint]
		if !ok {
			f = catalogue.Finding{Rule: a.Rule, Severity: a.Severity, Tool: a.Tool, Kind: a.ItemKind, Direction: a.Direction,
				Pointer: a.Pointer, Change: a.Change, Grade: a.Grade, Fingerprint: a.Fingerprint}
		}
		f.Severity = a.Severity
		v := Finding{Finding: f, FirstSeen: a.FirstSeen, Stale: stale}
		if !r.LastCompared.IsZero() {
			at := r.LastCompared
			v.LastSeen = &at
		}
		out = append(out, v)
	}
	return out
}
