package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"strings"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
	"github.com/driftd/driftd/internal/web"
)

// probeBaseline probes a baseline-mode target (baseline: first_seen). A
// target without a recorded baseline, or with an accept pending, is
// probed with nothing declared and returns the baseline to record from
// this run; otherwise it is compared against its recorded baseline.
func (d *Daemon) probeBaseline(ctx context.Context, tc *targetConfig, t *target, opts probe.Options) (*probe.Report, *state.Baseline) {
	current := t.run.Load().State.Baseline
	rebase := t.accept.Swap(nil)
	if rebase == nil && current == nil {
		rebase = &state.Baseline{Origin: state.OriginFirstSeen}
	}
	var declared *manifest.Manifest
	if rebase == nil {
		m, err := t.parsedBaseline(current)
		if err != nil {
			return probe.Failed(*tc.t, mcp.ReasonConfig, "baseline: "+err.Error(), opts), nil
		}
		declared = m
	}
	p := probe.Prepare(*tc.t, declared)
	p.Baseline = true
	return probe.Run(ctx, p, opts), rebase
}

// parsedBaseline returns b's manifest, parsed once per distinct baseline.
func (t *target) parsedBaseline(b *state.Baseline) (*manifest.Manifest, error) {
	sum := sha256.Sum256(b.Manifest)
	if p := t.baseline.Load(); p != nil && p.sum == sum {
		return p.m, nil
	}
	m, err := manifest.Parse(b.Manifest, ".json")
	if err != nil {
		return nil, err
	}
	m.Path = "baseline"
	t.baseline.Store(&parsedBaseline{sum: sum, m: m})
	return m, nil
}

// rebaseline records the served surface of a successful run as the
// target's baseline. A run that failed, or whose listing was capped (the
// surface would be partial), records nothing: a first_seen baseline is
// taken by the next run anyway, and an accept is put back for it.
func (d *Daemon) rebaseline(t *target, run *state.Run, rep *probe.Report, b *state.Baseline, log *slog.Logger) *state.Run {
	retry := func(why string, attrs ...any) *state.Run {
		if b.Origin == state.OriginAccepted {
			t.accept.CompareAndSwap(nil, b)
		}
		log.Warn("baseline not recorded; the next run tries again: "+why, attrs...)
		return run
	}
	if !rep.Success {
		return retry("the run failed", "reason", rep.FailureReason)
	}
	m, counts, _, err := probe.ServedManifest(rep, mcp.Kinds, false)
	if err != nil {
		return retry("the served surface is incomplete", "err", err)
	}
	raw, err := m.Canonical()
	if err != nil {
		return retry("the served surface does not render", "err", err)
	}
	b.Manifest, b.RecordedAt = raw, nowFunc()
	run = state.WithBaseline(run, b, strings.Join(counts, ", "), historyLimit)
	// This run's own copy of the report, not yet published: the tools it
	// served are now the declared ones. (Its prompt, resource and template
	// counts are shared with the probe's report and stay as they were.)
	run.Report.ComparedAgainst, run.Report.Tools.Declared = "baseline", len(m.Tools)
	log.Info("baseline recorded", "origin", b.Origin, "by", b.By, "surface", strings.Join(counts, ", "))
	return run
}

// AcceptBaseline asks a baseline-mode target's next run to take its
// served surface as the new baseline, and starts that run now. by and
// reason are recorded in the history. The run that takes it compares
// against nothing, so every drift finding it had resolves.
func (d *Daemon) AcceptBaseline(name, by, reason string) error {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return web.ErrUnknownTarget
	}
	if tc.t.Baseline == "" {
		return web.ErrNotBaseline
	}
	d.target(name).accept.Store(&state.Baseline{Origin: state.OriginAccepted, By: by, Reason: reason})
	if err := d.Probe(name); err != nil && !errors.Is(err, web.ErrAlreadyRunning) {
		return err
	}
	return nil
}

// Baseline returns a baseline-mode target's recorded baseline.
func (d *Daemon) Baseline(name string) (*state.Baseline, error) {
	tc, ok := d.cfg.Load().byName[name]
	switch {
	case !ok:
		return nil, web.ErrUnknownTarget
	case tc.t.Baseline == "":
		return nil, web.ErrNotBaseline
	}
	b := d.target(name).run.Load().State.Baseline
	if b == nil {
		return nil, web.ErrNoBaseline
	}
	return b, nil
}
