package discovery

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery/kubetest"
	"github.com/driftd/driftd/internal/mcp"
)

func kubeService(ns, name string, annotations map[string]string, ports ...kubetest.Port) kubetest.Service {
	a := map[string]string{AnnotationProbe: "true"}
	for k, v := range annotations {
		a[k] = v
	}
	if len(ports) == 0 {
		ports = []kubetest.Port{{Name: "http", Port: 8080}}
	}
	return kubetest.Service{Namespace: ns, Name: name, Labels: map[string]string{"app": "mcp"}, Annotations: a, Ports: ports}
}

func targetNames(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Target.Name+" "+t.Target.URL)
	}
	return out
}

// waitFor refreshes k until the targets' names and URLs are want.
func waitFor(t *testing.T, k *Kubernetes, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := k.Refresh(ctx)
		cancel()
		got = targetNames(k.Targets())
		if err == nil && slices.Equal(got, want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("targets %q, want %q", got, want)
}

// TestKubernetesListWatch: the Services of one namespace that a label
// selects are listed; additions, changes and
// deletions arrive through the watch; a compacted history (410) makes it
// list again; an API server that fails fails the refresh with its reason
// and keeps the targets, and one that comes back is watched again.
func TestKubernetesListWatch(t *testing.T) {
	api := kubetest.New()
	defer api.Close()
	web := kubeService("shop", "web", nil)
	web.Labels = map[string]string{"app": "web"} // not selected
	api.Put(web)
	api.Put(kubeService("shop", "crm", nil))
	api.Put(kubeService("shop", "quiet", map[string]string{AnnotationProbe: "false"}))
	api.Put(kubeService("other", "crm", nil)) // not a watched namespace
	client, err := NewKubeClient(api.Kubeconfig(t.TempDir()), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}, Selector: "app=mcp"}, client, t.TempDir())
	var changes atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go k.Watch(ctx, func() { changes.Add(1) })
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")

	before := changes.Load()
	api.Put(kubeService("shop", "search", map[string]string{AnnotationPath: "/v1/mcp", AnnotationScheme: "https"}))
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp", "k8s-shop-search https://search.shop.svc:8080/v1/mcp")
	if changes.Load() == before {
		t.Error("a watched addition did not call changed")
	}
	api.Put(kubeService("shop", "crm", map[string]string{AnnotationPort: "admin,9000"}, kubetest.Port{Name: "http", Port: 8080}, kubetest.Port{Name: "admin", Port: 9000}))
	waitFor(t, k, "k8s-shop-crm-admin http://crm.shop.svc:9000/mcp", "k8s-shop-crm-9000 http://crm.shop.svc:9000/mcp", "k8s-shop-search https://search.shop.svc:8080/v1/mcp")
	api.Delete("shop", "crm")
	waitFor(t, k, "k8s-shop-search https://search.shop.svc:8080/v1/mcp")

	// History compacted: the watch gets 410 and the source lists again.
	api.Compact()
	api.Put(kubeService("shop", "crm", nil))
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp", "k8s-shop-search https://search.shop.svc:8080/v1/mcp")

	// The API server fails: the refresh fails with http_status and the
	// targets stay; back, and changes arrive again.
	api.Fail(true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := k.Refresh(context.Background())
		if err != nil {
			if Reason(err) != mcp.ReasonHTTPStatus {
				t.Errorf("refresh error %v, reason %q, want http_status", err, Reason(err))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a failing API server never failed a refresh")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := len(k.Targets()); got != 2 {
		t.Errorf("%d targets after a failure, want the 2 found before", got)
	}
	api.Fail(false)
	api.Delete("shop", "search")
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")

	lists := 0
	for _, r := range api.Requests() {
		if !strings.Contains(r, "/namespaces/shop/services") {
			t.Errorf("a request outside the watched namespace: %s", r)
		}
		if !strings.Contains(r, "labelSelector=app%3Dmcp") {
			t.Errorf("a request without the selector: %s", r)
		}
		if !strings.Contains(r, "watch=true") {
			lists++
		}
	}
	if lists < 2 {
		t.Errorf("%d lists, want one at start and one after the 410 at least", lists)
	}
	if r := api.Rejected(); len(r) > 0 {
		t.Errorf("the API server refused requests: %q", r)
	}
}

// TestKubernetesPaging: every namespace, 1,203 opted-in Services, listed
// in pages of 500 with continue tokens.
func TestKubernetesPaging(t *testing.T) {
	api := kubetest.New()
	defer api.Close()
	var want []string
	for i := range 1203 {
		ns := fmt.Sprintf("ns%d", i%3)
		name := fmt.Sprintf("s%04d", i)
		api.Put(kubeService(ns, name, nil))
		want = append(want, fmt.Sprintf("k8s-%s-%s http://%s.%s.svc:8080/mcp", ns, name, name, ns))
	}
	slices.Sort(want)
	client, err := NewKubeClient(api.Kubeconfig(t.TempDir()), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{}, client, t.TempDir())
	defer k.Close()
	waitFor(t, k, want...)
	pages := 0
	for _, r := range api.Requests() {
		if strings.HasPrefix(r, "GET /api/v1/services?") && !strings.Contains(r, "watch=true") {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("%d list requests, want 3 pages of 500", pages)
	}
}

// TestKubernetesConfigMapManifest: driftd.io/manifest names a ConfigMap
// key, read into the source's directory; a missing key is the Service's
// config error and leaves the others.
func TestKubernetesConfigMapManifest(t *testing.T) {
	api := kubetest.New()
	defer api.Close()
	api.PutConfigMap("shop", "crm-manifest", map[string]string{"tools.json": `{"tools":[]}`})
	api.Put(kubeService("shop", "crm", map[string]string{AnnotationManifest: "crm-manifest/tools.json"}))
	api.Put(kubeService("shop", "lost", map[string]string{AnnotationManifest: "crm-manifest/nope.json"}))
	client, err := NewKubeClient(api.Kubeconfig(t.TempDir()), "test")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}}, client, dir)
	defer k.Close()
	err = k.Refresh(context.Background())
	if Reason(err) != mcp.ReasonConfig || !strings.Contains(fmt.Sprint(err), `kubernetes:shop/lost`) || !strings.Contains(fmt.Sprint(err), `no key "nope.json"`) {
		t.Errorf("refresh error %v, want the lost Service's missing key (config)", err)
	}
	ts := k.Targets()
	if len(ts) != 1 || ts[0].Target.Manifest != filepath.Join(dir, "shop", "crm-manifest", "tools.json") {
		t.Fatalf("targets %+v", ts)
	}
	if b, err := os.ReadFile(ts[0].Target.Manifest); err != nil || string(b) != `{"tools":[]}` {
		t.Errorf("manifest file %q, %v", b, err)
	}
}

// selfSigned is a CA-less certificate for 127.0.0.1 (server) or a client,
// as PEM.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM []byte, cert tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM, cert
}

// TestKubernetesCloseEndsRefresh: a refresh waiting for the first list of
// an API server that fails returns once the source is closed, and Close
// leaves no goroutine behind.
func TestKubernetesCloseEndsRefresh(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	api := kubetest.New()
	api.Fail(true)
	client, err := NewKubeClient(api.Kubeconfig(t.TempDir()), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{}, client, t.TempDir())
	done := make(chan error, 1)
	go func() { done <- k.Refresh(context.Background()) }()
	for deadline := time.Now().Add(10 * time.Second); len(api.Requests()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the source never asked the API server")
		}
	}
	k.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("the refresh ended with %v, want the source closed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the refresh did not return after Close")
	}
	if err := k.Refresh(context.Background()); err == nil {
		t.Error("a closed source refreshed")
	}
	api.Close()
	goleak.VerifyNone(t, ignore)
}
