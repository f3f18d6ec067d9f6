package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/driftd/driftd/internal/sanitize"
)

// Baseline is the surface a baseline-mode target (baseline: first_seen)
// is compared against, in place of a manifest file: trust on first use.
// It is recorded from the target's first successful run and replaced
// only by an explicit accept, each recorded in the history.
type Baseline struct {
	// Manifest is the surface as a canonical manifest (tools and every
	// list the run read), what GET …/baseline serves. The state file
	// holds it compact.
	Manifest json.RawMessage `json:"manifest"`
	// Digest is the surface digest (SurfaceDigest) of the served surface
	// it was recorded from: for an accepted baseline, the digest the
	// accept named.
	Digest string `json:"digest,omitempty"`
	// RecordedAt is when the run it was taken from ended.
	RecordedAt time.Time `json:"recorded_at"`
	// Origin is "first_seen" or "accepted".
	Origin string `json:"origin"`
	// By is the authenticated identity that accepted it ("anonymous"
	// when the web server authenticates nobody); ClaimedBy is what the
	// accept's body claimed, unverified. Reason is why. All sanitised
	// operator input; empty for first_seen.
	By        string `json:"by,omitempty"`
	ClaimedBy string `json:"claimed_by,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// The origins of a baseline.
const (
	OriginFirstSeen = "first_seen"
	OriginAccepted  = "accepted"
)

// AcceptTTL is how long an accept waits for a run that serves its digest
// (while the target is down, or serves another surface) before it
// expires unapplied.
const AcceptTTL = 24 * time.Hour

// Accept is a request to re-baseline a target to the surface with Digest,
// waiting for a successful run that serves it.
type Accept struct {
	Digest string `json:"digest"`
	// By is the authenticated identity, ClaimedBy the body's unverified
	// "by" (see Baseline).
	By          string    `json:"by"`
	ClaimedBy   string    `json:"claimed_by,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	RequestedAt time.Time `json:"requested_at"`
	Expires     time.Time `json:"expires"`
}

// NewAccept is an accept of digest made at now, its operator input
// sanitised, expiring after AcceptTTL.
func NewAccept(digest, by, claimed, reason string, now time.Time) *Accept {
	now = now.UTC()
	return &Accept{Digest: digest, By: sanitize.Name(by), ClaimedBy: sanitize.Name(claimed), Reason: sanitize.Text(reason),
		RequestedAt: now, Expires: now.Add(AcceptTTL)}
}

// Expired reports whether a is past its expiry at now.
func (a *Accept) Expired(now time.Time) bool { return !now.Before(a.Expires) }

// WithBaseline returns run with b as its state's baseline and a
// KindBaseline event in the history. An accepted baseline clears the
// pending accept and any "needs review". run is not modified: it may
// already be read; the caller saves and publishes the returned Run.
func WithBaseline(run *Run, b *Baseline, summary string, historyLimit int) *Run {
	b.By, b.ClaimedBy, b.Reason = sanitize.Name(b.By), sanitize.Name(b.ClaimedBy), sanitize.Text(b.Reason)
	b.RecordedAt = b.RecordedAt.UTC()
	msg := "baseline recorded from the first successful run: " + summary
	if b.Origin == OriginAccepted {
		msg = fmt.Sprintf("baseline accepted: %s", summary)
		if b.Reason != "" {
			msg += "; reason: " + b.Reason
		}
	}
	ev := Event{Time: b.RecordedAt, Kind: KindBaseline, Message: msg, By: b.By, ClaimedBy: b.ClaimedBy, Digest: b.Digest}
	return withState(run, historyLimit, []Event{ev}, func(st *State) {
		st.Baseline = b
		if b.Origin == OriginAccepted {
			st.PendingAccept, st.NeedsReview = nil, ""
		}
	})
}

// WithPendingAccept returns run with a as its state's pending accept (nil
// drops it), and an event saying so when msg is not empty.
func WithPendingAccept(run *Run, a *Accept, msg string, now time.Time, historyLimit int) *Run {
	var evs []Event
	if msg != "" {
		ev := Event{Time: now.UTC(), Kind: KindBaseline, Message: msg}
		if p := run.State.PendingAccept; a == nil && p != nil {
			ev.By, ev.ClaimedBy, ev.Digest = p.By, p.ClaimedBy, p.Digest
		} else if a != nil {
			ev.By, ev.ClaimedBy, ev.Digest = a.By, a.ClaimedBy, a.Digest
		}
		evs = append(evs, ev)
	}
	return withState(run, historyLimit, evs, func(st *State) { st.PendingAccept = a })
}

// WithSurface returns run with digest as its state's served surface
// digest; run itself when it already is.
func WithSurface(run *Run, digest string) *Run {
	if run.State.SurfaceDigest == digest {
		return run
	}
	return withState(run, 0, nil, func(st *State) { st.SurfaceDigest = digest })
}

// WithNeedsReview returns st marked as needing review for why: a copy,
// dirty, so that the mark is written even though the file it came from
// was moved aside.
func WithNeedsReview(st *State, why string) *State {
	next := *st
	next.NeedsReview, next.dirty = sanitize.Text(why), true
	return &next
}

// withState copies run and its State, applies edit to the copy, appends
// evs to the pending history, and marks it to be saved.
func withState(run *Run, historyLimit int, evs []Event, edit func(*State)) *Run {
	if historyLimit <= 0 {
		historyLimit = DefaultHistoryLimit
	}
	next := *run.State // maps and the sorted view are shared, read-only
	edit(&next)
	if len(evs) > 0 {
		next.pending = appendHistory(run.State.pending, historyLimit, evs)
		next.historyLimit = historyLimit
	}
	next.dirty = true
	out := *run
	out.State = &next
	out.Changed = true
	return &out
}
