package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery"
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
	// discovered holds the discovered targets of every shard, settled
	// (config.Config.Discovered); rejected says why each found target
	// that is not probed was left out, by source.
	discovered []config.Target
	rejected   []rejection
}

// rejection is a discovered target that is not probed, and why.
type rejection struct {
	source string
	err    error
}

type targetConfig struct {
	t      *config.Target // in cfg.Targets or discovered, which the runtime keeps: not a copy
	policy *catalogue.Policy
	// origin is where the target comes from: config, file:PATH,
	// kubernetes:NS/SERVICE or registry:URL.
	origin string
	// previous are names an earlier release gave this discovered target:
	// its state is adopted from the first that has one (adoptPrevious).
	previous []string

	// conn is the main connection's HTTP client, kept from run to run
	// (keptClient), nil for a target that runs less often than
	// keepConnMaxPeriod. retired is set when a reload replaces this
	// configuration or the daemon stops: its connection is closed then, or
	// at the end of a run still using it.
	connOnce sync.Once
	conn     *http.Client
	retired  atomic.Bool
}

// keepConnMaxPeriod: a target that runs at least this often keeps its main
// connection open between runs, idle for up to twice its period, which
// saves a TCP (and TLS) handshake per run for one idle connection per
// target. One that runs less often closes it at the end of each run: most
// servers close an idle connection within 5 to 75 seconds anyway, and a
// large fleet at a 60 s schedule holds no idle connections.
const keepConnMaxPeriod = 30 * time.Second

// keptClient is the target's kept main-connection client, built at its
// first run; nil if the target runs less often than keepConnMaxPeriod, or
// if the client cannot be built (the run builds its own and reports why).
func (tc *targetConfig) keptClient(version string) *http.Client {
	tc.connOnce.Do(func() {
		p := scheduler.Period(tc.t.Schedule, nowFunc())
		if p <= 0 || p > keepConnMaxPeriod {
			return
		}
		tc.conn, _ = probe.NewHTTPClient(tc.t.HTTPClient.HTTPClientConfig, version, 2*p)
	})
	return tc.conn
}

// retire closes the kept connection, if any, and keeps later runs of this
// configuration from opening one; a run still using it closes it as it
// ends (runDone).
func (tc *targetConfig) retire() {
	tc.retired.Store(true)
	tc.connOnce.Do(func() {})
	if tc.conn != nil {
		tc.conn.CloseIdleConnections()
	}
}

// runDone closes the kept connection after a run of a configuration that
// was retired while it ran.
func (tc *targetConfig) runDone() {
	if tc.retired.Load() && tc.conn != nil {
		tc.conn.CloseIdleConnections()
	}
}

// buildRuntime compiles each target's policy and keeps this shard's
// targets: the config's, then each source's (found, in config order),
// each settled and checked like a written one (config.Config.Discovered).
// A discovered target whose name is taken, by the config or an earlier
// source, is rejected and reported, never silently dropped. The config
// package has already checked the config's own severity and ignore
// entries, with their lines; an error here is a disagreement between the
// two checks.
func buildRuntime(cfg *config.Config, found []discovery.Target, opts Options) (*runtimeConfig, error) {
	rc := &runtimeConfig{cfg: cfg, byName: map[string]*targetConfig{}}
	var errs []error
	taken := make(map[string]string, len(cfg.Targets)+len(found)) // name → origin
	for i := range cfg.Targets {
		t := &cfg.Targets[i]
		taken[t.Name] = "config"
		policy, err := catalogue.NewPolicy(t.Severity, t.Ignore)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: target %q: %w", cfg.Path, t.Name, err))
			continue
		}
		rc.add(t, policy, "config", opts)
	}
	rc.discovered = make([]config.Target, 0, len(found))
	origins := make([]string, 0, len(found))
	previous := make([][]string, 0, len(found))
	policies := make([]*catalogue.Policy, 0, len(found))
	limit := cfg.Global.MaxDiscoveredTargets
	for _, f := range found {
		if len(rc.discovered) >= limit {
			// Past the bound, a target costs a line of rejection, not a
			// runtime: what a hostile or runaway source can make driftd hold.
			rc.rejected = append(rc.rejected, rejection{f.Source, fmt.Errorf("%s: target %q: more than global.max_discovered_targets (%d) discovered targets", f.Origin, f.Target.Name, limit)})
			continue
		}
		t, err := cfg.Discovered(config.Found{Target: f.Target, Origin: f.Origin, Identity: f.Identity, RequiredHeaders: f.RequiredHeaders})
		if err == nil {
			if by, dup := taken[t.Name]; dup {
				err = fmt.Errorf("%s: target %q: name already used by %s", f.Origin, t.Name, by)
			}
		}
		var policy *catalogue.Policy
		if err == nil {
			policy, err = catalogue.NewPolicy(t.Severity, t.Ignore)
		}
		if err != nil {
			rc.rejected = append(rc.rejected, rejection{f.Source, err})
			continue
		}
		taken[t.Name] = f.Origin
		rc.discovered = append(rc.discovered, t)
		origins, policies = append(origins, f.Origin), append(policies, policy)
		previous = append(previous, f.Previous)
	}
	for i := range rc.discovered {
		if tc := rc.add(&rc.discovered[i], policies[i], origins[i], opts); tc != nil {
			tc.previous = previous[i]
		}
	}
	return rc, errors.Join(errs...)
}

