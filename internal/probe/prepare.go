package probe

import (
	"context"
	"slices"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
)

// Prepared is a run as decided before anything is sent: the target, the
// declared manifest (nil: no drift checks, as for capture), and, when the
// target configures tools/call, the plan with every gate checked. Every
// caller prepares once and hands the value on: `driftd check` refuses
// before a request when Refused is set, `driftd config check` reports it,
// and Run probes with the plan it carries (a refused plan is recorded in
// the report, and the rest of the run goes ahead).
type Prepared struct {
	Target   config.Target
	Declared *manifest.Manifest
	// Invocation is the tools/call, prompts/get and resources/read plan,
	// nil when none is configured. A
	// refused plan carries the reason in Invocation.Refused.
	Invocation *Invocation
	// Refused is the gate that refused the plan (it wraps ErrGate).
	Refused error
	// Baseline is set when Declared is the target's recorded baseline
	// (baseline: first_seen), not a manifest file: the report then says
	// it compared against "baseline".
	Baseline bool
	// Review, with Baseline, says why the target's baseline needs review
	// (its state file was corrupt or newer): the run reports it as
	// MCP-DRIFT-BASELINE-REVIEW.
	Review string
	// Pending, if set (and Declared nil), is the declared manifest still
	// being read, and its schemas checked (precheck): the run connects and
	// sends its first tools/list meanwhile, and waits for it before that
	// listing's checks, so reading a large manifest overlaps the
	// discovery's round trips and the server's answer. An error ends the
	// run as config. Only a plan without
	// calls may be pending: the invocation gates read the manifest before
	// anything is sent (PrepareBeside).
	Pending func(context.Context) (*manifest.Manifest, error)
	// Resolve, if set (Declared and Pending nil), gives the declared
	// manifest once the tools are listed, from the served tools: a
	// daemon that keeps a manifest's digest, not the manifest, answers
	// manifest.Served for a listing of that digest and reads the file
	// only for one that differs (PrepareResolved). An error ends the run
	// as config, as Pending's does. DeclaredTools is the manifest's
	// count of tools, reported before the listing as Declared's is.
	Resolve       func(ctx context.Context, served []mcp.Tool) (*manifest.Manifest, error)
	DeclaredTools int
	// Recall, if not zero, is what the target's last run concluded from
	// its listing (the Report.Recall of that run): a run served the same
	// answer concludes the same without decoding it. The caller vouches
	// that the target's configuration and declared manifest are those
	// of that run. It is not used by a run that plans calls, records or
	// compares a baseline, or reads its manifest beside (Pending).
	Recall Recall
}

// Prepare checks the invocation gates of t against declared and plans the
// calls, gets and reads: the one place a plan is computed.
func Prepare(t config.Target, declared *manifest.Manifest) *Prepared {
	p := &Prepared{Target: t, Declared: declared}
	if !plansCalls(t) {
		return p
	}
	p.Invocation, p.Refused = Plan(t, declared)
	if p.Refused != nil {
		p.Invocation = &Invocation{Seed: t.Invoke.Seed, Planned: []PlannedCall{}, Findings: []catalogue.Finding{}, Refused: p.Refused.Error()}
	}
	return p
}

// PrepareResolved is Prepare for a tools-only manifest of count tools
// that resolve gives once the tools are listed (Prepared.Resolve). ok is
// false when t plans calls: their gates read the manifest before
// anything is sent, so the caller loads it and calls Prepare.
func PrepareResolved(t config.Target, count int, resolve func(context.Context, []mcp.Tool) (*manifest.Manifest, error)) (p *Prepared, ok bool) {
	if plansCalls(t) {
		return nil, false
	}
	return &Prepared{Target: t, Resolve: resolve, DeclaredTools: count}, true
}

// plansCalls reports whether t names calls, gets or reads, or asks for
// --execute: then there is a plan, and its gates read the manifest.
func plansCalls(t config.Target) bool { return t.Invoke.Named() || t.Invoke.Execute }

// PlansCalls is plansCalls, for a daemon deciding whether a target's
// manifest must be read before its run or its reload's checks.
func PlansCalls(t config.Target) bool { return plansCalls(t) }

// PrepareBeside is Prepare for a manifest that load reads beside the run:
// when t plans no calls, load runs in a goroutine while the run connects
// (Prepared.Pending); otherwise the gates need the manifest first, and it
// is loaded before anything is sent. wait returns load's result, once it
// is known, to every caller, or ctx's error if ctx ends first (a result
// known already is returned even when ctx has ended).
func PrepareBeside(t config.Target, c *Caches, load func() (*manifest.Manifest, error)) (p *Prepared, wait func(context.Context) (*manifest.Manifest, error)) {
	if plansCalls(t) {
		m, err := load()
		wait = func(context.Context) (*manifest.Manifest, error) { return m, err }
		if err != nil {
			return &Prepared{Target: t}, wait
		}
		return Prepare(t, m), wait
	}
	var m *manifest.Manifest
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if m, err = load(); err == nil && m != nil {
			precheck(c, m)
		}
	}()
	wait = func(ctx context.Context) (*manifest.Manifest, error) {
		select {
		case <-done: // read already: its result, even past ctx's end
			return m, err
		default:
		}
		select {
		case <-done:
			return m, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &Prepared{Target: t, Pending: wait}, wait
}

// precheck works out beside the run what the listing's checks find in
// the declared tools (Manifest.Quiet, kept by the manifest, over every
// processor the program has): a server that serves what was declared
// then finds them answered, and a one-shot check spends that CPU while it
// waits on the discovery's round trips instead of after its listing.
func precheck(c *Caches, m *manifest.Manifest) {
	m.Quiet(0, QuietTool(c))
}

// clone copies what a run writes into, so a Prepared can be run again.
func (inv *Invocation) clone() *Invocation {
	if inv == nil {
		return nil
	}
	c := *inv
	c.Planned = slices.Clone(inv.Planned)
	c.Reads = slices.Clone(inv.Reads)
	c.Findings = slices.Clone(inv.Findings)
	return &c
}
