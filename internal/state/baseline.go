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
	// list the run read), what GET …/baseline serves.
	Manifest json.RawMessage `json:"manifest"`
	// RecordedAt is when the run it was taken from ended.
	RecordedAt time.Time `json:"recorded_at"`
	// Origin is "first_seen" or "accepted".
	Origin string `json:"origin"`
	// By and Reason are what the accept said: who, and why (sanitised
	// operator input); empty for first_seen.
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// The origins of a baseline.
const (
	OriginFirstSeen = "first_seen"
	OriginAccepted  = "accepted"
)

// WithBaseline returns run with b as its state's baseline and a
// KindBaseline event in the history. run is not modified: it may already
// be read; the caller saves and publishes the returned Run instead.
func WithBaseline(run *Run, b *Baseline, summary string, historyLimit int) *Run {
	b.By, b.Reason = sanitize.Name(b.By), sanitize.Text(b.Reason)
	b.RecordedAt = b.RecordedAt.UTC()
	msg := "baseline recorded from the first successful run: " + summary
	if b.Origin == OriginAccepted {
		msg = fmt.Sprintf("baseline accepted: %s", summary)
		if b.Reason != "" {
			msg += "; reason: " + b.Reason
		}
	}
	ev := Event{Time: b.RecordedAt, Kind: KindBaseline, Message: msg, By: b.By}
	if historyLimit <= 0 {
		historyLimit = DefaultHistoryLimit
	}
	next := *run.State // maps and the sorted view are shared, read-only
	next.Baseline = b
	next.pending = appendHistory(run.State.pending, historyLimit, []Event{ev})
	next.historyLimit = historyLimit
	next.dirty = true
	out := *run
	out.State = &next
	out.Changed = true
	return &out
}