// add keeps t if it is in this instance's shard, and returns it then.
func (rc *runtimeConfig) add(t *config.Target, policy *catalogue.Policy, origin string, opts Options) *targetConfig {
	if !scheduler.InShard(t.Name, opts.Shard, opts.Shards) {
		return nil
	}
	tc := &targetConfig{t: t, policy: policy, origin: origin}
	rc.targets = append(rc.targets, tc)
	rc.byName[t.Name] = tc
	return tc
}

// apply makes rc the running configuration, old being the one it
// replaces (nil at Start): metrics learn the target set, runtimes are
// created for new targets (their state loaded from disk), and the
// scheduler reconciles by name. Removed targets are forgotten once their
// last run has ended.
func (d *Daemon) apply(old, rc *runtimeConfig) {
	rc.cfg.ForgetPositions() // every error about it has been placed
	d.cfg.Store(rc)
	if old != nil {
		for _, tc := range old.targets {
			tc.retire()
		}
	}
	if old != nil {
		og, ng := old.cfg.Global, rc.cfg.Global
		if og.Concurrency != ng.Concurrency || og.StateDir != ng.StateDir || og.MaxInflightBytes.Bytes() != ng.MaxInflightBytes.Bytes() {
			d.log.Warn("global.concurrency, global.max_inflight_bytes and global.state_dir take effect at the next restart")
		}
	}
	mts := make([]metrics.Target, 0, len(rc.targets))
	jobs := make([]scheduler.Job, 0, len(rc.targets))
	for _, tc := range rc.targets {
		mts = append(mts, metrics.Target{Name: tc.t.Name, Labels: tc.t.Labels, SeriesLimit: rc.cfg.Global.PerToolSeriesLimit, Ignores: tc.policy.Ignores(), OAuth: !tc.t.OAuth.IsZero(), Login: tc.t.OAuth.Login != nil})
		name := tc.t.Name
		jobs = append(jobs, scheduler.Job{
			Name:     name,
			Schedule: tc.t.Schedule,
			// Settings are read at each run; only a new schedule restarts the job.
			Key: tc.t.Schedule.String(),
			Run: func(ctx context.Context) { d.runTarget(ctx, name) },
		})
		d.adoptPrevious(rc, tc)
		d.target(name)
	}
	d.metrics.SetTargets(mts)
	d.restore(rc)
	d.reportRejected(old, rc)
	now := nowFunc()
	for _, tc := range rc.targets {
		d.metrics.SetInterval(tc.t.Name, scheduler.Period(tc.t.Schedule, now))
	}
	d.sched.Reconcile(jobs)
	d.sweepState(nowFunc())
	// A manifest that cannot be read fails its target now, loudly, not at
	// its first scheduled run minutes later: an ERROR line, and a run
	// started at once that ends with reason config on every surface.
	for _, tc := range rc.targets {
		if tc.t.Baseline != "" {
			continue // compared against its recorded baseline, no file
		}
		if d.manifests.current(tc.t.Manifest) {
			continue // loaded, and unchanged since: the reload's checks read it
		}
		if m, err := d.manifests.loadOrLast(tc.t.Manifest); m == nil {
			d.log.Error("manifest unreadable: the target fails with reason config until it is fixed",
				"target", tc.t.Name, "manifest", tc.t.Manifest, "err", err)
			if err := d.sched.Trigger(tc.t.Name); err != nil && !errors.Is(err, scheduler.ErrAlreadyRunning) {
				d.log.Warn("could not start the failing run", "target", tc.t.Name, "err", err)
			}
		}
	}
}

