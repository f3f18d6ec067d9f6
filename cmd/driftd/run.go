package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
	promversion "github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/scheduler"
)

// shutdownGrace bounds a graceful stop: SIGTERM to exit within 10 s.
const shutdownGrace = 8 * time.Second

// daemonFlags are the flags `run` and `demo` share.
type daemonFlags struct {
	web       *webFlags
	lifecycle *bool
	// readTimeout is --web.read-timeout (daemon.WebLimits).
	readTimeout *time.Duration
	log         *logFlags
	ringBytes   *units.Base2Bytes
	cache       *units.Base2Bytes
	perTarget   *bool
	memLimit    *bool
	memRatio    *float64
}

type webFlags struct {
	addresses   *[]string
	config      *string
	externalURL *string
	routePrefix *string
}

// prefix is --web.route-prefix, or the path of --web.external-url
// when it is not given, as in Prometheus: "" for the root.
func (w *webFlags) prefix() (string, error) {
	prefix := *w.routePrefix
	if *w.externalURL != "" {
		u, err := url.Parse(*w.externalURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return "", fmt.Errorf("--web.external-url %q: want an absolute URL such as https://example.com/driftd/", *w.externalURL)
		}
		if prefix == "" {
			prefix = u.Path
		}
	}
	prefix = "/" + strings.Trim(prefix, "/")
	if prefix == "/" {
		return "", nil
	}
	return prefix, nil
}

// addDaemonFlags adds them with the command's defaults for
// --web.listen-address and --log.format.
func addDaemonFlags(cmd *kingpin.CmdClause, listen, logFormat string) *daemonFlags {
	wf := kingpinflag.AddFlags(cmd, listen)
	return &daemonFlags{
		web: &webFlags{addresses: wf.WebListenAddresses, config: wf.WebConfigFile,
			externalURL: cmd.Flag("web.external-url", "The URL under which driftd is reached from outside (behind a reverse proxy). Its path is the default of --web.route-prefix.").PlaceHolder("URL").String(),
			routePrefix: cmd.Flag("web.route-prefix", "The path every endpoint is served under, e.g. /driftd; every link on the pages starts with it. Defaults to the path of --web.external-url.").PlaceHolder("PATH").String()},
		lifecycle:   cmd.Flag("web.enable-lifecycle", "Enable POST /-/reload, POST /api/v1/targets/{name}/probe and POST /api/v1/targets/{name}/baseline (each needs the header X-Driftd-Request: 1).").Bool(),
		readTimeout: cmd.Flag("web.read-timeout", "How long a client may take to send a whole request, headers and body; a slower one is disconnected.").Default("30s").Duration(),
		log:         addLogFlags(cmd, logFormat),
		ringBytes:   cmd.Flag("log.ring-bytes", "Bytes of recent log lines kept in memory for the status pages, all targets together.").Default("4MiB").Bytes(),
		cache:       cmd.Flag("cache.max-bytes", "Bytes the caches of answers worked out from content (schema parses, compile checks and diffs; served definitions' digests; decoded answers; parsed manifests) may hold, all targets together.").Default("64MiB").Bytes(),
		perTarget:   cmd.Flag("metrics.per-target-histograms", "Give driftd_probe_duration_seconds a target label (15 series per target; off, one histogram for the instance and driftd_probe_last_duration_seconds per target).").Bool(),
		memLimit:    cmd.Flag("auto-gomemlimit", "Set the Go runtime's soft memory limit (GOMEMLIMIT) to --auto-gomemlimit.ratio of the cgroup's memory limit, so the heap is collected harder near a container's limit instead of being OOM-killed. GOMEMLIMIT in the environment wins.").Default("true").Bool(),
		memRatio:    cmd.Flag("auto-gomemlimit.ratio", "The share of the cgroup's memory limit --auto-gomemlimit gives the Go runtime, in (0, 1].").Default("0.9").Float64(),
	}
}

func registerRun(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("run", "Run the monitoring daemon.")
	configFile := addConfigFileFlag(cmd, "The configuration file (required).")
	shard := cmd.Flag("shard", "Probe only the targets whose name hashes to shard I of N (for N replicas).").Default("0/1").String()
	df := addDaemonFlags(cmd, ":9820", "logfmt")
	cmds[cmd.FullCommand()] = func(ctx context.Context, _, stderr io.Writer) error {
		if *configFile == "" {
			return usageErr("required flag --config.file not provided, try --help")
		}
		i, n, err := scheduler.ParseShard(*shard)
		if err != nil {
			return usageErr("--shard: %v", err)
		}
		return serveDaemon(ctx, df, stderr, daemon.Options{ConfigFile: *configFile, Shard: i, Shards: n, WatchConfig: true})
	}
}

// addConfigFileFlag adds --config.file, the name every Prometheus tool
// uses, and the hidden --config it replaced, which still works.
func addConfigFileFlag(cmd *kingpin.CmdClause, help string) *string {
	var file string
	cmd.Flag("config.file", help).PlaceHolder("FILE").StringVar(&file)
	cmd.Flag("config", "Alias of --config.file.").Hidden().StringVar(&file)
	return &file
}

// serveDaemon runs a daemon until ctx ends (SIGINT/SIGTERM), reloading on
// SIGHUP, then stops it within the shutdown grace.
func serveDaemon(ctx context.Context, df *daemonFlags, stderr io.Writer, opts daemon.Options) error {
	logger := df.log.logger(stderr)
	opts.Logger = logger
	opts.ListenAddresses = *df.web.addresses
	opts.WebConfigFile = *df.web.config
	opts.EnableLifecycle = *df.lifecycle
	opts.WebLimits.ReadTimeout = *df.readTimeout
	prefix, err := df.web.prefix()
	if err != nil {
		return usageErr("%v", err)
	}
	opts.RoutePrefix = prefix
	opts.LogRingBytes = int(*df.ringBytes)
	opts.CacheBytes = int(*df.cache)
	opts.PerTargetHistograms = *df.perTarget
	opts.Build = buildInfo()
	if *df.memRatio <= 0 || *df.memRatio > 1 {
		return usageErr("--auto-gomemlimit.ratio: %v is not in (0, 1]", *df.memRatio)
	}
	limit, from, err := cgroupMemoryLimit("/")
	if err != nil {
		logger.Debug("no cgroup memory limit read", "err", err)
	}
	if *df.memLimit && os.Getenv("GOMEMLIMIT") == "" && limit > 0 {
		set := int64(float64(limit) * *df.memRatio)
		debug.SetMemoryLimit(set)
		logger.Info("GOMEMLIMIT set from the cgroup's memory limit", "cgroup_limit", limit, "from", from, "gomemlimit", set)
	}
	// Unless global.max_inflight_bytes says otherwise, the responses of the
	// runs in flight may hold a quarter of the container's memory (at most
	// twice that with every run's share: docs/configuration.md).
	opts.InflightBytes = limit / 4
	var d *daemon.Daemon
	d, err = daemon.New(opts)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := d.Start(); err != nil {
		_ = d.Stop(context.Background())
		return usageErr("%v", err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	logger.Info("driftd started", "version", promversion.Version, "revision", promversion.GetRevision(), "config", opts.ConfigFile)
	for {
		select {
		case <-hup:
			d.RequestReload()
			continue
		case <-ctx.Done():
		}
		break
	}
	logger.Info("stopping: letting runs finish", "grace", shutdownGrace)
	stopCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := d.Stop(stopCtx); err != nil {
		logger.Warn("stopped with runs cancelled", "err", err)
	}
	logger.Info("stopped")
	return nil
}
