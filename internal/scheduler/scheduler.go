// Package scheduler runs jobs on their schedules: spread over the period,
// bounded in concurrency, never two runs of one job at once, reconciled by
// name on reload.
//
// It is built for many thousands of jobs: one dispatcher goroutine owns a
// min-heap of due times and a single timer, and a run has a goroutine only
// while it is in flight. An idle job costs one small heap entry.
package scheduler

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Schedule is what a job runs on; config.Schedule (robfig/cron based)
// satisfies it. Next returns the first activation strictly after t, or the
// zero time if there is none.
type Schedule interface {
	Next(time.Time) time.Time
}

// Job is one named unit of work, such as probing one target.
type Job struct {
	Name     string
	Schedule Schedule
	// Key identifies the job's settings; Reconcile restarts a job whose Key
	// changed.
	Key string
	// Run is one run; it must honour ctx, which is cancelled when the job is
	// removed or restarted, or when Stop gives up waiting. A per-run timeout
	// is the caller's to add.
	Run func(ctx context.Context)
}

// Options configure a Scheduler. The callbacks are called without the
// scheduler's lock held but on its hot paths, so they should be quick, and
// OnRemoved must not call Reconcile (Reconcile waits for its own
// OnRemoved calls).
type Options struct {
	// Concurrency is the number of runs in flight across all jobs; <= 0
	// means 1.
	Concurrency int
	// OnSkip is called when a run was due while the job's previous run was
	// still running or still waiting for a slot: that run is skipped, not
	// queued.
	OnSkip func(name string)
	// OnRemoved is called once a removed job's in-flight run (if any) has
	// finished, so the caller can delete its metric series. It is never
	// called for jobs that merely stop because the scheduler stops.
	OnRemoved func(name string)
	// OnLate, if set, receives each run's start lateness: the time it
	// started (a concurrency slot was free) minus the time it was due, or
	// was triggered.
	OnLate func(name string, late time.Duration)
	// Now is the clock for due times; nil means time.Now. The dispatcher
	// sleeps on real timers, so a substitute must advance with real time.
	Now func() time.Time
	// Rand is the source of first offsets; nil means a time-seeded one. The
	// scheduler draws from it under its lock, so it must not be shared.
	Rand *rand.Rand
}

// Errors returned by Trigger.
var (
	ErrUnknownJob     = errors.New("scheduler: unknown job")
	ErrAlreadyRunning = errors.New("scheduler: job is already running")
	ErrStopped        = errors.New("scheduler: stopped")
)

// Scheduler runs jobs. Its methods are safe for concurrent use.
type Scheduler struct {
	opts Options
	sem  chan struct{} // a token per run allowed to be in flight

	// recMu serialises Reconcile calls, including their OnRemoved
	// callbacks, so a job cannot be re-added (and run) before the caller
	// has deleted the series of its removal.
	recMu sync.Mutex

	mu      sync.Mutex
	jobs    map[string]*entry // live jobs, plus removed ones whose run is still in flight
	queue   dueHeap
	rng     *rand.Rand
	stopped bool

	wake       chan struct{} // 1-buffered: the heap head may have changed
	quit       chan struct{} // closed by Stop: no new runs
	dispatched chan struct{} // closed when the dispatcher has returned
	base       context.Context
	cancelRuns context.CancelFunc
	runs       sync.WaitGroup
}

// entry is a job's scheduling state. Every field is guarded by
// Scheduler.mu.
type entry struct {
	name    string
	job     Job
	nominal time.Time     // the schedule's own time of the next run
	offset  time.Duration // phase shift applied to every nominal time
	due     time.Time     // nominal + offset; the heap key
	index   int           // position in the heap, -1 when not scheduled

	running bool               // a run is in flight or waiting for a slot
	cancel  context.CancelFunc // cancels that run
	removed bool               // gone from the config; deleted when its run ends
	owed    int                // removals whose OnRemoved is still to be called
}

// New returns a running Scheduler with no jobs. Call Stop to release it.
func New(opts Options) *Scheduler {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	rng := opts.Rand
	if rng == nil {
		seed := uint64(time.Now().UnixNano())
		rng = rand.New(rand.NewPCG(seed, seed>>32|1))
	}
	base, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		opts:       opts,
		sem:        make(chan struct{}, opts.Concurrency),
		jobs:       make(map[string]*entry),
		rng:        rng,
		wake:       make(chan struct{}, 1),
		quit:       make(chan struct{}),
		dispatched: make(chan struct{}),
		base:       base,
		cancelRuns: cancel,
	}
	go s.dispatch()
	return s
}

// Next returns when the job is next due, and false if there is no such job
// or its schedule has no further activations.
func (s *Scheduler) Next(name string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(name)
	if e == nil || e.index < 0 {
		return time.Time{}, false
	}
	return e.due, true
}

// Running reports whether a run of the job is in flight, including one
// waiting for a concurrency slot.
func (s *Scheduler) Running(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(name)
	return e != nil && e.running
}

// Trigger starts a run of the job now, outside its schedule, which it does
// not shift. It returns ErrUnknownJob, ErrAlreadyRunning if a run is in
// flight (never two runs of one job at once), or ErrStopped.
func (s *Scheduler) Trigger(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(name)
	switch {
	case s.stopped:
		return ErrStopped
	case e == nil:
		return ErrUnknownJob
	case e.running:
		return ErrAlreadyRunning
	}
	s.start(e, s.opts.Now())
	return nil
}

// Stop stops dispatching and waits for in-flight runs. Their contexts are
// cancelled only once ctx is done; Stop then waits for them to return and
// reports ctx.Err(). Runs still waiting for a slot are dropped. This is the
// "process exiting" path: OnRemoved is not called. Stop is idempotent.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.quit)
	}
	s.mu.Unlock()
	<-s.dispatched

	done := make(chan struct{})
	go func() {
		s.runs.Wait()
		close(done)
	}()
	// Runs that have all finished win over a ctx that is already done.
	select {
	case <-done:
		s.cancelRuns()
		return nil
	default:
	}
	select {
	case <-done:
		s.cancelRuns()
		return nil
	case <-ctx.Done():
		s.cancelRuns()
		<-done
		return ctx.Err()
	}
}

// Period is the schedule's current interval as seen from now: the gap
// between its next two activations (d for "@every d"), or 0 if it has
// fewer than two. It is the spread window and driftd_probe_interval_seconds.
func Period(sched Schedule, now time.Time) time.Duration {
	first := sched.Next(now)
	if first.IsZero() {
		return 0
	}
	second := sched.Next(first)
	if !second.After(first) {
		return 0
	}
	return second.Sub(first)
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Scheduler) removedCallback(name string) {
	if s.opts.OnRemoved != nil {
		s.opts.OnRemoved(name)
	}
}
