package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
	"github.com/driftd/driftd/internal/web"
)

// probeBaseline probes a baseline-mode target (baseline: first_seen). A
// target with a recorded baseline is compared against it; one without is
// probed with nothing declared, and the run records the first-seen
// baseline (record) unless the target needs review: then nothing is
// recorded until an operator accepts a surface.
func (d *Daemon) probeBaseline(ctx context.Context, tc *targetConfig, t *target, opts probe.Options) (rep *probe.Report, record bool) {
	st := t.run.Load().State
	var declared *manifest.Manifest
	if st.Baseline != nil {
		m, err := t.parsedBaseline(st.Baseline)
		if err != nil {
			return probe.Failed(*tc.t, mcp.ReasonConfig, "baseline: "+err.Error(), opts), false
		}
		declared = m
	}
	p := probe.Prepare(*tc.t, declared)
	p.Baseline, p.Review = true, st.NeedsReview
	return probe.Run(ctx, p, opts), declared == nil && st.NeedsReview == ""
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

// afterBaselineRun is the baseline step of a baseline-mode target's run,
// after its state step: it records the served surface's digest, the
// first-seen baseline (record), and applies, keeps or expires a pending
// accept. accepted is set when the run recorded an accepted baseline: it
// was compared against the old one, so the caller runs the target again
// to compare against the new.
//
// Nothing is recorded from a failed run, from a surface that is
// incomplete (a capped list), that varied between the run's two
// connections, or that exceeds a stored baseline's bounds.
func (d *Daemon) afterBaselineRun(run *state.Run, rep *probe.Report, record bool, log *slog.Logger) (_ *state.Run, accepted bool) {
	now := nowFunc()
	if p := run.State.PendingAccept; p != nil && p.Expired(now) {
		log.Warn("baseline accept expired unapplied: no run served its digest", "digest", p.Digest, "by", p.By)
		run = state.WithPendingAccept(run, nil, fmt.Sprintf("accept of %s expired: no successful run served that surface by %s",
			p.Digest, p.Expires.Format("2006-01-02 15:04:05Z")), now, historyLimit)
	}
	if run.State.NeedsReview != "" {
		log.Error("baseline needs review: nothing is compared and no baseline is recorded until one is accepted (driftd baseline accept)",
			"why", run.State.NeedsReview)
	}
	if !rep.Success {
		if record {
			log.Warn("baseline not recorded; the next run tries again: the run failed", "reason", rep.FailureReason)
		}
		return run, false
	}
	m, counts, _, err := probe.ServedManifest(rep, mcp.Kinds, false)
	if err != nil {
		log.Warn("served surface incomplete: no digest, no baseline recorded", "err", err)
		return run, false
	}
	digest := state.SurfaceDigest(d.caches, m)
	run = state.WithSurface(run, digest)
	pending := run.State.PendingAccept
	switch {
	case pending != nil && pending.Digest != digest:
		log.Warn("baseline accept waits for a run that serves its digest", "accept_digest", pending.Digest, "served_digest", digest,
			"expires", pending.Expires)
		return run, false
	case pending == nil && !record:
		return run, false
	}
	if kinds := variedLists(rep); len(kinds) > 0 {
		log.Warn("baseline not recorded: the surface differed between the run's two connections; the next run tries again",
			"lists", strings.Join(kinds, ","))
		return run, false
	}
	canon, err := m.Canonical()
	if err == nil {
		err = probe.BaselineBounds(canon)
	}
	if err != nil {
		log.Error("baseline not recorded", "err", err)
		if pending != nil {
			run = state.WithPendingAccept(run, nil, "accept of "+digest+" not applied: "+err.Error(), now, historyLimit)
		}
		return run, false
	}
	b := &state.Baseline{Manifest: canon, Digest: digest, RecordedAt: now, Origin: state.OriginFirstSeen}
	if pending != nil {
		b.Origin, b.By, b.ClaimedBy, b.Reason = state.OriginAccepted, pending.By, pending.ClaimedBy, pending.Reason
	}
	run = state.WithBaseline(run, b, strings.Join(counts, ", "), historyLimit)
	if pending == nil {
		// This run's own copy of the report, not yet published: the
		// tools it served are now the declared ones. (Its prompt,
		// resource and template counts are shared with the probe's
		// report and stay as they were.)
		run.Report.ComparedAgainst, run.Report.Tools.Declared = "baseline", len(m.Tools)
	}
	log.Info("baseline recorded", "origin", b.Origin, "digest", digest, "by", b.By, "claimed_by", b.ClaimedBy, "surface", strings.Join(counts, ", "))
	return run, pending != nil
}

// variedLists names the lists whose set differed on the run's second
// connection: a surface that is not the same to every client is no
// baseline.
func variedLists(rep *probe.Report) []string {
	var out []string
	for _, k := range mcp.Kinds {
		if c := rep.ListCounts(k); c != nil && c.SecondConnection == "set_varies" {
			out = append(out, k.Key())
		}
	}
	return out
}

// AcceptBaseline records an accept of a baseline-mode target's served
// surface, bound to req.Digest: refused with a *web.DigestError unless
// that is the digest its last successful run served. The accept waits,
// in the state file, for a successful run that serves that digest —
// started now — and expires after state.AcceptTTL. The history records
// the authenticated identity and, apart, the body's claim.
func (d *Daemon) AcceptBaseline(name string, req web.AcceptRequest) (*state.Accept, error) {
	tc, ok := d.cfg.Load().byName[name]
	if !ok {
		return nil, web.ErrUnknownTarget
	}
	if tc.t.Baseline == "" {
		return nil, web.ErrNotBaseline
	}
	t := d.target(name)
	t.publish.Lock()
	cur := t.run.Load()
	served := cur.State.SurfaceDigest
	if served == "" || req.Digest != served {
		t.publish.Unlock()
		return nil, &web.DigestError{Current: served}
	}
	by := d.identity(req)
	acc := state.NewAccept(req.Digest, by, req.ClaimedBy, req.Reason, nowFunc())
	run := state.WithPendingAccept(cur, acc, "accept of "+acc.Digest+" requested; applied by the next successful run that serves it", nowFunc(), historyLimit)
	if err := d.store.Save(run.State); err != nil {
		d.metrics.StateWriteFailed()
		d.log.Error("state not written; the accept is pending in memory only", "target", name, "err", err)
	}
	t.run.Store(run)
	t.publish.Unlock()
	d.log.Info("baseline accept requested", "target", name, "digest", acc.Digest, "by", acc.By, "claimed_by", acc.ClaimedBy)
	if err := d.Probe(name); err != nil && !errors.Is(err, web.ErrAlreadyRunning) {
		d.log.Warn("accept recorded; its run did not start", "target", name, "err", err)
	}
	return acc, nil
}

// identity is who made a request, as the web server authenticated it: the
// subject of a verified client certificate, else the basic-auth user when
// the web config (--web.config.file) has basic_auth_users (the
// exporter-toolkit refused the request otherwise), else "anonymous". A
// basic-auth user name sent to a server that checks none is a claim, not
// an identity.
func (d *Daemon) identity(req web.AcceptRequest) string {
	switch {
	case req.CertSubject != "":
		return req.CertSubject
	case req.BasicAuthUser != "" && d.webUsersConfigured():
		return req.BasicAuthUser
	}
	return "anonymous"
}

// webUsersConfigured reports whether the web config file has basic-auth
// users. It is read at each accept, as the exporter-toolkit reads it at
// each request.
func (d *Daemon) webUsersConfigured() bool {
	if d.opts.WebConfigFile == "" {
		return false
	}
	b, err := os.ReadFile(d.opts.WebConfigFile)
	if err != nil {
		return false
	}
	var c struct {
		Users map[string]any `yaml:"basic_auth_users"`
	}
	return yaml.Unmarshal(b, &c) == nil && len(c.Users) > 0
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
