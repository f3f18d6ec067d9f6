package discovery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// How KubeClient authenticates and reaches the API: the in-cluster
// service account or a kubeconfig's current context.

// inCluster is the client of the pod's service account: the API server
// from the environment the kubelet sets, its CA and a token file that is
// read again for every request (bound tokens rotate).
func inCluster(dir, host, port string) (*KubeClient, error) {
	if host == "" || port == "" {
		return nil, errors.New("not in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset) and no kubeconfig given")
	}
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12}
	if err := addCA(tlsc, filepath.Join(dir, "ca.crt"), nil); err != nil {
		return nil, err
	}
	c := &KubeClient{server: "https://" + net.JoinHostPort(host, port), hc: newKubeHTTP(tlsc, nil)}
	c.auth = bearerFile(filepath.Join(dir, "token"))
	return c, nil
}

// kubeconfig is the part of a kubeconfig file driftd reads.
type kubeconfig struct {
	CurrentContext string          `yaml:"current-context"`
	Contexts       []kubeContext   `yaml:"contexts"`
	Clusters       []kubeCluster   `yaml:"clusters"`
	Users          []kubeNamedUser `yaml:"users"`
}

// lastNamed is the index of the last item named want, -1 for none: as
// kubectl reads a kubeconfig, a later entry of a name replaces an earlier.
func lastNamed[T any](items []T, want string, name func(T) string) int {
	for i := len(items) - 1; i >= 0; i-- {
		if name(items[i]) == want {
			return i
		}
	}
	return -1
}

type kubeContext struct {
	Name    string `yaml:"name"`
	Context struct {
		Cluster string `yaml:"cluster"`
		User    string `yaml:"user"`
	} `yaml:"context"`
}

type kubeCluster struct {
	Name    string `yaml:"name"`
	Cluster struct {
		Server                   string `yaml:"server"`
		CertificateAuthority     string `yaml:"certificate-authority"`
		CertificateAuthorityData string `yaml:"certificate-authority-data"`
		InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		TLSServerName            string `yaml:"tls-server-name"`
		ProxyURL                 string `yaml:"proxy-url"`
	} `yaml:"cluster"`
}

type kubeNamedUser struct {
	Name string   `yaml:"name"`
	User kubeUser `yaml:"user"`
}

type kubeUser struct {
	Token                 string    `yaml:"token"`
	TokenFile             string    `yaml:"tokenFile"`
	ClientCertificate     string    `yaml:"client-certificate"`
	ClientCertificateData string    `yaml:"client-certificate-data"`
	ClientKey             string    `yaml:"client-key"`
	ClientKeyData         string    `yaml:"client-key-data"`
	Username              string    `yaml:"username"`
	Password              string    `yaml:"password"`
	Exec                  *kubeExec `yaml:"exec"`
	AuthProvider          *struct {
		Name string `yaml:"name"`
	} `yaml:"auth-provider"`
}

// kubeExec is a credential plugin (client.authentication.k8s.io).
type kubeExec struct {
	Command    string   `yaml:"command"`
	Args       []string `yaml:"args"`
	APIVersion string   `yaml:"apiVersion"`
	Env        []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
}

