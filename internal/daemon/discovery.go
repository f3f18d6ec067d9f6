package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery"
	"github.com/driftd/driftd/internal/probe"
)

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// sdDebounce gathers a burst of source updates (a thousand watch
// events, a tool rewriting twenty files) into one reconcile.
var sdDebounce = 250 * time.Millisecond

// sdSyncTimeout bounds a new source's first refresh at Start and on
// reload; a source not done by then starts with no targets and adds them
// when its refresh ends.
const sdSyncTimeout = 30 * time.Second

// sdSource is one running discovery source.
type sdSource struct {
	src    discovery.Source
	spec   string // the block as configured: a changed one is restarted
	poke   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	synced chan struct{} // closed after the first refresh

	mu   sync.Mutex
	last []discovery.Target // what the daemon last reconciled of it
}

// sdSpec is one discovery block of a config, not yet started.
type sdSpec struct {
	key, spec string
	build     func() (discovery.Source, error)
}

// sdSpecs lists cfg's discovery blocks in config order: target_files,
// kubernetes_sd, registry_sd.
func (d *Daemon) sdSpecs(cfg *config.Config) []sdSpec {
	var out []sdSpec
	spec := func(v any) string {
		b, _ := yaml.Marshal(v)
		return string(b)
	}
	root := filepath.Dir(cfg.Path)
	for _, g := range cfg.TargetFiles {
		out = append(out, sdSpec{"file:" + g, g, func() (discovery.Source, error) { return discovery.NewFiles(g, root), nil }})
	}
	for _, k := range cfg.KubernetesSD {
		out = append(out, sdSpec{k.Source(), spec(k), func() (discovery.Source, error) { return d.newKubernetesSource(cfg, k) }})
	}
	for _, r := range cfg.RegistrySD {
		out = append(out, sdSpec{r.Source(), spec(r), func() (discovery.Source, error) { return discovery.NewRegistry(r, d.opts.Build.Version) }})
	}
	return out
}

// syncSources makes cfg's discovery blocks the running sources and waits
// for their first refresh (startSources).
func (d *Daemon) syncSources(cfg *config.Config) error {
	wait, err := d.startSources(cfg)
	wait(nil)
	return err
}

// startSources makes cfg's discovery blocks the running sources: a block
// already running unchanged keeps running (and is refreshed), a new or
// changed one is started, one gone is stopped and its series deleted.
// wait returns when every source has done its first refresh, or
// sdSyncTimeout has passed, or stop is closed: Start serves before that,
// a reload waits.
func (d *Daemon) startSources(cfg *config.Config) (wait func(stop <-chan struct{}), err error) {
	d.sdMu.Lock()
	defer d.sdMu.Unlock()
	next := map[string]*sdSource{}
	var order []string
	var errs []error
	for _, sp := range d.sdSpecs(cfg) {
		order = append(order, sp.key)
		if old, ok := d.sources[sp.key]; ok && old.spec == sp.spec {
			next[sp.key] = old
			old.trigger()
			continue
		}
		src, err := sp.build()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sp.key, err))
			continue
		}
		next[sp.key] = d.startSource(src, sp.spec)
	}
	for key, old := range d.sources {
		if next[key] != old {
			old.stop()
			if _, still := next[key]; !still {
				d.metrics.SDForget(key)
			}
		}
	}
	d.sources, d.sdOrder = next, order
	wait = func(stop <-chan struct{}) {
		// One deadline for all of them: the sources refresh at once, and
		// a second slow one must not add its own 30 s to the first's.
		waited, cancel := context.WithTimeout(context.Background(), sdSyncTimeout)
		defer cancel()
		for _, key := range order {
			s, ok := next[key]
			if !ok {
				continue
			}
			select {
			case <-s.synced:
			case <-stop:
				return
			case <-waited.Done():
				d.log.Warn("discovery source not synced yet; its targets follow when it is", "discovery", key)
			}
		}
	}
	return wait, errors.Join(errs...)
}

func (d *Daemon) startSource(src discovery.Source, spec string) *sdSource {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sdSource{src: src, spec: spec, poke: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{}), synced: make(chan struct{})}
	go func() {
		defer close(s.done)
		var watching sync.WaitGroup
		watching.Go(func() { src.Watch(ctx, s.trigger) })
		defer watching.Wait()
		d.refreshSource(ctx, s)
		close(s.synced)
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.poke:
				d.refreshSource(ctx, s)
			}
		}
	}()
	return s
}

func (s *sdSource) trigger() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

func (s *sdSource) stop() {
	s.cancel()
	<-s.done
}

// refreshSource refreshes s once, counts the outcome, and asks for a
// reconcile when its set changed. A failed refresh keeps the last set.
func (d *Daemon) refreshSource(ctx context.Context, s *sdSource) {
	key := s.src.Key()
	err := s.src.Refresh(ctx)
	if ctx.Err() != nil {
		return // stopping: not a failure of the source
	}
	ts := s.src.Targets()
	if err != nil {
		reason := string(discovery.Reason(err))
		d.metrics.SDFailed(key, reason, len(ts))
		d.log.Error("discovery refresh failed; the source keeps its last targets", "discovery", key, "reason", reason, "targets", len(ts), "err", err)
	} else {
		d.metrics.SDRefreshed(key, len(ts), time.Now())
	}
	if r, ok := s.src.(*discovery.Registry); ok {
		d.metrics.SDSkipped(key, r.Skipped())
		if r.Capped() {
			d.log.Warn("registry listing cut at max_targets; the rest of its servers are not probed", "discovery", key, "targets", len(ts))
		}
	}
	s.mu.Lock()
	changed := !reflect.DeepEqual(s.last, ts)
	s.last = ts
	s.mu.Unlock()
	if changed {
		d.rediscoverSoon()
	}
}

