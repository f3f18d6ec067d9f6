package scheduler

import (
	"container/heap"
	"context"
	"time"
)

// idleWait is how long the dispatcher sleeps with nothing scheduled; any
// change to the heap wakes it earlier.
const idleWait = time.Hour

// dispatch is the one goroutine that starts runs. It pops every entry that
// is due, starts or skips it, pushes it back at its next due time, and
// sleeps on a single timer until the new head is due or the heap changes.
func (s *Scheduler) dispatch() {
	defer close(s.dispatched)
	timer := time.NewTimer(idleWait)
	defer timer.Stop()
	var skipped []string
	for {
		skipped = skipped[:0]
		s.mu.Lock()
		now := s.opts.Now()
		for len(s.queue) > 0 && !s.queue[0].due.After(now) {
			e := s.queue[0]
			if e.running {
				skipped = append(skipped, e.name)
			} else {
				s.start(e, e.due)
			}
			s.advance(e)
		}
		wait := idleWait
		if len(s.queue) > 0 {
			wait = s.queue[0].due.Sub(now)
		}
		s.mu.Unlock()
		if s.opts.OnSkip != nil {
			for _, name := range skipped {
				s.opts.OnSkip(name)
			}
		}

		// Since Go 1.23 Reset discards a pending expiry, so there is no
		// stale tick to drain.
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
		case <-s.quit:
			return
		}
	}
}

// advance moves e to its next activation after the one just handled. It
// follows the schedule's own times, not the end of the run, so a slow run
// does not shift the phase. A schedule with no later activation (or one
// that does not move forward) leaves the heap rather than spinning.
func (s *Scheduler) advance(e *entry) {
	next := e.job.Schedule.Next(e.nominal)
	if next.IsZero() || !next.After(e.nominal) {
		heap.Remove(&s.queue, e.index)
		return
	}
	e.nominal = next
	e.due = next.Add(e.offset)
	heap.Fix(&s.queue, e.index)
}

// start launches a run of e that was due at due. Called with s.mu held.
// From here until finish, e counts as running, including the time spent
// waiting for a concurrency slot.
func (s *Scheduler) start(e *entry, due time.Time) {
	ctx, cancel := context.WithCancel(s.base)
	e.running = true
	e.cancel = cancel
	s.runs.Add(1)
	go s.run(ctx, cancel, e, e.job.Run, due)
}

func (s *Scheduler) run(ctx context.Context, cancel context.CancelFunc, e *entry, fn func(context.Context), due time.Time) {
	defer s.runs.Done()
	defer s.finish(e)
	defer cancel()
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return
	case <-s.quit:
		return
	}
	defer func() { <-s.sem }()
	// select picks at random among ready cases: re-check that the run is
	// still wanted before starting it.
	select {
	case <-ctx.Done():
		return
	case <-s.quit:
		return
	default:
	}
	if s.opts.OnLate != nil {
		s.opts.OnLate(e.name, s.opts.Now().Sub(due))
	}
	fn(ctx)
}

// finish ends e's run. If the job was removed meanwhile, OnRemoved is
// called before e stops counting as running, so a job re-added under the
// same name cannot run until the caller has dropped the old series.
func (s *Scheduler) finish(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for e.owed > 0 {
		e.owed--
		s.mu.Unlock()
		s.removedCallback(e.name)
		s.mu.Lock()
	}
	if e.removed {
		delete(s.jobs, e.name)
	}
	e.running = false
	e.cancel = nil
}

// dueHeap is a min-heap of entries by due time, for container/heap.
type dueHeap []*entry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }

func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *dueHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
