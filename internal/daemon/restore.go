package daemon

import (
	"context"
	"sync"
	"sync/atomic"
)

// restore publishes, for each target of rc that has not run since start,
// the last run its state file saved (metrics.Restore): its findings,
// probe_success, timestamps and info stay on /metrics across a restart,
// marked by driftd_target_restored, until its first run. A target whose
// file saved no run publishes nothing until then. A target a reload
// dropped and the next brought back while its runtime was kept publishes
// its latest run again at once. Targets whose series are published
// already are left alone.
func (d *Daemon) restore(rc *runtimeConfig) {
	for _, tc := range rc.targets {
		if t := d.existing(tc.t.Name); t != nil {
			d.metrics.Restore(t.run.Load())
		}
	}
}

// saveWorkers bounds the state files saveLastRuns writes at once.
const saveWorkers = 8

// saveLastRuns is a step of Stop, after the runs have ended: it writes
// the state file of every target whose file holds an older run record
// than its latest run's (the steady state writes nothing, so most do),
// so the next start restores the last-run times exactly. It stops when
// ctx expires: a target not written then restores the record its file
// last held, older times, as after a kill.
func (d *Daemon) saveLastRuns(ctx context.Context) error {
	if d.store == nil {
		return nil
	}
	d.mu.Lock()
	var behind []*target
	for _, t := range d.targets {
		if r := t.run.Load(); r.State.LastRun != nil && r.State.LastRun != t.saved.Load() {
			behind = append(behind, t)
		}
	}
	d.mu.Unlock()
	var next, written, failed atomic.Int64
	var wg sync.WaitGroup
	for range min(saveWorkers, len(behind)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(len(behind)) {
					return
				}
				t := behind[i]
				st := *t.run.Load().State // the published State is read-only: Save marks its copy
				if err := d.store.Save(&st); err != nil {
					failed.Add(1)
					d.metrics.StateWriteFailed()
					continue
				}
				t.saved.Store(st.LastRun)
				written.Add(1)
			}
		})
	}
	wg.Wait()
	if left := int64(len(behind)) - written.Load() - failed.Load(); left > 0 || failed.Load() > 0 {
		d.log.Warn("last runs not all saved: those targets restore an older run at the next start",
			"written", written.Load(), "failed", failed.Load(), "not_written", left)
		return ctx.Err()
	}
	if len(behind) > 0 {
		d.log.Info("last runs saved for the next start", "targets", written.Load())
	}
	return nil
}
