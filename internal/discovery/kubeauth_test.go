package discovery

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery/kubetest"
	"github.com/driftd/driftd/internal/mcp"
)

// writeFile writes b to dir/name (executable, for plugins) and returns
// its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// refreshErr refreshes a new source of kubeconfig once, within a few
// seconds, and returns its error.
func refreshErr(t *testing.T, kubeconfig string) error {
	t.Helper()
	client, err := NewKubeClient(kubeconfig, "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}}, client, t.TempDir())
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return k.Refresh(ctx)
}

// TestKubernetesExecPlugin: a kubeconfig whose user is an exec credential
// plugin (client.authentication.k8s.io/v1): client-go runs it, with the
// kubeconfig's env, relative to the kubeconfig, and sends the token it
// prints, which the API server demands; after the server starts refusing
// that token (401) the plugin runs again and its new token is sent.
func TestKubernetesExecPlugin(t *testing.T) {
	api := kubetest.New()
	defer api.Close()
	api.SetToken("from-plugin-1")
	api.PutConfigMap("shop", "crm-manifest", map[string]string{"tools.json": `{"tools":[]}`})
	api.Put(kubeService("shop", "crm", map[string]string{AnnotationManifest: "crm-manifest/tools.json"}))
	dir := t.TempDir()
	tokenFile := writeFile(t, dir, "current-token", []byte("from-plugin-1"))
	runs := filepath.Join(dir, "runs")
	writeFile(t, dir, "plugin", []byte(`#!/bin/sh
echo run >> "$RUNS"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "$(cat "$TOKEN_FILE")"
`))
	kubeconfig := api.KubeconfigFor(dir, fmt.Sprintf(`{exec: {command: ./plugin, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, env: [{name: TOKEN_FILE, value: %q}, {name: RUNS, value: %q}]}}`, tokenFile, runs))
	client, err := NewKubeClient(kubeconfig, "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}}, client, t.TempDir())
	defer k.Close()
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")
	if r := api.Rejected(); len(r) > 0 {
		t.Fatalf("the API server refused requests with the plugin's token: %q", r)
	}
	b, _ := os.ReadFile(runs)
	if n := strings.Count(string(b), "run"); n != 1 {
		t.Errorf("the plugin ran %d times before any 401, want once", n)
	}

	// The credential rotates: the server refuses the old token, the
	// ConfigMap read of the next refresh gets 401, the plugin runs again
	// and a later refresh succeeds with the new token.
	writeFile(t, dir, "current-token", []byte("from-plugin-2"))
	api.SetToken("from-plugin-2")
	err = k.Refresh(context.Background())
	if Reason(err) != mcp.ReasonConfig || !strings.Contains(fmt.Sprint(err), "status 401 Unauthorized") {
		t.Errorf("the refresh after rotation: %v, want the ConfigMap read's 401", err)
	}
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")
	b, _ = os.ReadFile(runs)
	if n := strings.Count(string(b), "run"); n != 2 {
		t.Errorf("the plugin ran %d times, want twice (once, and after the 401)", n)
	}
	for _, r := range api.Rejected() {
		if strings.Contains(r, "from-plugin") {
			t.Errorf("a rejection names a token: %s", r)
		}
	}
}

// TestKubernetesClientCertificate: a kubeconfig whose user is a client
// certificate, as files relative to the kubeconfig or inline data,
// reaches an API server that demands one; without one, or against a
// server the kubeconfig's CA does not sign, the refresh fails with tls.
func TestKubernetesClientCertificate(t *testing.T) {
	certPEM, keyPEM, cert := selfSigned(t, "driftd-client")
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	api := kubetest.NewWithOptions(kubetest.Options{ClientCAs: pool})
	defer api.Close()
	api.Put(kubeService("shop", "crm", nil))
	for _, user := range []string{
		`{client-certificate: client.crt, client-key: client.key}`,
		fmt.Sprintf(`{client-certificate-data: %s, client-key-data: %s}`, base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM)),
	} {
		dir := t.TempDir()
		writeFile(t, dir, "client.crt", certPEM)
		writeFile(t, dir, "client.key", keyPEM)
		client, err := NewKubeClient(api.KubeconfigFor(dir, user), "test")
		if err != nil {
			t.Fatalf("%s: %v", user, err)
		}
		k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}}, client, t.TempDir())
		waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")
		k.Close()
	}
	if r := api.Rejected(); len(r) > 0 {
		t.Errorf("the API server refused requests: %q", r)
	}
	if err := refreshErr(t, api.KubeconfigFor(t.TempDir(), `{}`)); Reason(err) != mcp.ReasonTLS {
		t.Errorf("no client certificate: %v, reason %q, want tls", err, Reason(err))
	}

	// A CA that did not sign the server's certificate.
	other := kubetest.New()
	defer other.Close()
	dir := t.TempDir()
	wrongCA, _, _ := selfSigned(t, "some-ca")
	writeFile(t, dir, "ca.crt", wrongCA)
	kc := writeFile(t, dir, "kubeconfig", fmt.Appendf(nil, `apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: %q, certificate-authority: ca.crt}}]
users: [{name: u, user: {token: %q}}]
`, other.URL, other.Token()))
	if err := refreshErr(t, kc); Reason(err) != mcp.ReasonTLS {
		t.Errorf("an unknown server certificate: %v, reason %q, want tls", err, Reason(err))
	}
}

