package discovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
)

// The annotations a Service opts in with (docs/discovery.md).
const (
	AnnotationProbe       = "driftd.io/probe"       // "true"
	AnnotationPort        = "driftd.io/port"        // name or number, or a comma list
	AnnotationPath        = "driftd.io/path"        // default /mcp
	AnnotationScheme      = "driftd.io/scheme"      // http (default) or https
	AnnotationManifest    = "driftd.io/manifest"    // baseline (default) or CONFIGMAP/KEY
	AnnotationEnvironment = "driftd.io/environment" // local, dev, staging, production, unknown
)

// maxConfigMapManifest bounds a manifest read from a ConfigMap (the API
// server's own limit on a ConfigMap is 1 MiB).
const maxConfigMapManifest = 1 << 20

// Kubernetes is a kubernetes_sd: block: annotated Services, listed and
// then watched, one watch per namespace (one for all when none is named).
type Kubernetes struct {
	cfg    config.KubernetesSD
	client *KubeClient
	// dir holds the manifests read from ConfigMaps, one file per key.
	dir string

	start   sync.Once
	cancel  context.CancelFunc
	watches []*serviceWatch
	events  chan struct{}
	mu      sync.Mutex
	lastErr error // a list or watch error since the last refresh
	targets []Target
}

// NewKubernetes returns the source for cfg reading through client;
// manifests from ConfigMaps are written under dir.
func NewKubernetes(cfg config.KubernetesSD, client *KubeClient, dir string) *Kubernetes {
	return &Kubernetes{cfg: cfg, client: client, dir: dir, events: make(chan struct{}, 1)}
}

// Key implements Source.
func (k *Kubernetes) Key() string { return k.cfg.Source() }

func (k *Kubernetes) poke() {
	select {
	case k.events <- struct{}{}:
	default:
	}
}

// run starts the watches; they stop with Close.
func (k *Kubernetes) run() {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	namespaces := k.cfg.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		w := &serviceWatch{client: k.client, ns: ns, selector: k.cfg.Selector, synced: make(chan struct{}), changed: k.poke, failed: k.failed}
		k.watches = append(k.watches, w)
		go w.run(ctx)
	}
}

// failed records a list or watch error for the next refresh.
func (k *Kubernetes) failed(err error) {
	k.mu.Lock()
	k.lastErr = err
	k.mu.Unlock()
	k.poke()
}

// Close stops the watches.
func (k *Kubernetes) Close() {
	if k.cancel != nil {
		k.cancel()
	}
}

// Refresh implements Source: the watches' current Services, once each has
// listed its namespace. A list or watch error since the last refresh
// fails it: the watches keep the Services they had, and so the targets
// stay.
func (k *Kubernetes) Refresh(ctx context.Context) error {
	k.start.Do(k.run)
	var services []Service
	for _, w := range k.watches {
		select {
		case <-w.synced:
		case <-ctx.Done():
			k.mu.Lock()
			err := k.lastErr
			k.mu.Unlock()
			if err == nil {
				err = ctx.Err()
			}
			return &Error{Reason: Reason(err), Err: fmt.Errorf("services not listed: %w", err)}
		}
		services = append(services, w.list()...)
	}
	slices.SortFunc(services, func(a, b Service) int {
		return strings.Compare(a.Metadata.Namespace+"/"+a.Metadata.Name, b.Metadata.Namespace+"/"+b.Metadata.Name)
	})
	var out []Target
	var errs []error
	for i := range services {
		svc := &services[i]
		ts, err := k.targetsOf(ctx, svc)
		if err != nil {
			errs = append(errs, fmt.Errorf("kubernetes:%s/%s: %w", svc.Metadata.Namespace, svc.Metadata.Name, err))
		}
		out = append(out, ts...)
	}
	Dedupe(out)
	k.mu.Lock()
	defer k.mu.Unlock()
	err := k.lastErr
	k.lastErr = nil
	if err != nil {
		return &Error{Reason: Reason(err), Err: err}
	}
	k.targets = out
	if len(errs) > 0 {
		return &Error{Reason: mcp.ReasonConfig, Err: errors.Join(errs...)}
	}
	return nil
}

// Targets implements Source.
func (k *Kubernetes) Targets() []Target {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.targets
}

// Watch implements Source: the watches' events.
func (k *Kubernetes) Watch(ctx context.Context, changed func()) {
	defer k.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.events:
			changed()
		}
	}
}

// targetsOf is the targets of one Service: none without the opt-in
// annotation, else one per port named by driftd.io/port (the one port of
// a single-port Service when it is not set).
func (k *Kubernetes) targetsOf(ctx context.Context, svc *Service) ([]Target, error) {
	a := svc.Metadata.Annotations
	if a[AnnotationProbe] != "true" {
		return nil, nil
	}
	ports, err := servicePorts(svc, a[AnnotationPort])
	if err != nil {
		return nil, err
	}
	scheme := a[AnnotationScheme]
	switch scheme {
	case "":
		scheme = "http"
	case "http", "https":
	default:
		return nil, fmt.Errorf("%s: %q is not http or https", AnnotationScheme, scheme)
	}
	path := a[AnnotationPath]
	if path == "" {
		path = "/mcp"
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("%s: %q must start with /", AnnotationPath, path)
	}
	base := config.Target{Environment: a[AnnotationEnvironment], Labels: maps.Clone(k.cfg.Labels), HTTPClient: config.DefaultHTTPClient()}
	switch m := a[AnnotationManifest]; m {
	case "", "baseline":
		base.Baseline = config.BaselineFirstSeen
	default:
		if base.Manifest, err = k.configMapManifest(ctx, svc.Metadata.Namespace, m); err != nil {
			return nil, err
		}
	}
	ns, name := svc.Metadata.Namespace, svc.Metadata.Name
	origin := "kubernetes:" + ns + "/" + name
	out := make([]Target, 0, len(ports))
	for _, p := range ports {
		t := base
		t.Labels = maps.Clone(base.Labels)
		suffix := ""
		if len(ports) > 1 {
			suffix = p.label
		}
		t.Name = KubernetesName(ns, name, suffix)
		t.URL = fmt.Sprintf("%s://%s.%s.svc:%d%s", scheme, name, ns, p.number, path)
		out = append(out, Target{Origin: origin, Target: t})
	}
	return out, nil
}

