package validate

import (
	"bufio"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// webOf is what the driftd container serves, read from its arguments the
// way driftd reads them: the route prefix (--web.route-prefix, else the
// path of --web.external-url; "" for the root) and the scheme (HTTPS when
// the --web.config.file in the build has a tls_server_config).
func webOf(o *objects, w workload, c *corev1.Container) (prefix string, scheme corev1.URIScheme) {
	var routePrefix, externalURL, webConfig string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--web.route-prefix="); ok {
			routePrefix = v
		}
		if v, ok := strings.CutPrefix(a, "--web.external-url="); ok {
			externalURL = v
		}
		if v, ok := strings.CutPrefix(a, "--web.config.file="); ok {
			webConfig = v
		}
	}
	if routePrefix == "" && externalURL != "" {
		if u, err := url.Parse(externalURL); err == nil {
			routePrefix = u.Path
		}
	}
	if p := strings.Trim(routePrefix, "/"); p != "" {
		prefix = "/" + p
	}
	scheme = corev1.URISchemeHTTP
	if webConfig == "" {
		return prefix, scheme
	}
	data, ok := mountedFile(o, w, c, webConfig)
	if !ok {
		return prefix, scheme
	}
	var wc map[string]any
	if yaml.Unmarshal([]byte(data), &wc) == nil && wc["tls_server_config"] != nil {
		scheme = corev1.URISchemeHTTPS
	}
	return prefix, scheme
}

// mountedFile is the content of file as the container sees it, from a
// ConfigMap or Secret of the build mounted at its directory.
func mountedFile(o *objects, w workload, c *corev1.Container, file string) (string, bool) {
	for _, m := range c.VolumeMounts {
		if path.Dir(file) != path.Clean(m.MountPath) {
			continue
		}
		data := volumeData(o, w, m.Name)
		if v, ok := data[path.Base(file)]; ok {
			return v, true
		}
	}
	return "", false
}

// volumeData is the keys of the ConfigMap or Secret behind the pod's
// volume name, when the build holds it.
func volumeData(o *objects, w workload, name string) map[string]string {
	for _, v := range w.template.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch {
		case v.ConfigMap != nil:
			for _, cm := range o.configMaps {
				if cm.Name == v.ConfigMap.Name {
					return cm.Data
				}
			}
		case v.Secret != nil:
			for _, s := range o.secrets {
				if s.Name == v.Secret.SecretName {
					return secretAsConfigMap(s).Data
				}
			}
		}
	}
	return nil
}

// secretAsConfigMap is a Secret's keys as the files a volume mount shows,
// in a ConfigMap for the checks that read configuration.
func secretAsConfigMap(s *corev1.Secret) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: s.ObjectMeta, Data: map[string]string{}}
	for k, v := range s.Data {
		cm.Data[k] = string(v)
	}
	for k, v := range s.StringData {
		cm.Data[k] = v
	}
	return cm
}

// configCheck runs `driftd config check` on a ConfigMap's driftd.yml,
// written out with its other keys as the kubelet mounts them.
func configCheck(t *testing.T, bin string, cm *corev1.ConfigMap) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return exec.Command(bin, "config", "check", filepath.Join(dir, path.Base(configFile))).CombinedOutput()
}

// A typo inside config: renders (the schema leaves driftd.yml to driftd)
// but fails `driftd config check` on the rendered ConfigMap, which
// TestConfigMapsPassConfigCheck runs on every chart variant: so it fails
// make deploy-check, not the pod.
func TestChartConfigTypoFailsConfigCheck(t *testing.T) {
	bin := driftdBinary(t)
	raw, err := os.ReadFile("testdata/typo-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal(raw, &vals); err != nil {
		t.Fatal(err)
	}
	out, err := renderValues(vals)
	if err != nil {
		t.Fatalf("render with testdata/typo-values.yaml: %v (the typo is driftd's to find, not the schema's)", err)
	}
	o := &objects{kinds: map[string]int{}}
	for _, f := range keys(out) {
		for _, doc := range splitYAML(t, f, out[f]) {
			o.decode(t, f, doc)
		}
	}
	if len(o.configMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want 1", len(o.configMaps))
	}
	msg, err := configCheck(t, bin, o.configMaps[0])
	if err == nil {
		t.Fatalf("driftd config check passed a driftd.yml with a typo:\n%s", o.configMaps[0].Data["driftd.yml"])
	}
	if !strings.Contains(string(msg), "shedule") {
		t.Errorf("driftd config check failed without naming the misspelt key: %s", msg)
	}
}