// fromKubeconfig is the client of the kubeconfig's current context:
// server, CA, TLS server name, proxy, and a token, token file, client
// certificate, basic credentials or exec plugin. Relative paths in the
// file are relative to its directory, as kubectl reads them.
func fromKubeconfig(file string) (*KubeClient, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	dir := filepath.Dir(file)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	ctxName := kc.CurrentContext
	ci := lastNamed(kc.Contexts, ctxName, func(c kubeContext) string { return c.Name })
	if ci < 0 {
		return nil, fmt.Errorf("%s: current-context %q is not among its contexts", file, ctxName)
	}
	want := kc.Contexts[ci].Context
	clusterIdx := lastNamed(kc.Clusters, want.Cluster, func(c kubeCluster) string { return c.Name })
	userIdx := lastNamed(kc.Users, want.User, func(u kubeNamedUser) string { return u.Name })
	if clusterIdx < 0 {
		return nil, fmt.Errorf("%s: context %q names cluster %q, which it does not define", file, ctxName, want.Cluster)
	}
	cluster := kc.Clusters[clusterIdx].Cluster
	u, err := url.Parse(cluster.Server)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s: cluster %q: server %q is not an http:// or https:// URL", file, want.Cluster, cluster.Server)
	}
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cluster.TLSServerName, InsecureSkipVerify: cluster.InsecureSkipTLSVerify}
	if cluster.CertificateAuthority != "" || cluster.CertificateAuthorityData != "" {
		data, err := decodeData(cluster.CertificateAuthorityData, "certificate-authority-data")
		if err != nil {
			return nil, fmt.Errorf("%s: cluster %q: %w", file, want.Cluster, err)
		}
		if err := addCA(tlsc, rel(cluster.CertificateAuthority), data); err != nil {
			return nil, fmt.Errorf("%s: cluster %q: %w", file, want.Cluster, err)
		}
	}
	var proxy func(*http.Request) (*url.URL, error)
	if cluster.ProxyURL != "" {
		pu, err := url.Parse(cluster.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("%s: cluster %q: proxy-url: %w", file, want.Cluster, err)
		}
		proxy = http.ProxyURL(pu)
	}
	c := &KubeClient{server: u.Scheme + "://" + u.Host + strings.TrimRight(u.Path, "/")}
	if userIdx >= 0 {
		user := kc.Users[userIdx].User
		if err := c.setUser(user, rel, tlsc); err != nil {
			return nil, fmt.Errorf("%s: user %q: %w", file, want.User, err)
		}
	}
	c.hc = newKubeHTTP(tlsc, proxy)
	return c, nil
}

// setUser sets the credentials of user on c and tlsc.
func (c *KubeClient) setUser(user kubeUser, rel func(string) string, tlsc *tls.Config) error {
	switch {
	case user.AuthProvider != nil:
		return fmt.Errorf("auth-provider %q is not supported: use a token, a client certificate or an exec plugin", user.AuthProvider.Name)
	case user.Exec != nil:
		if user.Exec.Command == "" {
			return errors.New("exec: no command")
		}
		p := &execPlugin{cfg: *user.Exec}
		if strings.ContainsRune(p.cfg.Command, filepath.Separator) {
			p.cfg.Command = rel(p.cfg.Command) // as kubectl: relative to the kubeconfig
		}
		c.auth, c.plugin = p.authorize, p
		tlsc.GetClientCertificate = p.clientCertificate
	case user.Token != "":
		token := user.Token
		c.auth = func(r *http.Request) error { r.Header.Set("Authorization", "Bearer "+token); return nil }
	case user.TokenFile != "":
		c.auth = bearerFile(rel(user.TokenFile))
	case user.Username != "":
		name, pass := user.Username, user.Password
		c.auth = func(r *http.Request) error { r.SetBasicAuth(name, pass); return nil }
	}
	if user.ClientCertificate != "" || user.ClientCertificateData != "" {
		certPEM, err := fileOrData(rel(user.ClientCertificate), user.ClientCertificateData, "client-certificate")
		if err != nil {
			return err
		}
		keyPEM, err := fileOrData(rel(user.ClientKey), user.ClientKeyData, "client-key")
		if err != nil {
			return err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("client certificate: %w", err)
		}
		tlsc.Certificates = []tls.Certificate{cert}
	}
	return nil
}

// newKubeHTTP is the HTTP client of the API: its own transport (proxy from
// the environment unless the kubeconfig names one) and no overall timeout,
// since a watch is a long request; requests carry their own contexts.
func newKubeHTTP(tlsc *tls.Config, proxy func(*http.Request) (*url.URL, error)) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsc
	if proxy != nil {
		tr.Proxy = proxy
	}
	tr.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // the API server does not redirect; a proxy that does is wrong
		},
	}
}

func decodeData(s, field string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64: %w", field, err)
	}
	return b, nil
}

