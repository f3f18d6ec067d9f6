package daemon_test

import (
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/discovery"
	"github.com/driftd/driftd/internal/discovery/kubetest"
)

// service is an opted-in Service listening on the test server at rawURL
// (its host and port; the name and namespace make the URL driftd builds,
// so the test resolves it through a proxy-free dialer: see kubeURL).
func service(ns, name string, port int, annotations map[string]string) kubetest.Service {
	a := map[string]string{discovery.AnnotationProbe: "true"}
	for k, v := range annotations {
		a[k] = v
	}
	return kubetest.Service{Namespace: ns, Name: name, Labels: map[string]string{"app": "mcp"}, Annotations: a, Ports: []kubetest.Port{{Name: "http", Port: port}}}
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
