package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

var nowFunc = time.Now

// historyLimit bounds each target's change history, kept in memory and on
// disk.
const historyLimit = 100

// target is what the daemon keeps per target between runs: the published
// outcome of its latest run (its log lines are in the daemon's one ring).
// Runs of one target
// never overlap (the scheduler sees to it), so the one writer of run is
// that target's current run; readers load it without a lock.
type target struct {
	run atomic.Pointer[state.Run]
	// publish serialises the two writers of run: the target's run, from
	// its state step to its publication, and a baseline accept
	// (AcceptBaseline), which publishes the state with the accept pending.
	publish sync.Mutex
	// baseline is the recorded baseline, parsed, keyed by the hash of its
	// bytes: parsed once, not at every run.
	baseline atomic.Pointer[parsedBaseline]
	// manifestErr is why the target's manifest file could not be read or
	// parsed at its latest run, which compared against the last good
	// version instead; nil when it could.
	manifestErr atomic.Pointer[string]
	// saved is the run record the target's state file holds, as of its
	// last load or write: a graceful stop writes the files whose record
	// is older than the published one (saveLastRuns).
	saved atomic.Pointer[state.LastRun]
	// recall is what the target's last run concluded from its listing,
	// with what it was concluded against (recalled); nil when it may not
	// be recalled.
	recall atomic.Pointer[recalled]
}

// recalled is a probe.Recall and what it holds for: the configuration of
// the run that concluded it (a reload builds new ones: the first run
// after it reads its listing) and the SHA-256 of the manifest file it
// was compared against.
type recalled struct {
	probe.Recall
	tc       *targetConfig
	manifest [32]byte
}

// parsedBaseline is a baseline's manifest and the hash of its bytes.
type parsedBaseline struct {
	sum [32]byte
	m   *manifest.Manifest
}

// target returns the target's runtime, creating it (and loading its state
// from disk) on first use. A corrupt state file is moved aside by the store,
// logged and counted; the target starts fresh. A file of a newer driftd is
// left untouched and never overwritten. A baseline-mode target whose file
// was either is held in "needs review": trusting the next surface served
// would silently re-baseline it.
func (d *Daemon) target(name string) *target {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.targets[name]; ok {
		return t
	}
	st, err := d.store.Load(name)
	if err != nil {
		var ce *state.CorruptError
		var ne *state.NewerError
		switch {
		case errors.As(err, &ne):
			d.log.Error("state file written by a newer driftd; left untouched, not overwritten", "target", name, "err", err)
		case errors.As(err, &ce):
			d.log.Error("state file unreadable; moved aside, target starts fresh", "target", name, "err", err)
		default:
			d.log.Error("state file unreadable; target starts fresh", "target", name, "err", err)
		}
		d.metrics.StateReadFailed()
		if tc, ok := d.cfg.Load().byName[name]; ok && tc.t.Baseline != "" && st != nil {
			st = state.WithNeedsReview(st, err.Error())
			d.log.Error("baseline needs review: no baseline is recorded until one is accepted (driftd baseline accept)", "target", name)
		}
	}
	if st == nil {
		st = state.NewState(name) // a name the store refuses: run without saved state
	}
	t := &target{}
	t.run.Store(state.Loaded(st))
	t.saved.Store(st.LastRun)
	d.targets[name] = t
	return t
}

// runTarget is one scheduled (or triggered) run of a target, one way
// through the pipeline: probe → report → state → save → publish.
func (d *Daemon) runTarget(ctx context.Context, name string) {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return
	}
	t := d.target(name)
	log := slog.New(d.logs.handler(name, d.log.Handler())).With("target", name)
	// The run's response bodies go back when it is over: the served set,
	// the one part of rep that points into them, has been hashed and, when
	// it changed, copied for the snapshot (state.Apply); the published
	// report is a copy without it.
	bodies := &mcp.Bodies{}
	defer bodies.Release()
	rep, record := d.probe(ctx, tc, t, log, bodies)
	t.publish.Lock()
	run := state.ApplyWith(d.caches, t.run.Load(), rep, nowFunc(), historyLimit, func() ([]state.Tool, error) { return d.store.LoadSnapshot(name) })
	accepted := false
	if tc.t.Baseline != "" {
		run, accepted = d.afterBaselineRun(run, rep, record, log)
	}
	if run.SnapshotErr != nil {
		log.Warn("served changes of changed tools not detailed", "err", run.SnapshotErr)
	}
	// The run's record rides along when the state is written anyway; a
	// graceful stop writes it for the others (saveLastRuns).
	run.State = run.State.Record(state.NewLastRun(run.Report, run.State.LastRun))
	if run.Changed {
		if err := d.store.Save(run.State); err != nil {
			d.metrics.StateWriteFailed()
			log.Error("state not written; the next run retries", "err", err)
		} else {
			t.saved.Store(run.State.LastRun)
		}
	}
	t.run.Store(run)
	t.publish.Unlock()
	d.metrics.Observe(run)
	if accepted && ctx.Err() == nil {
		// That run compared against the baseline it replaced: compare
		// against the accepted one now, which resolves its drift (this
		// run's bodies go back first).
		defer func() { bodies.Release(); d.runTarget(ctx, name) }()
	}
	if inv := rep.Invocation; inv != nil && inv.Refused != "" {
		log.Error("invocation refused; nothing was sent", "reason", inv.Refused)
	}
	attrs := []any{"success", rep.Success, "duration", time.Duration(rep.DurationSeconds * float64(time.Second)).Round(time.Millisecond),
		"findings", len(rep.Findings), "active_findings", len(run.State.Findings), "opened", len(run.Opened), "resolved", len(run.Resolved),
		"served_changes", len(run.ServedChanges), "listing", listingOf(rep)}
	if !rep.Success {
		// A target that fails every run must show at --log.level=warn.
		log.Warn("run failed", append(attrs, "reason", rep.FailureReason, "message", rep.FailureMessage,
			"failing_since", run.State.FailingSince.Format(time.RFC3339))...)
		return
	}
	log.Info("run finished", attrs...)
}

