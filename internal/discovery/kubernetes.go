package discovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

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

// Kubernetes is a kubernetes_sd: block: annotated Services, kept by
// client-go informers, one per namespace (one for all when none is named).
// Listing, watching from the list's resource version, listing again after
// 410 Gone and backing off after failures are client-go's.
type Kubernetes struct {
	cfg    config.KubernetesSD
	client *KubeClient
	// dir holds the manifests read from ConfigMaps, one file per key.
	dir string

	start     sync.Once
	running   context.Context // the informers', ended by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the informers' goroutines
	informers []cache.SharedIndexInformer
	events    chan struct{}
	mu        sync.Mutex
	closed    bool
	lastErr   error // a list or watch error since the last refresh
	targets   []Target
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

// run starts the informers; they stop with Close.
func (k *Kubernetes) run() {
	ctx, cancel := context.WithCancel(context.Background())
	k.running, k.cancel = ctx, cancel
	namespaces := k.cfg.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = k.cfg.Selector
				return k.client.listServices(ctx, ns, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = k.cfg.Selector
				return k.client.watchServices(ctx, ns, o)
			},
		}
		inf := cache.NewSharedIndexInformer(lw, &corev1.Service{}, 0, cache.Indexers{})
		_ = inf.SetTransform(slimService)
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			// A version too old (410) or a watch the server ended is
			// client-go's to recover from by listing or watching again.
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || errors.Is(err, io.EOF) {
				return
			}
			k.failed(err)
		})
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { k.poke() },
			UpdateFunc: func(any, any) { k.poke() },
			DeleteFunc: func(any) { k.poke() },
		})
		k.informers = append(k.informers, inf)
		k.wg.Go(func() { inf.RunWithContext(ctx) })
	}
}

// slimService keeps of a Service what kubernetes_sd reads: its name,
// namespace, driftd's annotations and its ports' names and numbers. The
// informers hold every watched Service, so the rest (other annotations,
// managed fields, status) is dropped as it arrives.
func slimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil // a deletion whose final state is unknown
	}
	out := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: svc.Name, Namespace: svc.Namespace, UID: svc.UID, ResourceVersion: svc.ResourceVersion,
	}}
	for a, v := range svc.Annotations {
		if strings.HasPrefix(a, "driftd.io/") {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[a] = v
		}
	}
	out.Spec.Ports = make([]corev1.ServicePort, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		out.Spec.Ports[i] = corev1.ServicePort{Name: p.Name, Port: p.Port}
	}
	return out, nil
}

// failed records a list or watch error for the next refresh.
func (k *Kubernetes) failed(err error) {
	k.mu.Lock()
	k.lastErr = kubeError(err)
	k.mu.Unlock()
	k.poke()
}

// Close stops the informers and waits for them to end (their requests
// end with their context). A closed source does not start again, and a
// refresh waiting for the informers' first lists returns.
func (k *Kubernetes) Close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.start.Do(func() {})
	if k.cancel != nil {
		k.cancel()
	}
	k.wg.Wait()
}

var errClosed = &Error{Reason: mcp.ReasonConfig, Err: errors.New("the kubernetes source is closed")}

// Refresh implements Source: the informers' current Services, once each
// has listed its namespace. A list or watch error since the last refresh
// fails it: the informers keep the Services they had, and so the targets
// stay.
func (k *Kubernetes) Refresh(ctx context.Context) error {
	k.start.Do(k.run)
	// Close marks the source closed before it can keep run from starting:
	// a source not closed here has run.
	k.mu.Lock()
	closed := k.closed
	k.mu.Unlock()
	if closed {
		return errClosed
	}
	var services []*corev1.Service
	for _, inf := range k.informers {
		select {
		case <-inf.HasSyncedChecker().Done():
		case <-k.running.Done():
			return errClosed
		case <-ctx.Done():
			k.mu.Lock()
			err := k.lastErr
			k.mu.Unlock()
			if err == nil {
				err = &Error{Reason: mcp.ReasonTimeout, Err: ctx.Err()}
			}
			return &Error{Reason: Reason(err), Err: fmt.Errorf("services not listed: %w", err)}
		}
		for _, o := range inf.GetStore().List() {
			if svc, ok := o.(*corev1.Service); ok {
				services = append(services, svc)
			}
		}
	}
	slices.SortFunc(services, func(a, b *corev1.Service) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var out []Target
	var errs []error
	for _, svc := range services {
		ts, err := k.targetsOf(ctx, svc)
		if err != nil {
			errs = append(errs, fmt.Errorf("kubernetes:%s/%s: %w", svc.Namespace, svc.Name, err))
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

// Watch implements Source: the informers' events.
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
func (k *Kubernetes) targetsOf(ctx context.Context, svc *corev1.Service) ([]Target, error) {
	a := svc.Annotations
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
		if base.Manifest, err = k.configMapManifest(ctx, svc.Namespace, m); err != nil {
			return nil, err
		}
	}
	ns, name := svc.Namespace, svc.Name
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

func servicePorts(svc *corev1.Service, want string) ([]port, error) {
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
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
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
	cmData, err := k.client.configMapData(ctx, ns, name)
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
