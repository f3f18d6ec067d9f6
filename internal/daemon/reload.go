package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/scheduler"
	"github.com/driftd/driftd/internal/tracing"
)

// errStopping answers a reload asked for during shutdown.
var errStopping = errors.New("driftd is stopping")

// Reload parses, validates and builds the configuration file again and
// swaps it in; on any error the running configuration stays. It is POST
// /-/reload and waits for the outcome; SIGHUP and the file watch use
// RequestReload. One goroutine (reloadLoop) runs reloads one at a time.
func (d *Daemon) Reload() error {
	reply := make(chan error, 1)
	select {
	case d.reloads <- reply:
	case <-d.done:
		return errStopping
	}
	select {
	case err := <-reply:
		return err
	case <-d.done:
		return errStopping
	}
}

// RequestReload asks for a reload without waiting for it. Requests made
// while one is pending coalesce: a burst of SIGHUPs is one reload.
func (d *Daemon) RequestReload() {
	select {
	case d.pending <- struct{}{}:
	default:
	}
}

func (d *Daemon) reloadLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.done:
			return
		case reply := <-d.reloads:
			reply <- d.reload()
		case <-d.pending:
			_ = d.reload()
		case <-d.pendingSD:
			d.rediscover()
		case <-d.sweeps:
			d.sweepState(nowFunc())
		}
	}
}

func (d *Daemon) reload() error {
	now := nowFunc()
	old := d.cfg.Load()
	cfg, err := config.Load(d.opts.ConfigFile)
	if err == nil {
		d.warnConfig(cfg)
		err = d.checkTargets(cfg)
	}
	if err == nil {
		var rc *runtimeConfig
		if _, err = buildRuntime(cfg, nil, d.opts); err == nil {
			changed := cfg.Checksum != old.cfg.Checksum
			var traces *tracesChange
			if changed {
				traces, err = d.newTraces(cfg.Tracing)
			}
			if err == nil && changed {
				// Sources that fail to start are logged; the others run.
				if serr := d.syncSources(cfg); serr != nil {
					d.log.Error("discovery source not started", "err", serr)
				}
				rc, err = buildRuntime(cfg, d.discovered(), d.opts)
			} else if err == nil {
				rc = old
				d.refreshSources()
			}
			if err == nil {
				d.swapTraces(traces)
				if changed {
					d.apply(old, rc)
				}
				d.metrics.ReloadResult(true, now)
				d.reloadFailed.Store(nil)
				d.log.Info("configuration reloaded", "file", d.opts.ConfigFile, "changed", changed, "targets", len(rc.targets), "checksum", cfg.Checksum[:12])
				return nil
			}
			traces.discard()
		}
	}
	d.metrics.ReloadResult(false, now)
	d.reloadFailed.Store(&reloadFailure{at: now, err: err})
	d.log.Error("configuration reload failed; the previous configuration keeps running", "file", d.opts.ConfigFile, "err", err)
	return err
}

// reloadFailure is a refused reload: when, and every problem found.
type reloadFailure struct {
	at  time.Time
	err error
}

// checkTargets is what a reload refuses beyond the file's own errors: a
// target of the new configuration that could not run, its manifest
// missing, unreadable or invalid, or a file its http_client names gone
// (targetProblems). Like Prometheus with a broken rule file, the whole
// reload is refused and the running configuration stays, each target on
// the manifest it last read (loadOrLast), so one bad file never takes a
// target's checks away. The manifests are read through the daemon's
// cache: an unchanged file is not parsed again. A replica of a sharded
// daemon (--shard) reads only its own targets' manifests, which are the
// ones it runs and keeps: a fleet's other manifests are its other
// replicas' to read and refuse.
func (d *Daemon) checkTargets(cfg *config.Config) error {
	manifests, files := targetProblems(cfg, func(t config.Target) (*manifest.Manifest, error) {
		if !scheduler.InShard(t.Name, d.opts.Shard, d.opts.Shards) {
			return nil, nil // not this replica's
		}
		return d.manifests.check(t)
	})
	return sortedByLine(append(manifests, files...))
}

// warnConfig logs what the configuration does that still works but
// should change, such as a deprecated key, and a configuration that
// probes nothing.
func (d *Daemon) warnConfig(cfg *config.Config) {
	for _, w := range cfg.Warnings() {
		d.log.Warn("configuration: " + w)
	}
	if w := emptyWarning(cfg); w != "" {
		d.log.Warn("configuration: " + w)
	}
}

// tracesChange is a trace exporter built for a configuration not yet
// swapped in: next, or nil to turn traces off.
type tracesChange struct {
	next *tracing.Provider
}

// newTraces builds the trace exporter cfg asks for, for swapTraces; nil
// when the running one already matches it. Building one sends nothing.
func (d *Daemon) newTraces(cfg config.TracingConfig) (*tracesChange, error) {
	cur := d.traces.Load()
	switch {
	case cur == nil && !cfg.Enabled():
		return nil, nil
	case cur != nil && reflect.DeepEqual(cur.Config(), cfg):
		return nil, nil
	case !cfg.Enabled():
		return &tracesChange{}, nil
	}
	next, err := tracing.New(cfg, d.opts.Build.Version, d.exportFailed)
	if err != nil {
		return nil, err
	}
	return &tracesChange{next: next}, nil
}

// discard drops a change that was not swapped in.
func (c *tracesChange) discard() {
	if c != nil && c.next != nil {
		_ = c.next.Shutdown(context.Background()) // nothing is buffered yet
	}
}

// swapTraces swaps in the exporter newTraces built (nil: no change). The
// old one is flushed and shut down in the background, within traceFlush,
// so a reload never waits on a collector. Runs pick up the exporter at
// their start.
func (d *Daemon) swapTraces(c *tracesChange) {
	if c == nil {
		return
	}
	if old := d.traces.Swap(c.next); old != nil {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), traceFlush)
			defer cancel()
			if err := old.Shutdown(ctx); err != nil {
				d.log.Warn("previous trace exporter not flushed", "err", err)
			}
		}()
	}
	if c.next == nil {
		d.log.Info("trace export off")
		return
	}
	cfg := c.next.Config()
	d.log.Info("trace export", "client_type", cfg.ClientType, "endpoint", cfg.Endpoint, "sampling_fraction", cfg.SamplingFraction)
}

// traceFlush bounds the flush of a trace exporter replaced by a reload.
const traceFlush = 2 * time.Second

// watchConfig reloads, debounced, when the config file changes. It watches
// the directory, not the file: editors replace files, and a Kubernetes
// ConfigMap updates by swapping a ..data symlink.
func (d *Daemon) watchConfig() error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	dir, base := filepath.Split(filepath.Clean(d.opts.ConfigFile))
	if dir == "" {
		dir = "."
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return err
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer w.Close()
		const debounce = 500 * time.Millisecond
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		for {
			select {
			case <-d.done:
				timer.Stop()
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if name := filepath.Base(ev.Name); name == base || name == "..data" {
					timer.Reset(debounce)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				d.log.Warn("config file watch error", "err", err)
			case <-timer.C:
				d.RequestReload()
			}
		}
	}()
	return nil
}
