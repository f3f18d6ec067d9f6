package state

import (
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

// The health transitions: a streak of failed runs writes the state once
// (failing_since), keeps the findings and the last compared report, and
// the recovery clears it.
func TestHealthTransitions(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	missing := mkFinding("orders", catalogue.DriftToolMissing, "refund")
	report := func(at time.Time, ok bool, fs ...catalogue.Finding) *probe.Report {
		rep := &probe.Report{Target: "orders", StartedAt: at, DurationSeconds: 1, Success: ok, Findings: fs}
		if !ok {
			rep.FailureReason = mcp.ReasonConnect
		}
		return rep
	}
	r1 := Apply(Loaded(mustLoad(t, s, "orders")), report(t0, true, missing), t0, 0, nil)
	if !r1.Changed || r1.Compared != r1.Report || !r1.LastCompared.Equal(t0) || !r1.State.FailingSince.IsZero() {
		t.Fatalf("first run: %+v", r1)
	}
	mustSave(t, s, r1.State)

	t1 := t0.Add(time.Minute)
	r2 := Apply(r1, report(t1, false), t1, 0, nil)
	if !r2.Changed || !r2.State.FailingSince.Equal(t1) || len(r2.State.Findings) != 1 {
		t.Fatalf("first failure: changed=%v failing_since=%v findings=%d", r2.Changed, r2.State.FailingSince, len(r2.State.Findings))
	}
	if r2.Compared != r1.Report || !r2.LastCompared.Equal(r1.LastCompared) {
		t.Fatal("a failed run replaced the last compared report")
	}
	if !r1.State.FailingSince.IsZero() {
		t.Fatal("Apply modified the previous run's state")
	}
	mustSave(t, s, r2.State)

	t2 := t1.Add(time.Minute)
	r3 := Apply(r2, report(t2, false), t2, 0, nil)
	if r3.Changed || r3.State != r2.State {
		t.Fatal("a second failed run wrote the state again")
	}
	// After a restart the streak is still known.
	if got := mustLoad(t, openStore(t, dir), "orders"); !got.FailingSince.Equal(t1) {
		t.Fatalf("failing_since after restart = %v", got.FailingSince)
	}

	t3 := t2.Add(time.Minute)
	r4 := Apply(r3, report(t3, true, missing), t3, 0, nil)
	if !r4.Changed || !r4.State.FailingSince.IsZero() || !r4.State.LastCompared.Equal(t3) || r4.Compared != r4.Report {
		t.Fatalf("recovery: changed=%v failing_since=%v last_compared=%v", r4.Changed, r4.State.FailingSince, r4.State.LastCompared)
	}
	if len(r4.Opened)+len(r4.Resolved) != 0 {
		t.Fatal("the recovery re-opened or resolved the finding")
	}
}