// TestKubernetesTokenFile: a kubeconfig's tokenFile, relative to it.
func TestKubernetesTokenFile(t *testing.T) {
	api := kubetest.New()
	defer api.Close()
	api.Put(kubeService("shop", "crm", nil))
	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(api.Token()+"\n"))
	client, err := NewKubeClient(api.KubeconfigFor(dir, `{tokenFile: token}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}}, client, t.TempDir())
	defer k.Close()
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")
	if r := api.Rejected(); len(r) > 0 {
		t.Errorf("the API server refused requests: %q", r)
	}
}

// TestKubeClientErrors: what client-go cannot build a client from is an
// error when the source is built: a kubeconfig that is missing or names
// an absent context, an auth-provider plugin driftd does not link, and no
// kubeconfig outside a cluster. In a cluster rest.InClusterConfig reads
// the service account at fixed paths
// (/var/run/secrets/kubernetes.io/serviceaccount), which a test cannot
// provide; without them it is an error naming the token file.
func TestKubeClientErrors(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"":                        "no such file",
		"current-context: nope\n": `context was not found for specified context: nope`,
		"apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]\n": `no Auth Provider found for name "gcp"`,
	} {
		file := filepath.Join(dir, "absent")
		if body != "" {
			file = writeFile(t, dir, "kubeconfig", []byte(body))
		}
		if _, err := NewKubeClient(file, "test"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := NewKubeClient("", "test"); err == nil || !strings.Contains(err.Error(), "not in a cluster") {
		t.Errorf("outside a cluster: %v", err)
	}
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
		t.Skip("this machine has a service account")
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "6443")
	if _, err := NewKubeClient("", "test"); err == nil || !strings.Contains(err.Error(), "serviceaccount/token") {
		t.Errorf("in a cluster without a service account: %v", err)
	}
}

// TestKubernetesStreamedList: against an API server that streams lists
// (WatchList), client-go's informer takes the Services from one watch
// with sendInitialEvents and never lists; changes arrive on that watch;
// Close ends every goroutine the source started.
func TestKubernetesStreamedList(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	api := kubetest.NewWithOptions(kubetest.Options{WatchList: true})
	api.Put(kubeService("shop", "crm", nil))
	client, err := NewKubeClient(api.Kubeconfig(t.TempDir()), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := NewKubernetes(config.KubernetesSD{Namespaces: []string{"shop"}}, client, t.TempDir())
	waitFor(t, k, "k8s-shop-crm http://crm.shop.svc:8080/mcp")
	api.Put(kubeService("shop", "search", nil))
	api.Delete("shop", "crm")
	waitFor(t, k, "k8s-shop-search http://search.shop.svc:8080/mcp")
	streamed := 0
	for _, r := range api.Requests() {
		if !strings.Contains(r, "watch=true") {
			t.Errorf("a list against a server that streams them: %s", r)
		}
		if strings.Contains(r, "sendInitialEvents=true") {
			streamed++
		}
	}
	if streamed == 0 {
		t.Error("no streamed list")
	}
	if r := api.Rejected(); len(r) > 0 {
		t.Errorf("the API server refused requests: %q", r)
	}
	k.Close()
	api.Close()
	goleak.VerifyNone(t, ignore)
}