// rediscoverSoon asks for a reconcile sdDebounce from now, unless one is
// already asked for.
func (d *Daemon) rediscoverSoon() {
	d.sdTimerMu.Lock()
	defer d.sdTimerMu.Unlock()
	if d.sdTimer != nil {
		return
	}
	d.sdTimer = time.AfterFunc(sdDebounce, func() {
		d.sdTimerMu.Lock()
		d.sdTimer = nil
		d.sdTimerMu.Unlock()
		select {
		case d.pendingSD <- struct{}{}:
		default:
		}
	})
}

// discovered is every running source's current set, in config order.
func (d *Daemon) discovered() []discovery.Target {
	d.sdMu.Lock()
	defer d.sdMu.Unlock()
	var out []discovery.Target
	for _, key := range d.sdOrder {
		if s, ok := d.sources[key]; ok {
			for _, t := range s.src.Targets() {
				t.Source = key
				out = append(out, t)
			}
		}
	}
	return out
}

// rediscover reconciles the running configuration with the sources' sets:
// the same build and apply a reload does, with the same config.
func (d *Daemon) rediscover() {
	start := time.Now()
	old := d.cfg.Load()
	rc, err := buildRuntime(old.cfg, d.discovered(), d.opts)
	if err != nil {
		d.log.Error("discovered targets not applied", "err", err)
		return
	}
	d.apply(old, rc)
	d.log.Info("discovered targets reconciled", "targets", len(rc.targets), "rejected", len(rc.rejected), "took", time.Since(start))
}

// stopSources stops every source, for Stop.
func (d *Daemon) stopSources(context.Context) error {
	d.sdTimerMu.Lock()
	if d.sdTimer != nil {
		d.sdTimer.Stop()
	}
	d.sdTimerMu.Unlock()
	d.sdMu.Lock()
	defer d.sdMu.Unlock()
	for _, s := range d.sources {
		s.stop()
	}
	d.sources = nil
	return nil
}

// refreshSources asks every running source for a refresh: a reload
// re-reads target files and the registry even when the config is unchanged.
func (d *Daemon) refreshSources() {
	d.sdMu.Lock()
	defer d.sdMu.Unlock()
	for _, s := range d.sources {
		s.trigger()
	}
}

// reportRejected sets driftd_sd_rejected_targets and logs each rejection
// that old did not already have: a discovered target is never dropped
// without a word.
func (d *Daemon) reportRejected(old, rc *runtimeConfig) {
	had := map[string]bool{}
	if old != nil {
		for _, r := range old.rejected {
			had[r.err.Error()] = true
		}
	}
	counts := map[string]int{}
	for _, r := range rc.rejected {
		counts[r.source]++
		if msg := r.err.Error(); !had[msg] {
			d.log.Warn("discovered target not probed", "discovery", r.source, "err", msg)
		}
	}
	d.sdMu.Lock()
	order := d.sdOrder
	d.sdMu.Unlock()
	d.metrics.SDRejected(order, counts)
}

// DiscoverOnce is `driftd config check --discover`: it reads every
// discovery source of the config at path once (each within its own
// bounds, a Kubernetes one within sdSyncTimeout) and lists, as YAML, the
// targets found with their origin and the ones rejected with the reason.
// A source that fails, whole or in part, is an error returned beside the
// listing of what every source did find.
func DiscoverOnce(path string, opts Options) ([]byte, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slogDiscard()
	}
	d := &Daemon{opts: opts, log: opts.Logger}
	ctx, cancel := context.WithTimeout(context.Background(), sdSyncTimeout)
	defer cancel()
	var found []discovery.Target
	var errs []error
	for _, sp := range d.sdSpecs(cfg) {
		src, err := sp.build()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sp.key, err))
			continue
		}
		err = src.Refresh(ctx)
		if k, ok := src.(*discovery.Kubernetes); ok {
			k.Close()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sp.key, err))
		}
		// What a source found is listed even when part of it failed (one
		// badly annotated Service, one broken target file): the operator
		// sees the good targets beside the errors.
		for _, t := range src.Targets() {
			t.Source = sp.key
			found = append(found, t)
		}
	}
	rc, err := buildRuntime(cfg, found, Options{})
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	type row struct {
		Origin   string `yaml:"origin"`
		Name     string `yaml:"name"`
		URL      string `yaml:"url"`
		Manifest string `yaml:"manifest,omitempty"`
		Baseline string `yaml:"baseline,omitempty"`
		Class    string `yaml:"classification"`
	}
	out := struct {
		Discovered []row    `yaml:"discovered"`
		Rejected   []string `yaml:"rejected,omitempty"`
	}{Discovered: []row{}}
	for _, tc := range rc.targets {
		if tc.origin == "config" {
			continue
		}
		out.Discovered = append(out.Discovered, row{tc.origin, tc.t.Name, config.RedactedURL(tc.t.URL), tc.t.Manifest, tc.t.Baseline, probe.Classify(*tc.t).Class})
	}
	for _, r := range rc.rejected {
		out.Rejected = append(out.Rejected, r.err.Error())
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return nil, err
	}
	return b, errors.Join(errs...)
}
