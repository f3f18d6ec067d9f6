// Package daemon wires `driftd run`: configuration, scheduler, probe,
// state, metrics and the web surface, with transactional reload and a
// bounded, ordered shutdown.
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
	"github.com/driftd/driftd/internal/metrics"
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
	// WatchConfig reloads when the config file changes (default on in run).
	WatchConfig bool
	// Registry, when nil, is a fresh one with Go and process collectors.
	Registry *prometheus.Registry
	// OnStart, if set, is told the bound addresses once the web surface serves.
	OnStart func(addrs []string)
}

// Daemon is a running `driftd run`.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	reg     *prometheus.Registry
	metrics *metrics.Metrics
	store   *state.Store
	sched   *scheduler.Scheduler
	cfg     atomic.Pointer[runtimeConfig]
	ready   atomic.Bool

	mu      sync.Mutex
	targets map[string]*targetRuntime

	manifests *manifestCache
	traces    *tracing.Provider
	lastWarn  atomic.Int64 // unix nanos of the last export-failure warning
	reloads   chan chan error
	servers   []*http.Server
	listeners []net.Listener
	stopOnce  sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

// New loads the configuration and builds everything; nothing runs until
// Start. A configuration error is returned as is (exit code 2).
func New(opts Options) (*Daemon, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := config.Load(opts.ConfigFile)
	if err != nil {
		return nil, err
	}
	rc, err := buildRuntime(cfg, opts)
	if err != nil {
		return nil, err
	}
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	store, err := state.Open(cfg.Global.StateDir)
	if err != nil {
		return nil, fmt.Errorf("state_dir: %w", err)
	}
	d := &Daemon{
		opts:      opts,
		log:       opts.Logger,
		reg:       reg,
		metrics:   metrics.New(reg, opts.Build),
		store:     store,
		targets:   map[string]*targetRuntime{},
		manifests: newManifestCache(),
		reloads:   make(chan chan error),
		done:      make(chan struct{}),
	}
	if ep := cfg.Global.OTLPEndpoint; ep != "" {
		if d.traces, err = tracing.New(ep, opts.Build.Version, d.exportFailed); err != nil {
			return nil, err
		}
	}
	d.sched = scheduler.New(scheduler.Options{
		Concurrency: cfg.Global.Concurrency,
		OnSkip: func(name string) {
			d.metrics.Skipped(name)
			d.log.Warn("run skipped: the previous run is still going", "target", name)
		},
		OnRemoved: d.forget,
	})
	d.apply(rc)
	d.metrics.ReloadResult(true, time.Now())
	return d, nil
}

// Start binds the listeners and serves the web surface, and starts the
// reload loop. Runs are scheduled from New's configuration on.
func (d *Daemon) Start() error {
	handler := driftweb.New(d, driftweb.Options{EnableLifecycle: d.opts.EnableLifecycle, Gatherer: d.reg, Version: d.opts.Build.Version})
	addrs := d.opts.ListenAddresses
	if len(addrs) == 0 {
		addrs = []string{":9820"}
	}
	webFlags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: new(bool), WebConfigFile: &d.opts.WebConfigFile}
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			d.closeListeners()
			return fmt.Errorf("web.listen-address %s: %w", addr, err)
		}
		d.listeners = append(d.listeners, ln)
	}
	for _, ln := range d.listeners {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		d.servers = append(d.servers, srv)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			if err := web.Serve(ln, srv, webFlags, d.log.With("component", "web")); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("web server stopped", "err", err)
			}
		}()
		d.log.Info("listening", "address", ln.Addr().String())
	}
	d.wg.Add(1)
	go d.reloadLoop()
	if d.opts.WatchConfig {
		if err := d.watchConfig(); err != nil {
			d.log.Warn("config file watch unavailable; reload with SIGHUP or POST /-/reload", "err", err)
		}
	}
	d.ready.Store(true)
	if d.opts.OnStart != nil {
		d.opts.OnStart(d.Addrs())
	}
	return nil
}

// Addrs returns the bound listen addresses, for tests on 127.0.0.1:0.
func (d *Daemon) Addrs() []string {
	out := make([]string, len(d.listeners))
	for i, ln := range d.listeners {
		out[i] = ln.Addr().String()
	}
	return out
}

func (d *Daemon) closeListeners() {
	for _, ln := range d.listeners {
		ln.Close()
	}
}

// Stop shuts down in reverse order of start, under ctx: stop accepting
// reloads and web requests, stop scheduling and let runs finish (cancelled
// when ctx expires; each run writes its state as it ends). Errors are joined.
func (d *Daemon) Stop(ctx context.Context) error {
	var errs []error
	d.stopOnce.Do(func() {
		d.ready.Store(false)
		close(d.done)
		for _, srv := range d.servers {
			if err := srv.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("web: %w", err))
			}
		}
		if len(d.servers) == 0 {
			d.closeListeners()
		}
		if err := d.sched.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("runs: %w", err))
		}
		d.wg.Wait()
		if d.traces != nil {
			if err := d.traces.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("traces: %w", err))
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
