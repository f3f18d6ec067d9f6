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
	"io"
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

	"github.com/driftd/driftd/internal/mcp"
)

// KubeClient reads Services (list and watch) and ConfigMaps (get) from the
// Kubernetes API: plain HTTP and JSON against /api/v1, which is all
// kubernetes_sd needs. It is driftd's own rather than client-go's, whose
// packages' start-up work every driftd process paid, `driftd check`
// included (docs/discovery.md, issue 15).
type KubeClient struct {
	server string // scheme://host[:port], no trailing slash
	hc     *http.Client
	// auth sets the request's credentials; nil sends none.
	auth func(*http.Request) error
	// plugin is the kubeconfig's credential plugin, told of a 401.
	plugin    *execPlugin
	userAgent string
}

// Paths of the in-cluster service account, mounted by the kubelet.
const (
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	// maxKubeBody bounds one list page or ConfigMap read from the API.
	maxKubeBody = 64 << 20
	// listPageSize is the limit of one list request; continue tokens fetch
	// the rest.
	listPageSize = 500
	// listPageTimeout bounds one list request, body included.
	listPageTimeout = time.Minute
)

// NewKubeClient is a client from the kubeconfig file (empty: the
// in-cluster service account).
func NewKubeClient(kubeconfig, version string) (*KubeClient, error) {
	var c *KubeClient
	var err error
	if kubeconfig == "" {
		c, err = inCluster(serviceAccountDir, os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	} else {
		c, err = fromKubeconfig(kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	c.userAgent = "driftd/" + version
	return c, nil
}

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
	CurrentContext string `yaml:"current-context"`
	Contexts       []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
			TLSServerName            string `yaml:"tls-server-name"`
			ProxyURL                 string `yaml:"proxy-url"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string   `yaml:"name"`
		User kubeUser `yaml:"user"`
	} `yaml:"users"`
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
	ci := -1
	for i, c := range kc.Contexts {
		if c.Name == ctxName {
			ci = i
		}
	}
	if ci < 0 {
		return nil, fmt.Errorf("%s: current-context %q is not among its contexts", file, ctxName)
	}
	want := kc.Contexts[ci].Context
	clusterIdx, userIdx := -1, -1
	for i, c := range kc.Clusters {
		if c.Name == want.Cluster {
			clusterIdx = i
		}
	}
	for i, u := range kc.Users {
		if u.Name == want.User {
			userIdx = i
		}
	}
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

// kubeMeta is the part of an object's or a list's metadata driftd reads.
type kubeMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	ResourceVersion string            `json:"resourceVersion"`
	Annotations     map[string]string `json:"annotations"`
	Continue        string            `json:"continue"`
}

// Service is the part of a core/v1 Service kubernetes_sd reads.
type Service struct {
	Metadata kubeMeta `json:"metadata"`
	Spec     struct {
		Ports []ServicePort `json:"ports"`
	} `json:"spec"`
}

// ServicePort is one port of a Service.
type ServicePort struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

type serviceList struct {
	Metadata kubeMeta  `json:"metadata"`
	Items    []Service `json:"items"`
}

// kubeStatus is a metav1.Status: an API error, or a watch's ERROR event.
type kubeStatus struct {
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// StatusError is an API request the server refused.
type StatusError struct {
	Method, Path string
	Code         int
	Reason       string // the Status's reason (Forbidden, Expired, …), if it sent one
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s %s: status %d", e.Method, e.Path, e.Code)
	if e.Reason != "" {
		s += " " + e.Reason
	}
	return s
}

// gone reports whether err says the resource version is too old (410):
// list again.
func gone(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusGone
}

// servicesPath is the Services collection of ns (every namespace when "").
func servicesPath(ns string) string {
	if ns == "" {
		return "/api/v1/services"
	}
	return "/api/v1/namespaces/" + url.PathEscape(ns) + "/services"
}

// do sends GET path?q and returns the response when it is 200; its body
// is the caller's to close.
func (c *KubeClient) do(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	u := c.server + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &Error{Reason: mcp.ReasonConfig, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.auth != nil {
		if err := c.auth(req); err != nil {
			return nil, &Error{Reason: mcp.ReasonConfig, Err: err}
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &Error{Reason: mcp.Classify(err), Err: err}
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	se := &StatusError{Method: http.MethodGet, Path: path, Code: resp.StatusCode}
	var st kubeStatus
	if b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); err == nil && json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
		se.Reason = printableWord(st.Reason)
	}
	if resp.StatusCode == http.StatusUnauthorized && c.plugin != nil {
		c.plugin.unauthorized()
	}
	reason := mcp.ReasonHTTPStatus
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		reason = mcp.ReasonAuthRequired
	}
	return nil, &Error{Reason: reason, Err: se}
}

// printableWord keeps a Status reason only when it is a short word: it is
// the server's text.
func printableWord(s string) string {
	if len(s) > 64 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return s
}

// getJSON decodes the 200 answer to GET path?q into v, at most maxKubeBody.
func (c *KubeClient) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	resp, err := c.do(ctx, path, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxKubeBody+1))
	if err != nil {
		return &Error{Reason: mcp.Classify(err), Err: fmt.Errorf("GET %s: %w", path, err)}
	}
	if len(b) > maxKubeBody {
		return &Error{Reason: mcp.ReasonResponseTooLarge, Err: fmt.Errorf("GET %s: larger than %d bytes", path, maxKubeBody)}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Error{Reason: mcp.ReasonInvalidResponse, Err: fmt.Errorf("GET %s: not the expected JSON", path)}
	}
	return nil
}

// ListServices lists the Services of ns ("": every namespace) matching
// selector, following continue tokens, and returns them with the list's
// resource version, where a watch starts.
func (c *KubeClient) ListServices(ctx context.Context, ns, selector string) ([]Service, string, error) {
	var out []Service
	q := url.Values{"limit": {fmt.Sprint(listPageSize)}}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	for {
		var l serviceList
		// A page that never finishes arriving is given up, so a stalled
		// API server fails the list (and the refresh) instead of hanging it.
		pctx, cancel := context.WithTimeout(ctx, listPageTimeout)
		err := c.getJSON(pctx, servicesPath(ns), q, &l)
		cancel()
		if err != nil {
			return nil, "", err
		}
		out = append(out, l.Items...)
		if l.Metadata.Continue == "" {
			return out, l.Metadata.ResourceVersion, nil
		}
		q.Set("continue", l.Metadata.Continue)
	}
}

// WatchEvent is one event of a Services watch.
type WatchEvent struct {
	Type    string // ADDED, MODIFIED, DELETED, BOOKMARK
	Service Service
}

// watchTimeout is how long one watch request lasts before the server ends
// it and the watch starts again from the last resource version.
const watchTimeout = 5 * time.Minute

// WatchServices watches the Services of ns matching selector from
// resource version rv, calling fn for every event, until the server ends
// the watch (nil), ctx ends, or the stream fails. A 410 (the version is
// too old) is a *StatusError for which gone is true: list again.
func (c *KubeClient) WatchServices(ctx context.Context, ns, selector, rv string, fn func(WatchEvent)) error {
	q := url.Values{
		"watch":               {"1"},
		"resourceVersion":     {rv},
		"allowWatchBookmarks": {"true"},
		"timeoutSeconds":      {fmt.Sprint(int(watchTimeout.Seconds()))},
	}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	// The server ends the watch at timeoutSeconds; a peer that went silent
	// without closing is given up a minute after.
	ctx, cancel := context.WithTimeout(ctx, watchTimeout+time.Minute)
	defer cancel()
	resp, err := c.do(ctx, servicesPath(ns), q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lr := &eventLimit{r: resp.Body}
	dec := json.NewDecoder(lr)
	for {
		lr.mark = dec.InputOffset()
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if ctx.Err() != nil {
				return &Error{Reason: mcp.ReasonTimeout, Err: fmt.Errorf("watching %s: %w", servicesPath(ns), ctx.Err())}
			}
			reason := mcp.Classify(err)
			if errors.Is(err, errEventTooLarge) {
				reason = mcp.ReasonResponseTooLarge
			}
			return &Error{Reason: reason, Err: fmt.Errorf("watching %s: %w", servicesPath(ns), err)}
		}
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED", "BOOKMARK":
			var svc Service
			if err := json.Unmarshal(ev.Object, &svc); err != nil {
				return &Error{Reason: mcp.ReasonInvalidResponse, Err: fmt.Errorf("watching %s: an event that is not a Service", servicesPath(ns))}
			}
			fn(WatchEvent{Type: ev.Type, Service: svc})
		case "ERROR":
			var st kubeStatus
			_ = json.Unmarshal(ev.Object, &st)
			return &Error{Reason: mcp.ReasonHTTPStatus, Err: &StatusError{Method: http.MethodGet, Path: servicesPath(ns), Code: st.Code, Reason: printableWord(st.Reason)}}
		default:
			return &Error{Reason: mcp.ReasonInvalidResponse, Err: fmt.Errorf("watching %s: an event of unknown type", servicesPath(ns))}
		}
	}
}

// eventLimit fails a watch stream once it has read maxKubeBody past the
// end of the last whole event (mark): the decoder would otherwise buffer
// an endless event whole.
type eventLimit struct {
	r          io.Reader
	read, mark int64
}

var errEventTooLarge = fmt.Errorf("a watch event larger than %d bytes", maxKubeBody)

func (l *eventLimit) Read(p []byte) (int, error) {
	if l.read-l.mark > maxKubeBody {
		return 0, errEventTooLarge
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}

// ConfigMapData is the data of ConfigMap name in ns.
func (c *KubeClient) ConfigMapData(ctx context.Context, ns, name string) (map[string]string, error) {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	path := "/api/v1/namespaces/" + url.PathEscape(ns) + "/configmaps/" + url.PathEscape(name)
	if err := c.getJSON(ctx, path, nil, &cm); err != nil {
		return nil, err
	}
	return cm.Data, nil
}
