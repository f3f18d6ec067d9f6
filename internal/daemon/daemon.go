// Package daemon wires `driftd run`: configuration, scheduler, probe,
// state, metrics and the web surface, with transactional reload and a
// bounded, ordered shutdown.
//
// A run flows one way: probe.Run builds a report, state.Apply turns the
// previous state and the report into the next state.Run, the daemon saves
// it and publishes it (one atomic pointer per target), and metrics, the API
// and the status pages read that value as it is. Nothing is written into a
// published value; the next run publishes a new one.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/metrics"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/scheduler"
	"github.com/driftd/driftd/internal/state"
	"github.com/driftd/driftd/internal/tracing"
	driftweb "github.com/driftd/driftd/internal/web"
)

// Options configure a daemon.
type Options struct {
	ConfigFile string
	// Listen addresses for the web surface; "127.0.0.1:0" picks a port.
	ListenAddresses []string
	WebConfigFile   string
	EnableLifecycle bool
	// Shard and Shards select this instance's share of the targets (--shard).
	Shard, Shards int
	Logger        *slog.Logger
	Build         metrics.BuildInfo
	// RoutePrefix is the path every endpoint is served under
	// (--web.route-prefix); "" or "/" is the root.
	RoutePrefix string
	// PerTargetHistograms gives driftd_probe_duration_seconds a target
	// label (metrics.Options).
	PerTargetHistograms bool
	// LogRingBytes bounds the recent log lines kept for the status pages,
	// all targets together; 0 is DefaultLogRingBytes.
	LogRingBytes int
	// CacheBytes bounds the caches of answers worked out from content
	// (probe.Caches: schema parses, checks and diffs, served definitions'
	// digests), all targets together (--cache.max-bytes); 0 is
	// probe.DefaultCacheBytes. The daemon builds them once, in New, and
	// passes them to every run and every state step.
	CacheBytes int
	// WatchConfig reloads when the config file changes (default on in run).
	WatchConfig bool
	// Registry, when nil, is a fresh one with Go and process collectors.
	Registry *prometheus.Registry
	// OnStart, if set, is told the bound addresses once the web surface serves.
	OnStart func(addrs []string)
	// InflightBytes is the pool of response bytes in flight when the
	// config sets no global.max_inflight_bytes (run: a quarter of the
	// cgroup's memory limit); 0 is no pool.
	InflightBytes int64
	// WebLimits bound each connection of the web server; a zero field is
	// DefaultWebLimits'.
	WebLimits WebLimits
}

// WebLimits bound the web server's connections (docs/deploy.md): a client
// that sends its request slower than ReadTimeout (headers and body) is
// disconnected, so slow clients cannot hold the listener's descriptors.
type WebLimits struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                                            int
}

// DefaultWebLimits: every request driftd accepts is a few KiB (bodies are
// bounded at 64 KiB), so 30 s to send one is generous; the longest
// answer is a /metrics scrape of a large fleet (seconds) or a 30 s
// /debug/pprof/profile, well inside WriteTimeout.
var DefaultWebLimits = WebLimits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      2 * time.Minute,
	IdleTimeout:       2 * time.Minute,
	MaxHeaderBytes:    64 << 10,
}

func (l WebLimits) orDefault() WebLimits {
	d := DefaultWebLimits
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = d.ReadTimeout
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = min(d.ReadHeaderTimeout, l.ReadTimeout)
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}

// Daemon is a `driftd run`. New builds it without side effects, Start
// starts it, Stop stops what Start started, in reverse order.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	reg     *prometheus.Registry
	metrics *metrics.Metrics
	cfg     atomic.Pointer[runtimeConfig]
	ready   atomic.Bool
	// pool bounds the response bytes of every run in flight (nil: none);
	// sized at start, like the scheduler's concurrency.
	pool *mcp.Pool

	// Set by Start.
	store  *state.Store
	sched  *scheduler.Scheduler
	traces atomic.Pointer[tracing.Provider]

	mu      sync.Mutex
	targets map[string]*target
	// logs holds every target's recent log lines for the status pages.
	logs *ring

	manifests *manifestCache
	// caches are the daemon's caches of answers worked out from content,
	// shared by every target's runs and state steps (Options.CacheBytes).
	caches *probe.Caches
	// tokens are the OAuth access tokens of every target's machine
	// identity, one per credential (docs/authentication.md).
	tokens   *oauth.Tokens
	lastWarn atomic.Int64 // unix nanos of the last export-failure warning
	// reloads carries synchronous reloads (POST /-/reload); pending holds
	// at most one asynchronous one (SIGHUP, the file watch), so a burst
	// of signals coalesces into one reload.
	reloads chan chan error
	pending chan struct{}
	// reloadFailed is why the last reload was refused, nil once one
	// succeeds (reload.go): the banner of every status page.
	reloadFailed atomic.Pointer[reloadFailure]
	// pendingSD holds at most one reconcile asked for by a discovery
	// source (debounced by sdTimer), run by the reload loop.
	pendingSD chan struct{}
	// sweeps holds at most one sweep of vanished targets' state
	// (retention.go), run by the reload loop.
	sweeps    chan struct{}
	vanished  vanished
	sdTimerMu sync.Mutex
	sdTimer   *time.Timer
	// sources are the running discovery sources by key, in config order.
	sdMu      sync.Mutex
	sources   map[string]*sdSource
	sdOrder   []string
	listeners []net.Listener
	cleanups  []cleanup
	stopOnce  sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

