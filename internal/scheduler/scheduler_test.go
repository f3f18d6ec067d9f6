package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFirstOffsetSpread(t *testing.T) {
	const n = 100
	var mu sync.Mutex
	first := make(map[string]time.Time, n)
	s := newScheduler(t, Options{Concurrency: n, Rand: rand.New(rand.NewPCG(1, 2))})
	jobs := make([]Job, n)
	for i := range jobs {
		name := fmt.Sprintf("job%03d", i)
		jobs[i] = Job{Name: name, Schedule: every(time.Second), Run: func(context.Context) {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := first[name]; !ok {
				first[name] = time.Now()
			}
		}}
	}
	start := time.Now()
	s.Reconcile(jobs)
	waitFor(t, "every job's first run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(first) == n
	})

	mu.Lock()
	defer mu.Unlock()
	lo, hi := start.Add(time.Hour), start
	for name, at := range first {
		// Offsets lie in [0, 1s); the slack is for a loaded machine.
		if d := at.Sub(start); d > 3*time.Second {
			t.Errorf("%s first ran %v after Reconcile, want about 1s at most", name, d)
		}
		lo, hi = earliest(lo, at), latest(hi, at)
	}
	if hi.Sub(lo) < 100*time.Millisecond {
		t.Errorf("all %d first runs within %v: not spread over the period", n, hi.Sub(lo))
	}
}

func TestFirstOffsetInsidePeriod(t *testing.T) {
	s := newScheduler(t, Options{Rand: rand.New(rand.NewPCG(3, 4))})
	var jobs []Job
	for i := range 50 {
		jobs = append(jobs, Job{Name: fmt.Sprint(i), Schedule: every(time.Hour), Run: func(context.Context) {}})
	}
	before := time.Now()
	s.Reconcile(jobs)
	after := time.Now()
	lo, hi := after.Add(time.Hour), before
	for _, j := range jobs {
		next, ok := s.Next(j.Name)
		if !ok {
			t.Fatalf("Next(%s): not scheduled", j.Name)
		}
		if next.Before(before) || !next.Before(after.Add(time.Hour)) {
			t.Errorf("Next(%s) = %v, want within an hour of Reconcile", j.Name, next.Sub(before))
		}
		lo, hi = earliest(lo, next), latest(hi, next)
	}
	if hi.Sub(lo) < 10*time.Minute {
		t.Errorf("50 first runs within %v of each other: not spread over the hour", hi.Sub(lo))
	}
}

func TestNoOverlap(t *testing.T) {
	var inflight, peak, runs, skips atomic.Int32
	s := newScheduler(t, Options{Concurrency: 4, OnSkip: func(name string) {
		if name == "slow" {
			skips.Add(1)
		}
	}})
	s.Reconcile([]Job{{Name: "slow", Schedule: every(20 * time.Millisecond), Run: func(ctx context.Context) {
		raise(&peak, inflight.Add(1))
		defer inflight.Add(-1)
		defer runs.Add(1)
		select {
		case <-time.After(150 * time.Millisecond):
		case <-ctx.Done():
		}
	}}})
	waitFor(t, "three runs and three skips", func() bool { return runs.Load() >= 3 && skips.Load() >= 3 })
	if p := peak.Load(); p != 1 {
		t.Errorf("%d runs of one job at once, want 1", p)
	}
}

func TestConcurrencyBound(t *testing.T) {
	const limit = 3
	var inflight, peak, runs atomic.Int32
	s := newScheduler(t, Options{Concurrency: limit})
	var jobs []Job
	for i := range 20 {
		jobs = append(jobs, Job{Name: fmt.Sprint("j", i), Schedule: every(10 * time.Millisecond), Run: func(context.Context) {
			raise(&peak, inflight.Add(1))
			time.Sleep(5 * time.Millisecond)
			inflight.Add(-1)
			runs.Add(1)
		}})
	}
	s.Reconcile(jobs)
	waitFor(t, "60 runs", func() bool { return runs.Load() >= 60 })
	if p := peak.Load(); p > limit {
		t.Errorf("%d runs at once, want at most %d", p, limit)
	}
	t.Logf("peak %d runs in flight", peak.Load())
}

func TestTrigger(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	s := newScheduler(t, Options{})
	s.Reconcile([]Job{{Name: "a", Schedule: every(time.Hour), Run: func(ctx context.Context) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
	}}})
	next, _ := s.Next("a")

	if err := s.Trigger("a"); err != nil {
		t.Fatalf("Trigger: %v", err)
	}
	receive(t, "the triggered run", started)
	if !s.Running("a") {
		t.Error("Running = false during the run")
	}
	if err := s.Trigger("a"); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("Trigger while running = %v, want ErrAlreadyRunning", err)
	}
	close(release)
	waitFor(t, "the run to end", func() bool { return !s.Running("a") })
	if err := s.Trigger("a"); err != nil {
		t.Errorf("Trigger after the run: %v", err)
	}
	receive(t, "the second triggered run", started)
	if err := s.Trigger("nope"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("Trigger(unknown) = %v, want ErrUnknownJob", err)
	}
	if got, _ := s.Next("a"); !got.Equal(next) {
		t.Errorf("Trigger moved Next from %v to %v", next, got)
	}
}

func TestPeriod(t *testing.T) {
	now := time.Now()
	if got := Period(every(90*time.Second), now); got != 90*time.Second {
		t.Errorf("Period(@every 90s) = %v", got)
	}
	if got := Period(never{}, now); got != 0 {
		t.Errorf("Period(never) = %v, want 0", got)
	}
}

// never is a schedule with no activations, like a cron date that has passed.
type never struct{}

func (never) Next(time.Time) time.Time { return time.Time{} }

func TestScheduleWithoutActivations(t *testing.T) {
	s := newScheduler(t, Options{})
	s.Reconcile([]Job{{Name: "n", Schedule: never{}, Run: func(context.Context) {}}})
	// Period 0 means offset 0: due now, then dropped from the heap.
	waitFor(t, "the job to leave the heap", func() bool { _, ok := s.Next("n"); return !ok })
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