// The chart's web values against a real daemon: each variant is rendered,
// bin/driftd is started on 127.0.0.1 with the driftd container's own
// arguments and the files its volumes mount, and the rendered liveness and
// readiness probes and the ServiceMonitor's endpoint are followed as the
// kubelet and Prometheus would: path, scheme, the probes without
// credentials, the scrape with the basic-auth Secret's username and
// password (or the TLS Secret's CA). No cluster.
func TestChartWebAgainstDaemon(t *testing.T) {
	bin := driftdBinary(t)
	for _, tc := range []struct {
		values   string
		existing func(t *testing.T) []*corev1.Secret // Secrets the cluster holds beforehand
		prefix   string
		scheme   corev1.URIScheme
		auth     bool
	}{
		{values: "ci/web-auth-values.yaml", prefix: "/driftd", scheme: corev1.URISchemeHTTP, auth: true},
		{values: "ci/exposed-values.yaml", existing: tlsSecret, prefix: "/driftd", scheme: corev1.URISchemeHTTPS},
		{values: "", scheme: corev1.URISchemeHTTP},
	} {
		name := cmp.Or(tc.values, "defaults")
		t.Run(name, func(t *testing.T) {
			o := &objects{kinds: map[string]int{}}
			out := renderChart(t, tc.values)
			for _, f := range keys(out) {
				for _, doc := range splitYAML(t, f, out[f]) {
					o.decode(t, f, doc)
				}
			}
			if tc.existing != nil {
				o.secrets = append(o.secrets, tc.existing(t)...)
			}
			ws := o.workloads()
			if len(ws) != 1 {
				t.Fatalf("%d workloads, want 1", len(ws))
			}
			w := ws[0]
			cs := driftdContainers(&w.template.Spec)
			if len(cs) != 1 {
				t.Fatalf("%d driftd containers, want 1", len(cs))
			}
			c := cs[0]
			live, ready := c.LivenessProbe.HTTPGet, c.ReadinessProbe.HTTPGet
			if live.Path != tc.prefix+"/-/healthy" || ready.Path != tc.prefix+"/-/ready" {
				t.Errorf("probe paths %s, %s: want them under %q", live.Path, ready.Path, tc.prefix)
			}
			if live.Scheme != tc.scheme || ready.Scheme != tc.scheme {
				t.Errorf("probe schemes %s, %s: want %s", live.Scheme, ready.Scheme, tc.scheme)
			}

			addr := startFromPod(t, bin, o, w, c)
			base := strings.ToLower(string(tc.scheme)) + "://" + addr

			// The kubelet: no credentials, and an HTTPS probe does not
			// verify the certificate.
			kubelet := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			waitFor(t, kubelet, base+ready.Path)
			for _, p := range []*corev1.HTTPGetAction{live, ready} {
				if code, _ := get(t, kubelet, base+p.Path, nil); code != http.StatusOK {
					t.Errorf("probe %s: %d, want 200", p.Path, code)
				}
			}

			// Prometheus, as the ServiceMonitor says.
			if len(o.serviceMonitors) == 0 {
				return
			}
			ep := o.serviceMonitors[0].Spec.Endpoints[0]
			scheme := cmp.Or(ep.Scheme.String(), "http")
			if !strings.EqualFold(scheme, string(tc.scheme)) {
				t.Fatalf("ServiceMonitor scheme %s, driftd serves %s", scheme, tc.scheme)
			}
			prom := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: scrapeTLS(t, o, ep)}}
			target := scheme + "://" + addr + ep.Path
			var creds *[2]string
			if ba := ep.BasicAuth; ba != nil {
				creds = &[2]string{secretKey(t, o, ba.Username), secretKey(t, o, ba.Password)}
			}
			if tc.auth != (creds != nil) {
				t.Fatalf("ServiceMonitor basicAuth %+v, want it: %v", ep.BasicAuth, tc.auth)
			}
			code, body := get(t, prom, target, creds)
			if code != http.StatusOK || !strings.Contains(body, "driftd_build_info") {
				t.Errorf("scrape %s: %d, want 200 with driftd_build_info", ep.Path, code)
			}
			if creds != nil {
				if code, _ := get(t, prom, target, nil); code != http.StatusUnauthorized {
					t.Errorf("scrape %s without credentials: %d, want 401", ep.Path, code)
				}
				if code, _ := get(t, prom, target, &[2]string{creds[0], "wrong"}); code != http.StatusUnauthorized {
					t.Errorf("scrape %s with a wrong password: %d, want 401", ep.Path, code)
				}
			}
			if tc.prefix != "" {
				if code, _ := get(t, prom, scheme+"://"+addr+"/metrics", creds); code != http.StatusNotFound {
					t.Errorf("scrape /metrics beside the prefix: %d, want 404 (so the prefix is what is tested)", code)
				}
			}
		})
	}
}

