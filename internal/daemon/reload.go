package daemon

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/driftd/driftd/internal/config"
)

// errStopping answers a reload asked for during shutdown.
var errStopping = errors.New("driftd is stopping")

// Reload parses, validates and builds the configuration file again and
// swaps it in; on any error the running configuration stays. SIGHUP, POST
// /-/reload and the file watch all come through here, and one goroutine
// (reloadLoop) runs them one at a time.
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

func (d *Daemon) reloadLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.done:
			return
		case reply := <-d.reloads:
			reply <- d.reload()
		}
	}
}

func (d *Daemon) reload() error {
	now := nowFunc()
	cfg, err := config.Load(d.opts.ConfigFile)
	if err == nil {
		var rc *runtimeConfig
		if rc, err = buildRuntime(cfg, d.opts); err == nil {
			changed := cfg.Checksum != d.cfg.Load().cfg.Checksum
			if changed {
				d.apply(rc)
			}
			d.metrics.ReloadResult(true, now)
			d.log.Info("configuration reloaded", "file", d.opts.ConfigFile, "changed", changed, "targets", len(rc.targets), "checksum", cfg.Checksum[:12])
			return nil
		}
	}
	d.metrics.ReloadResult(false, now)
	d.log.Error("configuration reload failed; the previous configuration keeps running", "file", d.opts.ConfigFile, "err", err)
	return err
}

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
				go func() { _ = d.Reload() }()
			}
		}
	}()
	return nil
}
