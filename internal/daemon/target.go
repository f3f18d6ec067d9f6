package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/metrics"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

var nowFunc = time.Now

// historyLimit bounds each target's change history, kept in memory and on
// disk.
const historyLimit = 100

// targetRuntime is what the daemon keeps per target between runs.
type targetRuntime struct {
	mu    sync.Mutex
	state *state.State
	last  *probe.Report
	logs  *ring
}

// runtime returns the target's runtime, creating it (and loading its state
// from disk) on first use. A corrupt state file is moved aside by the store,
// logged and counted; the target starts fresh.
func (d *Daemon) runtime(name string) *targetRuntime {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tr, ok := d.targets[name]; ok {
		return tr
	}
	st, err := d.store.Load(name)
	if err != nil {
		var ce *state.CorruptError
		if errors.As(err, &ce) {
			d.log.Error("state file unreadable; moved aside, target starts fresh", "target", name, "err", err)
		} else {
			d.log.Error("state file unreadable; target starts fresh", "target", name, "err", err)
		}
		d.metrics.StateReadFailed()
	}
	tr := &targetRuntime{state: st, logs: newRing(200)}
	d.targets[name] = tr
	return tr
}

// runTarget is one scheduled (or triggered) run of a target.
func (d *Daemon) runTarget(ctx context.Context, name string) {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return
	}
	tr := d.runtime(name)
	log := slog.New(tr.logs.handler(d.log.Handler())).With("target", name)
	opts := probe.Options{
		Version: d.opts.Build.Version,
		Logger:  log,
		Policy:  tc.policy,
		OnExchange: func(ex *mcp.Exchange) {
			d.metrics.Exchange(ex)
			attrs := []any{"method", ex.Method, "status", ex.Status, "duration", ex.Duration.Round(time.Microsecond)}
			if ex.Err != nil {
				attrs = append(attrs, "reason", mcp.Classify(ex.Err))
			}
			log.Debug("mcp request", attrs...)
		},
	}
	if d.traces != nil {
		opts.Tracer = d.traces.Tracer()
	}
	var rep *probe.Report
	m, err := d.manifests.load(tc.t.Manifest)
	if err != nil {
		rep = probe.Failed(tc.t, mcp.ReasonConfig, "manifest: "+err.Error(), opts)
	} else {
		rep = probe.Run(ctx, tc.t, m, opts)
	}

	tr.mu.Lock()
	next, tx := state.Apply(tr.state, nowFunc(), rep.Findings, servedTools(rep), rep.Success, historyLimit,
		func() ([]state.Tool, error) { return d.store.LoadSnapshot(name) })
	if tx.Changed {
		if err := d.store.Save(next); err != nil {
			d.metrics.StateWriteFailed()
			log.Error("state not written; the next run retries", "err", err)
		}
	}
	tr.state, tr.last = next, rep
	tr.mu.Unlock()

	changes := make([]string, len(tx.ServedChanges))
	for i, e := range tx.ServedChanges {
		changes[i] = e.Change
		rep.ServedChanges = append(rep.ServedChanges, probe.ServedChange{Change: e.Change, Tool: e.Tool, Direction: e.Direction, Pointer: e.Pointer, Message: e.Message})
	}
	d.metrics.Observe(metrics.Run{Report: rep, Active: activeFindings(next), Opened: findingsOf(tx.Opened), Resolved: findingsOf(tx.Resolved),
		ServedChanges: changes, ServedLastChange: next.ServedLastChange})
	if inv := rep.Invocation; inv != nil && inv.Refused != "" {
		log.Error("tools/call refused; nothing was called", "reason", inv.Refused)
	}
	attrs := []any{"success", rep.Success, "duration", time.Duration(rep.DurationSeconds * float64(time.Second)).Round(time.Millisecond),
		"findings", len(rep.Findings), "opened", len(tx.Opened), "resolved", len(tx.Resolved), "served_changes", len(tx.ServedChanges)}
	if !rep.Success {
		attrs = append(attrs, "reason", rep.FailureReason, "message", rep.FailureMessage)
	}
	log.Info("run finished", attrs...)
}

func servedTools(rep *probe.Report) []state.Tool {
	served := rep.Served()
	out := make([]state.Tool, len(served))
	for i, t := range served {
		out[i] = state.Tool{Name: t.Name, Raw: t.Raw}
	}
	return out
}

func findingsOf(fs []state.Event) []catalogue.Finding {
	out := make([]catalogue.Finding, len(fs))
	for i, f := range fs {
		out[i] = catalogue.Finding{Rule: f.Rule, Severity: f.Severity, Tool: f.Tool}
	}
	return out
}

// activeFindings lists a state's active findings in a stable order, for the
// finding gauges.
func activeFindings(st *state.State) []catalogue.Finding {
	out := make([]catalogue.Finding, 0, len(st.Findings))
	for _, f := range st.Findings {
		out = append(out, catalogue.Finding{Rule: f.Rule, Severity: f.Severity, Tool: f.Tool, Pointer: f.Pointer})
	}
	catalogue.Sort(out)
	return out
}
