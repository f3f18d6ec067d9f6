package scheduler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func idle(name, key string) Job {
	return Job{Name: name, Key: key, Schedule: every(time.Hour), Run: func(context.Context) {}}
}

func TestReconcileAddKeepChange(t *testing.T) {
	var removed atomic.Int32
	s := newScheduler(t, Options{OnRemoved: func(string) { removed.Add(1) }})
	s.Reconcile([]Job{idle("a", "v1")})
	a1, ok := s.Next("a")
	if !ok {
		t.Fatal("a not scheduled")
	}
	if _, ok := s.Next("b"); ok {
		t.Fatal("b scheduled before it was added")
	}

	s.Reconcile([]Job{idle("a", "v1"), idle("b", "v1")})
	if got, _ := s.Next("a"); !got.Equal(a1) {
		t.Errorf("unchanged a moved from %v to %v", a1, got)
	}
	b1, ok := s.Next("b")
	if !ok {
		t.Fatal("b not scheduled after it was added")
	}

	s.Reconcile([]Job{idle("a", "v2"), idle("b", "v1")})
	if got, _ := s.Next("a"); got.Equal(a1) {
		t.Errorf("a kept Next %v after its Key changed, want a new offset", got)
	}
	if got, _ := s.Next("b"); !got.Equal(b1) {
		t.Errorf("unchanged b moved from %v to %v", b1, got)
	}
	if n := removed.Load(); n != 0 {
		t.Errorf("OnRemoved called %d times, want 0", n)
	}
}

func TestReconcileRestartCancelsRun(t *testing.T) {
	var removed atomic.Int32
	started := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	s := newScheduler(t, Options{OnRemoved: func(string) { removed.Add(1) }})
	job := Job{Name: "c", Key: "v1", Schedule: every(time.Hour), Run: func(ctx context.Context) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
	}}
	s.Reconcile([]Job{job})
	if err := s.Trigger("c"); err != nil {
		t.Fatal(err)
	}
	receive(t, "the run", started)
	job.Key = "v2"
	s.Reconcile([]Job{job})
	receive(t, "the old run's cancellation", cancelled)
	waitFor(t, "the old run to end", func() bool { return !s.Running("c") })
	if err := s.Trigger("c"); err != nil {
		t.Errorf("Trigger after restart: %v", err)
	}
	receive(t, "a run with the new settings", started)
	if n := removed.Load(); n != 0 {
		t.Errorf("a restart called OnRemoved %d times, want 0", n)
	}
}

func TestReconcileRemoveRunning(t *testing.T) {
	var returned atomic.Bool
	var calls, early atomic.Int32
	started := make(chan struct{}, 1)
	s := newScheduler(t, Options{OnRemoved: func(name string) {
		if name != "r" {
			t.Errorf("OnRemoved(%q)", name)
		}
		if !returned.Load() {
			early.Add(1)
		}
		calls.Add(1)
	}})
	s.Reconcile([]Job{{Name: "r", Schedule: every(time.Hour), Run: func(ctx context.Context) {
		started <- struct{}{}
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // a run that takes a moment to wind down
		returned.Store(true)
	}}})
	if err := s.Trigger("r"); err != nil {
		t.Fatal(err)
	}
	receive(t, "the run", started)
	s.Reconcile(nil)
	if _, ok := s.Next("r"); ok {
		t.Error("removed job still has a Next")
	}
	if err := s.Trigger("r"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("Trigger(removed) = %v, want ErrUnknownJob", err)
	}
	waitFor(t, "OnRemoved", func() bool { return calls.Load() > 0 })
	if early.Load() != 0 {
		t.Error("OnRemoved was called before the cancelled run returned")
	}
	time.Sleep(50 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Errorf("OnRemoved called %d times, want 1", n)
	}
}

func TestReconcileRemovedNeverRunsAgain(t *testing.T) {
	var runs, calls atomic.Int32
	s := newScheduler(t, Options{Concurrency: 2, OnRemoved: func(string) { calls.Add(1) }})
	s.Reconcile([]Job{{Name: "q", Schedule: every(10 * time.Millisecond), Run: func(context.Context) { runs.Add(1) }}})
	waitFor(t, "a run", func() bool { return runs.Load() > 0 })
	s.Reconcile(nil)
	waitFor(t, "OnRemoved", func() bool { return calls.Load() == 1 })
	after := runs.Load()
	time.Sleep(200 * time.Millisecond) // twenty periods
	if n := runs.Load(); n != after {
		t.Errorf("removed job ran %d more times", n-after)
	}
}

// A job removed and re-added before its cancelled run returns must not run
// twice at once, and its OnRemoved must come before the new job's first run.
func TestReconcileReaddWhileDraining(t *testing.T) {
	var inflight, peak, calls, newRuns, badOrder atomic.Int32
	started := make(chan struct{}, 1)
	s := newScheduler(t, Options{Concurrency: 4, OnRemoved: func(string) {
		time.Sleep(20 * time.Millisecond) // deleting series takes a moment
		calls.Add(1)
	}})
	old := Job{Name: "r", Key: "v1", Schedule: every(time.Hour), Run: func(ctx context.Context) {
		raise(&peak, inflight.Add(1))
		defer inflight.Add(-1)
		started <- struct{}{}
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
	}}
	s.Reconcile([]Job{old})
	if err := s.Trigger("r"); err != nil {
		t.Fatal(err)
	}
	receive(t, "the old run", started)
	s.Reconcile(nil)
	s.Reconcile([]Job{{Name: "r", Key: "v1", Schedule: every(10 * time.Millisecond), Run: func(context.Context) {
		raise(&peak, inflight.Add(1))
		defer inflight.Add(-1)
		if calls.Load() != 1 {
			badOrder.Add(1)
		}
		newRuns.Add(1)
	}}})
	if !s.Running("r") {
		t.Error("Running = false while the old run is still winding down")
	}
	waitFor(t, "runs of the re-added job", func() bool { return newRuns.Load() >= 3 })
	if p := peak.Load(); p != 1 {
		t.Errorf("%d runs of r at once, want 1", p)
	}
	if badOrder.Load() != 0 {
		t.Error("the re-added job ran before OnRemoved of the old one returned")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("OnRemoved called %d times, want 1", n)
	}
}