// cleanup is one named step of Stop.
type cleanup struct {
	name string
	fn   func(context.Context) error
}

// New loads and validates the configuration and builds the daemon. It has
// no side effects: nothing is probed, written, listened on or started
// until Start. A configuration error is returned as is (exit code 2).
func New(opts Options) (*Daemon, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := config.Load(opts.ConfigFile)
	if err != nil {
		return nil, err
	}
	rc, err := buildRuntime(cfg, nil, opts)
	if err != nil {
		return nil, err
	}
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	logs := newRing(opts.LogRingBytes)
	inflight := opts.InflightBytes
	if g := cfg.Global; !g.MaxInflightBytes.IsZero() {
		inflight = g.MaxInflightBytes.Bytes()
	}
	pool := mcp.NewPool(inflight, cfg.Global.Concurrency)
	mopts := metrics.Options{PerTargetHistograms: opts.PerTargetHistograms, LogRing: logs.Bytes, Inflight: pool}
	d := &Daemon{
		opts:      opts,
		log:       opts.Logger,
		reg:       reg,
		pool:      pool,
		metrics:   metrics.New(reg, opts.Build, mopts),
		targets:   map[string]*target{},
		logs:      logs,
		caches:    probe.NewCaches(opts.CacheBytes),
		tokens:    oauth.NewTokens(),
		reloads:   make(chan chan error),
		pending:   make(chan struct{}, 1),
		pendingSD: make(chan struct{}, 1),
		sweeps:    make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	d.manifests = newManifestCache(d.caches)
	d.warnConfig(cfg)
	d.cfg.Store(rc)
	return d, nil
}

// Start brings the daemon up, registering a cleanup for each step: the
// state store, the trace exporter, the scheduler with the configuration's
// targets, the web listeners, the reload loop and the config file watch.
// If a step fails, Start returns its error; Stop undoes the steps taken.
func (d *Daemon) Start() error {
	rc := d.cfg.Load()
	store, err := state.Open(rc.cfg.Global.StateDir)
	if err != nil {
		return fmt.Errorf("state_dir: %w", err)
	}
	d.store = store
	traces, err := d.newTraces(rc.cfg.Tracing)
	if err != nil {
		return err
	}
	d.swapTraces(traces)
	d.onStop("traces", func(ctx context.Context) error {
		if p := d.traces.Swap(nil); p != nil {
			return p.Shutdown(ctx)
		}
		return nil
	})
	if d.pool != nil {
		d.log.Info("response bytes of the runs in flight are bounded (global.max_inflight_bytes)",
			"max_inflight_bytes", d.pool.Limit(), "per_run_share", d.pool.Share())
	}
	d.sched = scheduler.New(scheduler.Options{
		Concurrency: rc.cfg.Global.Concurrency,
		OnSkip: func(name string) {
			d.metrics.Skipped(name)
			d.log.Warn("run skipped: the previous run is still going", "target", name)
		},
		OnRemoved: d.forget,
		OnLate:    d.metrics.Late,
	})
	// After the runs have ended (cleanups run last first), the kept
	// connections close.
	d.onStop("connections", func(context.Context) error {
		for _, tc := range d.cfg.Load().targets {
			tc.retire()
		}
		return nil
	})
	d.onStop("last runs", d.saveLastRuns)
	d.onStop("runs", d.sched.Stop)
	d.onStop("discovery", d.stopSources)
	// Sources start now and are not waited for: a slow or black-holed
	// registry must not keep the listener (and liveness) down. /-/ready
	// says not ready until every source has refreshed once or
	// sdSyncTimeout has passed; their targets follow as they come.
	synced, err := d.startSources(rc.cfg)
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	if rc, err = buildRuntime(rc.cfg, d.discovered(), d.opts); err != nil {
		return err
	}
	d.apply(nil, rc)
	d.metrics.ReloadResult(true, time.Now())
	if err := d.serve(); err != nil {
		return err
	}
	d.wg.Add(1)
	go d.reloadLoop()
	d.wg.Go(d.sweepLoop)
	d.onStop("reloads", func(context.Context) error { close(d.done); d.wg.Wait(); return nil })
	if d.opts.WatchConfig {
		if err := d.watchConfig(); err != nil {
			d.log.Warn("config file watch unavailable; reload with SIGHUP or POST /-/reload", "err", err)
		}
	}
	d.wg.Go(func() {
		synced(d.done)
		d.ready.Store(true)
	})
	if d.opts.OnStart != nil {
		d.opts.OnStart(d.Addrs())
	}
	return nil
}

// serve binds every listen address, then serves each; a bind error
// closes what was bound.
func (d *Daemon) serve() error {
	handler := driftweb.New(d, driftweb.Options{EnableLifecycle: d.opts.EnableLifecycle, Metrics: d.metrics.Handler(d.reg), RoutePrefix: d.opts.RoutePrefix, Version: d.opts.Build.Version})
	addrs := d.opts.ListenAddresses
	if len(addrs) == 0 {
		addrs = []string{":9820"}
	}
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, ln := range d.listeners {
				ln.Close()
			}
			d.listeners = nil
			return fmt.Errorf("web.listen-address %s: %w", addr, err)
		}
		d.listeners = append(d.listeners, ln)
	}
	webFlags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: new(bool), WebConfigFile: &d.opts.WebConfigFile}
	lim := d.opts.WebLimits.orDefault()
	var servers []*http.Server
	var serving sync.WaitGroup
	for _, ln := range d.listeners {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
			WriteTimeout: lim.WriteTimeout, IdleTimeout: lim.IdleTimeout, MaxHeaderBytes: lim.MaxHeaderBytes}
		servers = append(servers, srv)
		serving.Add(1)
		go func() {
			defer serving.Done()
			ln := &healthBypass{Listener: ln, srv: srv, health: handler, prefix: d.opts.RoutePrefix}
			if err := web.Serve(ln, srv, webFlags, d.log.With("component", "web")); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("web server stopped", "err", err)
			}
		}()
		d.log.Info("listening", "address", ln.Addr().String())
	}
	d.onStop("web", func(ctx context.Context) error {
		var errs []error
		for _, srv := range servers {
			errs = append(errs, srv.Shutdown(ctx))
		}
		serving.Wait()
		return errors.Join(errs...)
	})
	return nil
}

