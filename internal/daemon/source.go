package daemon

import (
	"errors"
	"fmt"
	"strings"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/scheduler"
	"github.com/driftd/driftd/internal/state"
	"github.com/driftd/driftd/internal/web"
)

// The daemon is the web surface's Source.
var _ web.Source = (*Daemon)(nil)

// Ready reports whether the configuration is loaded and targets scheduled.
func (d *Daemon) Ready() bool { return d.ready.Load() }

// Targets lists every target of this instance, in configuration order.
func (d *Daemon) Targets() []web.TargetStatus {
	rc := d.cfg.Load()
	out := make([]web.TargetStatus, 0, len(rc.targets))
	for _, tc := range rc.targets {
		out = append(out, d.status(tc))
	}
	return out
}

// Rejected lists the discovered targets that are not probed, and why.
func (d *Daemon) Rejected() []web.Rejected {
	rc := d.cfg.Load()
	out := make([]web.Rejected, 0, len(rc.rejected))
	for _, r := range rc.rejected {
		out = append(out, web.Rejected{Source: r.source, Reason: r.err.Error()})
	}
	return out
}

// Target returns one target's status.
func (d *Daemon) Target(name string) (web.TargetStatus, bool) {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return web.TargetStatus{}, false
	}
	return d.status(tc), true
}

// status is one target's row: its configuration, and of its published run
// what that run established (the classification it ran with, not one
// recomputed from the current configuration).
func (d *Daemon) status(tc *targetConfig) web.TargetStatus {
	st := web.TargetStatus{
		Name: tc.t.Name, Origin: tc.origin, URL: config.RedactedURL(tc.t.URL), Schedule: tc.t.Schedule.String(), Labels: tc.t.Labels,
		Classification: probe.Classify(*tc.t).Class,
	}
	run, _ := d.Run(tc.t.Name)
	st.Status = run.Status()
	if t := d.existing(tc.t.Name); t != nil {
		if msg := t.manifestErr.Load(); msg != nil {
			st.ManifestError = *msg
		}
	}
	if d.sched == nil {
		return st
	}
	st.Running = d.sched.Running(tc.t.Name)
	if next, ok := d.sched.Next(tc.t.Name); ok {
		st.NextRun = &next
	}
	if rep := run.Report; rep != nil {
		st.Classification = rep.Classification.Class
		st.LastRun = &web.RunSummary{StartedAt: rep.StartedAt, Success: rep.Success, FailureReason: string(rep.FailureReason), DurationSeconds: rep.DurationSeconds}
	}
	return st
}

// Run returns a target's published outcome: its last report and its state.
func (d *Daemon) Run(name string) (*state.Run, bool) {
	if _, ok := d.cfg.Load().byName[name]; !ok {
		return nil, false
	}
	if t := d.existing(name); t != nil {
		return t.run.Load(), true
	}
	return state.Loaded(state.NewState(name)), true
}

// History returns a target's change history: its state file's and the
// events its published state has not yet written.
func (d *Daemon) History(name string) ([]state.Event, error) {
	run, ok := d.Run(name)
	if !ok {
		return nil, web.ErrUnknownTarget
	}
	if d.store == nil {
		return nil, scheduler.ErrStopped
	}
	return d.store.History(run.State)
}

// Logs returns a target's recent log lines.
func (d *Daemon) Logs(name string) []string {
	return d.logs.Lines(name)
}

func (d *Daemon) existing(name string) *target {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.targets[name]
}

// ConfigStatus says whether the last reload was refused, and why: its
// problems, one a line, at most maxReloadProblems of them.
func (d *Daemon) ConfigStatus() web.ConfigStatus {
	f := d.reloadFailed.Load()
	if f == nil {
		return web.ConfigStatus{}
	}
	lines := strings.Split(f.err.Error(), "\n")
	if n := len(lines); n > maxReloadProblems {
		lines = append(lines[:maxReloadProblems:maxReloadProblems], fmt.Sprintf("… and %d more: see the log or driftd config check", n-maxReloadProblems))
	}
	return web.ConfigStatus{ReloadFailedAt: f.at, ReloadProblems: lines}
}

// maxReloadProblems bounds the problems a page lists.
const maxReloadProblems = 20

// ConfigYAML is the effective configuration with secrets redacted.
func (d *Daemon) ConfigYAML() ([]byte, error) { return d.cfg.Load().cfg.Redacted() }

// Probe starts a run of a target now.
func (d *Daemon) Probe(name string) error {
	if d.sched == nil {
		return scheduler.ErrStopped
	}
	switch err := d.sched.Trigger(name); {
	case errors.Is(err, scheduler.ErrUnknownJob):
		return web.ErrUnknownTarget
	case errors.Is(err, scheduler.ErrAlreadyRunning):
		return web.ErrAlreadyRunning
	default:
		return err
	}
}

// Served returns a target's served set as last recorded, from its
// snapshot file.
func (d *Daemon) Served(name string) ([]mcp.Tool, error) {
	if _, ok := d.cfg.Load().byName[name]; !ok {
		return nil, web.ErrUnknownTarget
	}
	if d.store == nil {
		return nil, scheduler.ErrStopped
	}
	return d.store.LoadSnapshot(name)
}

// Declared returns a target's manifest, as its runs read it.
func (d *Daemon) Declared(name string) (*manifest.Manifest, error) {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return nil, web.ErrUnknownTarget
	}
	if tc.t.Baseline != "" {
		b, err := d.Baseline(name)
		if err != nil {
			return nil, err
		}
		return d.target(name).parsedBaseline(b)
	}
	m, err := d.manifests.loadOrLast(tc.t.Manifest)
	if m != nil {
		return m, nil // the last good one while the file is broken
	}
	return nil, err
}
