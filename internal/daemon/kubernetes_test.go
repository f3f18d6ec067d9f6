package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery"
)

// fakeKube is client-go's fake clientset behind the source's small
// interface, with a switch that fails every list and watch and ends the
// watches running, as an API server going away does.
type fakeKube struct {
	cs      *fake.Clientset
	failing atomic.Bool
	mu      sync.Mutex
	watches []watch.Interface
}

func newFakeKube() *fakeKube { return &fakeKube{cs: fake.NewClientset()} }

func (f *fakeKube) client(config.KubernetesSD) (discovery.KubeClient, error) {
	return discovery.KubeClient{
		Services:   func(ns string) discovery.ServiceAPI { return fakeServices{f, ns} },
		ConfigMaps: func(ns string) discovery.ConfigMapAPI { return f.cs.CoreV1().ConfigMaps(ns) },
	}, nil
}

func (f *fakeKube) fail() {
	f.failing.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.watches {
		w.Stop()
	}
}

type fakeServices struct {
	f  *fakeKube
	ns string
}

// IsWatchListSemanticsUnSupported: the fake clientset cannot stream lists.
func (fakeServices) IsWatchListSemanticsUnSupported() bool { return true }

var errAPIDown = &url.Error{Op: "Get", URL: "https://kubernetes.default.svc/api/v1/services", Err: errors.New("connection refused")}

func (s fakeServices) List(ctx context.Context, o metav1.ListOptions) (*corev1.ServiceList, error) {
	if s.f.failing.Load() {
		return nil, errAPIDown
	}
	return s.f.cs.CoreV1().Services(s.ns).List(ctx, o)
}

func (s fakeServices) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if s.f.failing.Load() {
		return nil, errAPIDown
	}
	w, err := s.f.cs.CoreV1().Services(s.ns).Watch(ctx, o)
	if err == nil {
		s.f.mu.Lock()
		s.f.watches = append(s.f.watches, w)
		s.f.mu.Unlock()
	}
	return w, err
}

// service is an opted-in Service listening on the test server at rawURL
// (its host and port; the name and namespace make the URL driftd builds,
// so the test resolves it through a proxy-free dialer: see kubeURL).
func service(ns, name string, port int, annotations map[string]string) *corev1.Service {
	a := map[string]string{discovery.AnnotationProbe: "true"}
	for k, v := range annotations {
		a[k] = v
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "mcp"}, Annotations: a},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: int32(port)}}},
	}
}

func (f *fakeKube) put(t *testing.T, svc *corev1.Service) {
	t.Helper()
	ctx := context.Background()
	_, err := f.cs.CoreV1().Services(svc.Namespace).Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		_, err = f.cs.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func portOf(t *testing.T, raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// svcProxy is an HTTP proxy that sends NAME.NS.svc:PORT to 127.0.0.1:PORT,
// standing in for cluster DNS: discovered targets reach it through the
// proxy_url an sd_credentials entry gives them.
func svcProxy(t *testing.T) string {
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = "http"
			r.Out.URL.Host = "127.0.0.1:" + r.In.URL.Port()
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1,
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sumMetric adds every series of name whose labels contain each of labels.
func sumMetric(body, name string, labels ...string) float64 {
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if ok {
			var v float64
			fmt.Sscanf(line[strings.LastIndexByte(line, ' ')+1:], "%g", &v)
			sum += v
		}
	}
	return sum
}