// healthBypass serves /-/healthy and /-/ready without the basic auth of
// --web.config.file, as liveness and readiness probes cannot send
// credentials (docs/security.md). exporter-toolkit (v0.20.0) wraps the
// server's whole handler in its auth and has no excluded paths, so the
// exception goes around its handler: web.Serve installs that handler and
// then accepts on this listener, and on its first Accept — in Serve's
// goroutine, before any connection is served — the two paths are routed
// around it. Everything else, TLS included, stays the toolkit's.
type healthBypass struct {
	net.Listener
	srv    *http.Server
	health http.Handler
	prefix string
	once   sync.Once
}

func (l *healthBypass) Accept() (net.Conn, error) {
	l.once.Do(func() {
		authed := l.srv.Handler
		l.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if driftweb.IsHealthCheck(r, l.prefix) {
				l.health.ServeHTTP(w, r)
				return
			}
			authed.ServeHTTP(w, r)
		})
	})
	return l.Listener.Accept()
}

// onStop registers a step for Stop, which runs them newest first.
func (d *Daemon) onStop(name string, fn func(context.Context) error) {
	d.cleanups = append(d.cleanups, cleanup{name, fn})
}

// Addrs returns the bound listen addresses, for tests on 127.0.0.1:0.
func (d *Daemon) Addrs() []string {
	out := make([]string, len(d.listeners))
	for i, ln := range d.listeners {
		out[i] = ln.Addr().String()
	}
	return out
}

// Stop undoes Start in reverse order, under ctx: it stops the config
// watch and the reload loop, shuts the web listeners (in-flight requests
// finish), stops scheduling and lets runs finish (cancelled when ctx
// expires; each run saves its state as it ends), then flushes traces.
// Every step runs even if an earlier one failed; errors are joined, each
// named by its step. Stop on a daemon never started does nothing.
func (d *Daemon) Stop(ctx context.Context) error {
	var errs []error
	d.stopOnce.Do(func() {
		d.ready.Store(false)
		for i := len(d.cleanups) - 1; i >= 0; i-- {
			c := d.cleanups[i]
			if err := c.fn(ctx); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
			}
		}
	})
	return errors.Join(errs...)
}

// exportFailed counts a failed trace export and warns at most once a
// minute: a collector that is down must not flood the log.
func (d *Daemon) exportFailed(err error) {
	d.metrics.OTLPExportFailed()
	now := time.Now().UnixNano()
	if last := d.lastWarn.Load(); now-last > int64(time.Minute) && d.lastWarn.CompareAndSwap(last, now) {
		d.log.Warn("trace export failed; runs are unaffected", "err", err)
	}
}