// listingOf says how a run came by its conclusions on the tools listing:
// "recalled" when it was the last run's answer, not decoded again
// (probe.Recall), else "read".
func listingOf(rep *probe.Report) string {
	if rep.ServedAsBefore() {
		return "recalled"
	}
	return "read"
}

// probe runs the probe of one target with the daemon's hooks, or reports
// why it could not start. For a baseline-mode target it also says
// whether the run is to record the first-seen baseline.
func (d *Daemon) probe(ctx context.Context, tc *targetConfig, t *target, log *slog.Logger, bodies *mcp.Bodies) (*probe.Report, bool) {
	opts := probe.Options{
		Version: d.opts.Build.Version,
		Logger:  log,
		Policy:  tc.policy,
		Bodies:  bodies,
		Pool:    d.pool,
		Caches:  d.caches,
		Tokens:  d.tokens,
		OnExchange: func(ex *mcp.Exchange) {
			d.metrics.Exchange(ex)
			attrs := []any{"method", ex.Method, "status", ex.Status, "duration", ex.Duration.Round(time.Microsecond)}
			if ex.Err != nil {
				attrs = append(attrs, "reason", mcp.Classify(ex.Err))
			}
			log.Debug("mcp request", attrs...)
		},
	}
	if p := d.traces.Load(); p != nil {
		opts.Tracer = p.Tracer()
	}
	opts.HTTPClient = tc.keptClient(d.opts.Build.Version)
	defer tc.runDone()
	if tc.t.Baseline != "" {
		return d.probeBaseline(ctx, tc, t, opts)
	}
	// A file unchanged since it was read, which declares tools only, is
	// known by its digest: the run reads it only if the listing differs
	// (docs/scaling.md); and a run served the listing the last one
	// concluded on, against the same file, concludes the same without
	// decoding it (probe.Recall).
	if e, ok := d.manifests.indexed(tc.t.Manifest); ok {
		path := tc.t.Manifest
		if p, ok := probe.PrepareResolved(*tc.t, e.count, func(_ context.Context, served []mcp.Tool) (*manifest.Manifest, error) {
			m, err := d.manifests.resolve(path, e, served)
			if m == nil {
				return nil, err
			}
			t.noteManifest(path, err, log)
			return m, nil
		}); ok {
			if rc := t.recall.Load(); rc != nil && rc.tc == tc && rc.manifest == e.hash {
				p.Recall = rc.Recall
			}
			rep := probe.Run(ctx, p, opts)
			d.keepRecall(t, tc, rep, e)
			return rep, false
		}
	}
	t.recall.Store(nil)
	m, err := d.manifests.loadOrLast(tc.t.Manifest)
	if m == nil {
		// Broken, and its last good manifest let go: a server serving
		// what that version declared is still compared against it, by
		// its digest.
		if e, ok := d.manifests.lastIndexed(tc.t.Manifest); ok {
			path := tc.t.Manifest
			if p, ok := probe.PrepareResolved(*tc.t, e.count, func(_ context.Context, served []mcp.Tool) (*manifest.Manifest, error) {
				if m, ok := d.manifests.servedAs(path, e, served); ok {
					t.noteManifest(path, err, log)
					return m, nil
				}
				return nil, fmt.Errorf("%w; the server's tools differ from that version's", err)
			}); ok {
				return probe.Run(ctx, p, opts), false
			}
		}
		return probe.Failed(*tc.t, mcp.ReasonConfig, "manifest: "+err.Error(), opts), false
	}
	t.noteManifest(tc.t.Manifest, err, log)
	e, indexed := d.manifests.indexed(tc.t.Manifest)
	rep := probe.Run(ctx, probe.Prepare(*tc.t, m), opts)
	if err == nil && indexed {
		// The file just read is known by its digest from now on: the
		// next run may recall this one's listing (a restart's second
		// run, not its third).
		d.keepRecall(t, tc, rep, e)
	}
	return rep, false
}

// keepRecall keeps the Recall of rep, a run of tc compared against the
// manifest file of entry e, for the target's next run — unless the file
// changed during the run, and so may not be the one it compared against.
func (d *Daemon) keepRecall(t *target, tc *targetConfig, rep *probe.Report, e cachedManifest) {
	t.recall.Store(nil)
	next := rep.Recall()
	if next.IsZero() {
		return
	}
	if after, ok := d.manifests.indexed(tc.t.Manifest); ok && after.hash == e.hash {
		t.recall.Store(&recalled{Recall: next, tc: tc, manifest: e.hash})
	}
}

// noteManifest records whether a run read the target's manifest file or,
// the file being broken (err), compared against its last good version:
// an ERROR line when it breaks, a WARN at each run while it stays broken
// (a run that compares against an old manifest must show at
// --log.level=warn), an INFO when it is read again.
func (t *target) noteManifest(path string, err error, log *slog.Logger) {
	if err == nil {
		if t.manifestErr.Swap(nil) != nil {
			log.Info("manifest read again", "manifest", path)
		}
		return
	}
	msg := err.Error()
	if prev := t.manifestErr.Swap(&msg); prev == nil || *prev != msg {
		log.Error("manifest unreadable: runs compare against its last good version until it is fixed", "manifest", path, "err", err)
		return
	}
	log.Warn("manifest still unreadable: compared against its last good version", "manifest", path, "err", err)
}