func fileOrData(file, data, field string) ([]byte, error) {
	if data != "" {
		return decodeData(data, field+"-data")
	}
	if file == "" {
		return nil, fmt.Errorf("%s: neither a file nor data", field)
	}
	return os.ReadFile(file)
}

// addCA trusts the PEM certificates of file (if named) and data.
func addCA(tlsc *tls.Config, file string, data []byte) error {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		data = append(append([]byte{}, data...), b...)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return errors.New("the certificate authority holds no PEM certificate")
	}
	tlsc.RootCAs = pool
	return nil
}

// bearerFile sends the token in file, read for every request, so a
// rotated token is used as soon as it is written.
func bearerFile(file string) func(*http.Request) error {
	return func(r *http.Request) error {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		r.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(b)))
		return nil
	}
}

// execPlugin runs a kubeconfig's credential plugin and keeps what it
// returned until it expires, or until the API server answers 401.
type execPlugin struct {
	cfg kubeExec

	mu      sync.Mutex
	token   string
	cert    *tls.Certificate
	expires time.Time // zero: until a 401
}

// execCredential is the plugin's answer (client.authentication.k8s.io
// ExecCredential).
type execCredential struct {
	Status struct {
		Token                 string    `json:"token"`
		ClientCertificateData string    `json:"clientCertificateData"`
		ClientKeyData         string    `json:"clientKeyData"`
		ExpirationTimestamp   time.Time `json:"expirationTimestamp"`
	} `json:"status"`
}

// execTimeout bounds one run of a credential plugin.
const execTimeout = 30 * time.Second

func (p *execPlugin) refresh() error {
	if p.token != "" || p.cert != nil {
		if p.expires.IsZero() || time.Now().Before(p.expires) {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.cfg.Command, p.cfg.Args...)
	cmd.Env = os.Environ()
	for _, e := range p.cfg.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	apiVersion := p.cfg.APIVersion
	if apiVersion == "" {
		apiVersion = "client.authentication.k8s.io/v1"
	}
	info, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": "ExecCredential", "spec": map[string]any{"interactive": false}})
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(info))
	var stdout bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &stdout, left: 1 << 20}
	if err := cmd.Run(); err != nil {
		// The plugin's output may hold a credential: only its exit.
		return fmt.Errorf("exec plugin %s: %w", filepath.Base(p.cfg.Command), err)
	}
	var cred execCredential
	if err := json.Unmarshal(stdout.Bytes(), &cred); err != nil {
		return fmt.Errorf("exec plugin %s: its output is not an ExecCredential", filepath.Base(p.cfg.Command))
	}
	s := cred.Status
	p.token, p.cert, p.expires = s.Token, nil, s.ExpirationTimestamp
	if s.ClientCertificateData != "" {
		cert, err := tls.X509KeyPair([]byte(s.ClientCertificateData), []byte(s.ClientKeyData))
		if err != nil {
			return fmt.Errorf("exec plugin %s: client certificate: %w", filepath.Base(p.cfg.Command), err)
		}
		p.cert = &cert
	}
	if p.token == "" && p.cert == nil {
		return fmt.Errorf("exec plugin %s returned neither a token nor a client certificate", filepath.Base(p.cfg.Command))
	}
	return nil
}

func (p *execPlugin) authorize(r *http.Request) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return err
	}
	if p.token != "" {
		r.Header.Set("Authorization", "Bearer "+p.token)
	}
	return nil
}

func (p *execPlugin) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return nil, err
	}
	if p.cert == nil {
		return &tls.Certificate{}, nil // none: the server decides
	}
	return p.cert, nil
}

// unauthorized forgets what the plugin returned, after a 401.
func (p *execPlugin) unauthorized() {
	p.mu.Lock()
	p.token, p.cert = "", nil
	p.mu.Unlock()
}

// limitedBuffer keeps at most left bytes and fails the writer past them.
type limitedBuffer struct {
	buf  *bytes.Buffer
	left int
}

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if len(b) > l.left {
		return 0, errors.New("output larger than 1 MiB")
	}
	l.left -= len(b)
	return l.buf.Write(b)
}