type port struct {
	label  string
	number int32
}

func servicePorts(svc *Service, want string) ([]port, error) {
	if want == "" {
		if len(svc.Spec.Ports) != 1 {
			return nil, fmt.Errorf("%d ports and no %s annotation to choose", len(svc.Spec.Ports), AnnotationPort)
		}
		p := svc.Spec.Ports[0]
		return []port{{p.Name, p.Port}}, nil
	}
	var out []port
	for _, w := range strings.Split(want, ",") {
		w = strings.TrimSpace(w)
		i := slices.IndexFunc(svc.Spec.Ports, func(p ServicePort) bool {
			return p.Name == w || strconv.Itoa(int(p.Port)) == w
		})
		if i < 0 {
			return nil, fmt.Errorf("%s: the Service has no port %q", AnnotationPort, w)
		}
		out = append(out, port{w, svc.Spec.Ports[i].Port})
	}
	return out, nil
}

// configMapManifest reads CONFIGMAP/KEY in namespace ns and writes it
// under the source's directory, returning the file (rewritten only when
// the key's content changed).
func (k *Kubernetes) configMapManifest(ctx context.Context, ns, ref string) (string, error) {
	name, key, ok := strings.Cut(ref, "/")
	if !ok || name == "" || key == "" || key == "." || key == ".." || strings.ContainsAny(key, `/\`) {
		return "", fmt.Errorf("%s: %q is not baseline or CONFIGMAP/KEY", AnnotationManifest, ref)
	}
	if k.client == nil || k.dir == "" {
		return "", fmt.Errorf("%s: manifests from ConfigMaps are not available here", AnnotationManifest)
	}
	cmData, err := k.client.ConfigMapData(ctx, ns, name)
	if err != nil {
		return "", fmt.Errorf("%s: ConfigMap %s: %w", AnnotationManifest, name, err)
	}
	data, ok := cmData[key]
	if !ok {
		return "", fmt.Errorf("%s: ConfigMap %s has no key %q", AnnotationManifest, name, key)
	}
	if len(data) > maxConfigMapManifest {
		return "", fmt.Errorf("%s: ConfigMap %s key %q is larger than %d bytes", AnnotationManifest, name, key, maxConfigMapManifest)
	}
	file := filepath.Join(k.dir, ns, name, key)
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, []byte(data)) {
		return file, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	return file, atomicfile.Write(file, []byte(data))
}

// serviceWatch keeps the Services of one namespace ("": every one): it
// lists them, then watches from the list's resource version, and lists
// again when the watch fails or the version is too old.
type serviceWatch struct {
	client   *KubeClient
	ns       string
	selector string
	synced   chan struct{} // closed after the first list
	changed  func()
	failed   func(error)

	mu       sync.Mutex
	services map[string]Service // by namespace/name
}

// Backoff between failed lists or watches.
const (
	kubeBackoffMin = time.Second
	kubeBackoffMax = 30 * time.Second
)

func (w *serviceWatch) run(ctx context.Context) {
	backoff := kubeBackoffMin
	var once sync.Once
	for ctx.Err() == nil {
		rv, err := w.relist(ctx)
		if err == nil {
			backoff = kubeBackoffMin
			once.Do(func() { close(w.synced) })
			w.changed()
			if err = w.watch(ctx, rv); gone(err) {
				continue // the version is too old: list again at once
			}
		}
		if ctx.Err() != nil {
			return
		}
		w.failed(err)
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, kubeBackoffMax)
	}
}

// relist replaces the Services with a fresh list of them and returns the
// list's resource version.
func (w *serviceWatch) relist(ctx context.Context) (string, error) {
	items, rv, err := w.client.ListServices(ctx, w.ns, w.selector)
	if err != nil {
		return "", err
	}
	set := make(map[string]Service, len(items))
	for _, s := range items {
		set[s.key()] = s
	}
	w.mu.Lock()
	w.services = set
	w.mu.Unlock()
	return rv, nil
}

// watch applies the events from resource version rv on, watching again
// from the last one whenever the server ends a watch, until one fails (or
// ctx ends): its error says why.
func (w *serviceWatch) watch(ctx context.Context, rv string) error {
	for ctx.Err() == nil {
		err := w.client.WatchServices(ctx, w.ns, w.selector, rv, func(ev WatchEvent) {
			rv = ev.Service.Metadata.ResourceVersion
			w.apply(ev)
		})
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// apply is one watch event: a bookmark moves only the version.
func (w *serviceWatch) apply(ev WatchEvent) {
	if ev.Type == "BOOKMARK" {
		return
	}
	w.mu.Lock()
	if ev.Type == "DELETED" {
		delete(w.services, ev.Service.key())
	} else {
		w.services[ev.Service.key()] = ev.Service
	}
	w.mu.Unlock()
	w.changed()
}

// list is the namespace's Services now.
func (w *serviceWatch) list() []Service {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Collect(maps.Values(w.services))
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
