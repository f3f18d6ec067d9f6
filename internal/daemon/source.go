package daemon

import (
	"errors"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/scheduler"
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

// Target returns one target's status.
func (d *Daemon) Target(name string) (web.TargetStatus, bool) {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return web.TargetStatus{}, false
	}
	return d.status(tc), true
}

func (d *Daemon) status(tc *targetConfig) web.TargetStatus {
	st := web.TargetStatus{
		Name: tc.t.Name, URL: tc.t.URL, Schedule: tc.t.Schedule.String(), Labels: tc.t.Labels,
		Classification: probe.Classify(tc.t).Class,
		Running:        d.sched.Running(tc.t.Name),
		Findings:       map[catalogue.Severity]int{catalogue.Error: 0, catalogue.Warn: 0, catalogue.Info: 0},
	}
	if next, ok := d.sched.Next(tc.t.Name); ok {
		st.NextRun = &next
	}
	if rep, ok := d.Report(tc.t.Name); ok {
		st.LastRun = &web.RunSummary{StartedAt: rep.StartedAt, Success: rep.Success, FailureReason: string(rep.FailureReason), DurationSeconds: rep.DurationSeconds}
		st.Findings = rep.Summary
	}
	return st
}

// Report returns a target's last full report.
func (d *Daemon) Report(name string) (*probe.Report, bool) {
	tr := d.existing(name)
	if tr == nil {
		return nil, false
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.last, tr.last != nil
}

// History returns a target's change events, oldest first.
func (d *Daemon) History(name string) ([]web.Event, bool) {
	if _, ok := d.cfg.Load().byName[name]; !ok {
		return nil, false
	}
	tr := d.existing(name)
	if tr == nil {
		return []web.Event{}, true
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]web.Event, 0, len(tr.state.History))
	for _, e := range tr.state.History {
		out = append(out, web.Event{Time: e.Time, Kind: e.Kind, Rule: e.Rule, Severity: string(e.Severity), Tool: e.Tool,
			Direction: e.Direction, Pointer: e.Pointer, Change: e.Change, Fingerprint: e.Fingerprint, Message: e.Message})
	}
	return out, true
}

// Logs returns a target's recent log lines.
func (d *Daemon) Logs(name string) []string {
	if tr := d.existing(name); tr != nil {
		return tr.logs.Lines()
	}
	return nil
}

func (d *Daemon) existing(name string) *targetRuntime {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.targets[name]
}

// ConfigYAML is the effective configuration with secrets redacted.
func (d *Daemon) ConfigYAML() ([]byte, error) { return d.cfg.Load().cfg.Redacted() }

// Probe starts a run of a target now.
func (d *Daemon) Probe(name string) error {
	switch err := d.sched.Trigger(name); {
	case errors.Is(err, scheduler.ErrUnknownJob):
		return web.ErrUnknownTarget
	case errors.Is(err, scheduler.ErrAlreadyRunning):
		return web.ErrAlreadyRunning
	default:
		return err
	}
}