// adoptPrevious moves the state an earlier release recorded for tc under
// another name to tc's, before its runtime loads it, unless that name is
// a running target of its own. A renamed target so keeps its baseline.
func (d *Daemon) adoptPrevious(rc *runtimeConfig, tc *targetConfig) {
	if d.store == nil {
		return
	}
	for _, prev := range tc.previous {
		if _, running := rc.byName[prev]; running || prev == tc.t.Name {
			continue
		}
		d.mu.Lock()
		_, loaded := d.targets[tc.t.Name]
		d.mu.Unlock()
		if loaded {
			return
		}
		moved, err := d.store.Adopt(tc.t.Name, prev)
		if err != nil {
			d.log.Warn("state under the target's previous name not adopted", "target", tc.t.Name, "previous", prev, "err", err)
			continue
		}
		if moved {
			d.log.Info("state adopted from the target's previous name", "target", tc.t.Name, "previous", prev)
			return
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
// effective configuration with secrets redacted, and the file's warnings
// (a deprecated key). Every problem is reported in one pass, each at its
// line in the config file.
func CheckConfig(path string) ([]byte, []string, error) {
	cfg, err := config.Load(path)
	if cfg == nil {
		return nil, nil, err
	}
	errs := []error{err}
	if err == nil {
		_, err = buildRuntime(cfg, nil, Options{})
		errs = append(errs, err)
	}
	manifests, files := targetProblems(cfg, func(t config.Target) (*manifest.Manifest, error) { return manifest.Load(t.Manifest) })
	errs = append(errs, manifests...)
	warnings := cfg.Warnings()
	for _, f := range files {
		warnings = append(warnings, f.Error()+" (a reload of the daemon is refused while it cannot be read)")
	}
	if w := emptyWarning(cfg); w != "" {
		warnings = append(warnings, w)
	}
	if tc := cfg.Tracing.TLSConfig; cfg.Tracing.Enabled() && tc != (promconfig.TLSConfig{}) {
		// Files the exporter reads when it is built, at start or reload.
		if _, err := promconfig.NewTLSConfig(&tc); err != nil {
			errs = append(errs, cfg.Problem("tracing.tls_config", err))
		}
	}
	if err := sortedByLine(errs); err != nil {
		return nil, nil, err
	}
	out, err := cfg.Redacted()
	return out, warnings, err
}

// besideConfig names path, a file the config at configPath refers to, as
// the config was named: "deploy/manifests/a.json" for "deploy/driftd.yml"
// and the absolute path it was resolved to; an absolute path when it is
// not under the config's directory.
func besideConfig(configPath, path string) string {
	dir := filepath.Dir(configPath)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(abs, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.Join(dir, rel)
}

// sortedByLine joins errs, flattening joined ones, config file errors in
// line order first.
func sortedByLine(errs []error) error {
	var flat []error
	for _, err := range errs {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			flat = append(flat, j.Unwrap()...)
		} else if err != nil {
			flat = append(flat, err)
		}
	}
	line := func(err error) int {
		if ce, ok := err.(*config.Error); ok {
			return ce.Line
		}
		return math.MaxInt
	}
	slices.SortStableFunc(flat, func(a, b error) int { return cmp.Compare(line(a), line(b)) })
	return errors.Join(flat...)
}
