package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/metrics"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/scheduler"
)

// runtimeConfig is one loaded configuration, built completely before it is
// swapped in: the targets this instance probes and their compiled policies.
type runtimeConfig struct {
	cfg     *config.Config
	targets []*targetConfig
	byName  map[string]*targetConfig
}

type targetConfig struct {
	t      config.Target
	policy *catalogue.Policy
}

// buildRuntime validates what the config package cannot (rule ids in
// severity and ignore entries) and keeps this shard's targets.
func buildRuntime(cfg *config.Config, opts Options) (*runtimeConfig, error) {
	rc := &runtimeConfig{cfg: cfg, byName: map[string]*targetConfig{}}
	var errs []error

	for _, t := range cfg.Targets {
		if !scheduler.InShard(t.Name, opts.Shard, opts.Shards) {
			continue
		}
		policy, err := catalogue.NewPolicy(t.Severity, t.Ignore)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: target %q: %w", cfg.Path, t.Name, err))
			continue
		}
		tc := &targetConfig{t: t, policy: policy}
		rc.targets = append(rc.targets, tc)
		rc.byName[t.Name] = tc
	}
	return rc, errors.Join(errs...)
}

// apply makes rc the running configuration, old being the one it
// replaces (nil at Start): metrics learn the target set, runtimes are
// created for new targets (their state loaded from disk), and the
// scheduler reconciles by name. Removed targets are forgotten once their
// last run has ended.
func (d *Daemon) apply(old, rc *runtimeConfig) {
	d.cfg.Store(rc)
	if old != nil && (old.cfg.Global.Concurrency != rc.cfg.Global.Concurrency || old.cfg.Global.StateDir != rc.cfg.Global.StateDir) {
		d.log.Warn("global.concurrency and global.state_dir take effect at the next restart")
	}
	mts := make([]metrics.Target, 0, len(rc.targets))
	jobs := make([]scheduler.Job, 0, len(rc.targets))
	for _, tc := range rc.targets {
		mts = append(mts, metrics.Target{Name: tc.t.Name, Labels: tc.t.Labels, SeriesLimit: rc.cfg.Global.PerToolSeriesLimit, Ignores: tc.policy.Ignores()})
		name := tc.t.Name
		jobs = append(jobs, scheduler.Job{
			Name:     name,
			Schedule: tc.t.Schedule,
			// Settings are read at each run; only a new schedule restarts the job.
			Key: tc.t.Schedule.String(),
			Run: func(ctx context.Context) { d.runTarget(ctx, name) },
		})
		d.target(name)
	}
	d.metrics.SetTargets(mts)
	now := nowFunc()
	for _, tc := range rc.targets {
		d.metrics.SetInterval(tc.t.Name, scheduler.Period(tc.t.Schedule, now))
	}
	d.sched.Reconcile(jobs)
	// A manifest that cannot be read fails its target now, loudly, not at
	// its first scheduled run minutes later: an ERROR line, and a run
	// started at once that ends with reason config on every surface.
	for _, tc := range rc.targets {
		if _, err := d.manifests.load(tc.t.Manifest); err != nil {
			d.log.Error("manifest unreadable: the target fails with reason config until it is fixed",
				"target", tc.t.Name, "manifest", tc.t.Manifest, "err", err)
			if err := d.sched.Trigger(tc.t.Name); err != nil && !errors.Is(err, scheduler.ErrAlreadyRunning) {
				d.log.Warn("could not start the failing run", "target", tc.t.Name, "err", err)
			}
		}
	}
}

// forget drops a removed target's runtime and series, unless a reload
// added it back in the meantime.
func (d *Daemon) forget(name string) {
	if _, back := d.cfg.Load().byName[name]; back {
		return
	}
	d.metrics.Remove(name)
	d.logs.Forget(name)
	d.mu.Lock()
	delete(d.targets, name)
	d.mu.Unlock()
}

// CheckConfig is `driftd config check`: it loads and validates the file,
// compiles every target's policy, loads every manifest, and returns the
// effective configuration with secrets redacted.
func CheckConfig(path string) ([]byte, error) {
	cfg, err := config.Load(path)
	if cfg == nil {
		return nil, err
	}
	errs := []error{err}
	if err == nil {
		_, err = buildRuntime(cfg, Options{})
		errs = append(errs, err)
	}
	for _, t := range cfg.Targets {
		if t.Manifest == "" {
			continue // reported by config as required
		}
		m, err := manifest.Load(t.Manifest)
		if err != nil {
			errs = append(errs, fmt.Errorf("target %q: manifest: %w", t.Name, err))
			continue
		}
		if p := probe.Prepare(t, m); p.Refused != nil {
			errs = append(errs, fmt.Errorf("target %q: invoke: %w", t.Name, p.Refused))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg.Redacted()
}
