package daemon

import (
	"sync"
	"time"
)

// vanished is what the daemon knows of the state files of targets it no
// longer probes: since when this process has seen each one absent from
// the configuration and every discovery source (global.state_retention).
// It lives in memory only: a file is never removed on first sight, and
// never before the retention has passed within this process's life, so a
// restart, or a discovery source still syncing, removes nothing.
type vanished struct {
	mu     sync.Mutex
	absent map[string]time.Time
}

// sweepInterval is how often the state dir is swept, besides after each
// reconcile: half the retention, within a second and an hour. A sweep
// lists one directory.
func sweepInterval(retention time.Duration) time.Duration {
	return min(max(retention/2, time.Second), time.Hour)
}

// sweepState removes the state and snapshot files of every target that
// has been absent — from the configuration, from every discovery source
// (all shards' targets count) and from the daemon's runtimes — for the
// retention within this process's life, and whose state file is older
// than the retention; it counts and logs each. A target that comes back
// before that resumes its state (it is loaded by name). It runs on the
// reload loop, after each reconcile and every sweepInterval, so it never
// races a reconcile that brings a target back. Before discovery has
// synced (ready) it does nothing.
func (d *Daemon) sweepState(now time.Time) {
	rc := d.cfg.Load()
	keep := rc.cfg.Global.StateRetention.Duration()
	if d.store == nil || !d.ready.Load() {
		return
	}
	if keep <= 0 {
		d.vanished.mu.Lock()
		d.vanished.absent = nil // kept for ever: nothing to track
		d.vanished.mu.Unlock()
		return
	}
	files, err := d.store.Files()
	if err != nil {
		d.log.Warn("state files not listed: vanished targets' state is not removed", "err", err)
		return
	}
	known := make(map[string]bool, len(rc.cfg.Targets)+len(rc.discovered))
	for i := range rc.cfg.Targets {
		known[rc.cfg.Targets[i].Name] = true
	}
	for i := range rc.discovered {
		known[rc.discovered[i].Name] = true
	}
	d.mu.Lock()
	for name := range d.targets {
		known[name] = true
	}
	d.mu.Unlock()

	d.vanished.mu.Lock()
	defer d.vanished.mu.Unlock()
	if d.vanished.absent == nil {
		d.vanished.absent = map[string]time.Time{}
	}
	onDisk := make(map[string]bool, len(files))
	for _, f := range files {
		if known[f.Target] {
			continue
		}
		onDisk[f.Target] = true
		since, ok := d.vanished.absent[f.Target]
		if !ok {
			d.vanished.absent[f.Target] = now
			continue
		}
		if now.Sub(since) < keep || now.Sub(f.ModTime) < keep {
			continue
		}
		if err := d.store.Remove(f.Target); err != nil {
			d.log.Warn("state of a vanished target not removed; the next sweep retries", "target", f.Target, "err", err)
			continue
		}
		delete(d.vanished.absent, f.Target)
		delete(onDisk, f.Target)
		d.metrics.StateRemoved()
		d.log.Info("state of a vanished target removed", "target", f.Target,
			"absent_since", since.UTC().Format(time.RFC3339), "state_retention", rc.cfg.Global.StateRetention.String())
	}
	for name := range d.vanished.absent {
		if !onDisk[name] {
			delete(d.vanished.absent, name) // back, or its files removed by hand
		}
	}
}

// sweepLoop asks the reload loop for a sweep once sweepInterval of the
// running configuration's retention has passed since the last it asked
// for, until the daemon stops. It looks every second, so a reload that
// shortens the retention takes effect then.
func (d *Daemon) sweepLoop() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-d.done:
			return
		case now := <-tick.C:
			if now.Sub(last) < sweepInterval(d.cfg.Load().cfg.Global.StateRetention.Duration()) {
				continue
			}
			last = now
			select {
			case d.sweeps <- struct{}{}:
			default: // one is pending
			}
		}
	}
}
