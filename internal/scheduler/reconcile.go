package scheduler

import (
	"container/heap"
	"time"
)

// Reconcile makes jobs the scheduled set, matching by Name: new jobs are
// scheduled with a random first offset, removed ones stop (their in-flight
// run is cancelled, then OnRemoved is called), and jobs whose Key changed
// restart: the in-flight run is cancelled and the job is rescheduled with a
// new offset. Unchanged jobs keep their timing. If a name occurs twice the
// last one wins. After Stop, Reconcile does nothing. A job without a
// Schedule or Run is a programming error and panics.
func (s *Scheduler) Reconcile(jobs []Job) {
	want := make(map[string]Job, len(jobs))
	for _, j := range jobs {
		if j.Schedule == nil || j.Run == nil {
			panic("scheduler: job " + j.Name + " has no Schedule or Run")
		}
		want[j.Name] = j
	}

	s.recMu.Lock()
	defer s.recMu.Unlock()
	var gone []string
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	now := s.opts.Now()
	for name, e := range s.jobs {
		if _, ok := want[name]; ok || e.removed {
			continue
		}
		s.unschedule(e)
		e.removed = true
		if e.running {
			e.owed++
			e.cancel()
		} else {
			delete(s.jobs, name)
			gone = append(gone, name)
		}
	}
	for name, j := range want {
		e := s.jobs[name]
		switch {
		case e == nil:
			e = &entry{name: name, job: j, index: -1}
			s.jobs[name] = e
			s.schedule(e, now)
		case e.removed:
			// Back before its old run ended: that run stays "in flight"
			// for the no-overlap rule and still owes its OnRemoved.
			e.removed = false
			e.job = j
			s.schedule(e, now)
		case e.job.Key != j.Key:
			if e.running {
				e.cancel()
			}
			e.job = j
			s.schedule(e, now)
		default:
			// Same settings: take the new Run (it may close over the new
			// config) but keep the phase.
			e.job = j
		}
	}
	s.mu.Unlock()
	s.poke()
	for _, name := range gone {
		s.removedCallback(name)
	}
}

func (s *Scheduler) live(name string) *entry {
	if e := s.jobs[name]; e != nil && !e.removed {
		return e
	}
	return nil
}

// schedule (re)starts e's timing at now plus a fresh random offset. The
// offset stays as a phase shift on every later activation, so the spread
// survives cron expressions that fire on wall-clock boundaries.
func (s *Scheduler) schedule(e *entry, now time.Time) {
	e.nominal = now
	e.offset = 0
	if p := Period(e.job.Schedule, now); p > 0 {
		e.offset = time.Duration(s.rng.Int64N(int64(p)))
	}
	e.due = now.Add(e.offset)
	if e.index < 0 {
		heap.Push(&s.queue, e)
	} else {
		heap.Fix(&s.queue, e.index)
	}
}

func (s *Scheduler) unschedule(e *entry) {
	if e.index >= 0 {
		heap.Remove(&s.queue, e.index)
	}
}