// startFromPod starts bin with the container's arguments on 127.0.0.1:0,
// each mounted ConfigMap or Secret written to a directory of its own and
// each other volume (the state) an empty directory, mount paths in the
// arguments and in the mounted files rewritten to those directories. It
// returns the address driftd reports listening on; the daemon is stopped
// with the test.
func startFromPod(t *testing.T, bin string, o *objects, w workload, c *corev1.Container) string {
	t.Helper()
	root := t.TempDir()
	dirs := map[string]string{} // mount path → local directory
	for i, m := range c.VolumeMounts {
		d := filepath.Join(root, fmt.Sprint(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs[path.Clean(m.MountPath)] = d
	}
	rewrite := func(s string) string {
		// Longest mount paths first: /etc/driftd-web before /etc/driftd.
		mps := keys(dirs)
		slices.SortFunc(mps, func(a, b string) int { return len(b) - len(a) })
		for _, mp := range mps {
			s = strings.ReplaceAll(s, mp, dirs[mp])
		}
		return s
	}
	for _, m := range c.VolumeMounts {
		data := volumeData(o, w, m.Name)
		for k, v := range data {
			if err := os.WriteFile(filepath.Join(dirs[path.Clean(m.MountPath)], k), []byte(rewrite(v)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var args []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--web.listen-address=") {
			a = "--web.listen-address=127.0.0.1:0"
		}
		args = append(args, rewrite(a))
	}
	args = append(args, "--log.format=json")
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	found := make(chan string, 1)
	var logs strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var l struct{ Msg, Address string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" && l.Address != "" {
				select {
				case found <- l.Address:
				default:
				}
			} else if len(logs.String()) < 8192 {
				logs.Write(sc.Bytes())
				logs.WriteByte('\n')
			}
		}
		close(found)
	}()
	select {
	case a, ok := <-found:
		if !ok {
			t.Fatalf("driftd %q exited without listening:\n%s", args, logs.String())
		}
		return a
	case <-time.After(time.Minute):
		t.Fatalf("driftd %q did not report listening within a minute", args)
	}
	return ""
}

// waitFor polls url until it answers 200, for at most a minute: readiness
// follows the first configuration load.
func waitFor(t *testing.T, c *http.Client, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered 200", url)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func get(t *testing.T, c *http.Client, url string, creds *[2]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if creds != nil {
		req.SetBasicAuth(creds[0], creds[1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// secretKey is the value of a key of a Secret the build (or the cluster
// beforehand) holds.
func secretKey(t *testing.T, o *objects, ref corev1.SecretKeySelector) string {
	t.Helper()
	for _, s := range o.secrets {
		if s.Name == ref.Name {
			if v, ok := secretAsConfigMap(s).Data[ref.Key]; ok {
				return v
			}
		}
	}
	t.Fatalf("no Secret %s with key %s", ref.Name, ref.Key)
	return ""
}

// scrapeTLS is the ServiceMonitor endpoint's tlsConfig as Prometheus
// applies it: the CA from its Secret, the server name.
func scrapeTLS(t *testing.T, o *objects, ep monitoringv1.Endpoint) *tls.Config {
	t.Helper()
	tc := ep.TLSConfig
	if tc == nil {
		return nil
	}
	cfg := &tls.Config{}
	if tc.ServerName != nil {
		cfg.ServerName = *tc.ServerName
	}
	if tc.InsecureSkipVerify != nil {
		cfg.InsecureSkipVerify = *tc.InsecureSkipVerify
	}
	if s := tc.CA.Secret; s != nil {
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM([]byte(secretKey(t, o, *s))) {
			t.Fatalf("ServiceMonitor CA %s/%s holds no certificate", s.Name, s.Key)
		}
	}
	return cfg
}

// tlsSecret is the kubernetes.io/tls Secret ci/exposed-values.yaml names,
// as cert-manager makes it: a certificate for driftd.driftd.svc, its key,
// and the CA (here self-signed, so the certificate is its own CA).
func tlsSecret(t *testing.T) []*corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "driftd.driftd.svc"},
		DNSNames:              []string{"driftd.driftd.svc"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return []*corev1.Secret{{
		ObjectMeta: metav1.ObjectMeta{Name: "driftd-tls", Namespace: releaseNamespace},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			"tls.crt": crt,
			"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
			"ca.crt":  crt,
		},
	}}
}
