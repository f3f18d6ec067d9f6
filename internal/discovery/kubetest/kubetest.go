// Package kubetest is an in-process Kubernetes API server for what
// kubernetes_sd reads through client-go: core/v1 Services (list with
// labelSelector, resourceVersion, limit and continue; watch from a
// resourceVersion with bookmarks and timeoutSeconds, and, when asked to,
// streamed lists: sendInitialEvents) and ConfigMaps (get), as JSON over
// HTTPS. It checks every request as the real server would (a
// bearer token or a client certificate, Accept, GET only) and answers in
// the real shapes: Status objects for errors, a watch's ERROR event with
// code 410 for a version older than its history, 422 for a streamed list
// when it does not stream them, 504 for a version newer than its own.
package kubetest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Service is a Service as the test writes it.
type Service struct {
	Namespace, Name string
	Labels          map[string]string
	Annotations     map[string]string
	Ports           []Port
}

// Port is one port of a Service.
type Port struct {
	Name string
	Port int
}

type event struct {
	rv   int
	typ  string
	obj  []byte // the Service's JSON at rv
	ns   string
	lbls map[string]string
}

// Server is a running test API server. Its methods are safe for concurrent
// use.
type Server struct {
	*httptest.Server
	opts Options

	mu         sync.Mutex
	token      string
	rv         int
	services   map[string]event // by namespace/name: the last ADDED or MODIFIED
	history    []event
	oldest     int // the oldest version a watch may start from (history compacted before it)
	configMaps map[string]map[string]string
	failing    bool
	stop       chan struct{} // closed to end every open watch
	requests   []string
	rejected   []string
}

// Options are how a server differs from New's.
type Options struct {
	// ClientCAs makes the server demand a client certificate that one of
	// them signs; a request with one needs no bearer token.
	ClientCAs *x509.CertPool
	// WatchList streams lists: a watch with sendInitialEvents=true gets
	// the current Services as ADDED events and a bookmark that ends them,
	// as API servers with the WatchList feature answer. Without it such a
	// watch is refused (422 Invalid), as by a server without the feature,
	// and client-go lists instead.
	WatchList bool
}

// The token New's server demands.
const defaultToken = "kubetest-token"

// New starts a server that lists rather than streams; Close stops it.
func New() *Server { return NewWithOptions(Options{}) }

// NewWithOptions starts a server; Close stops it. It serves HTTPS with
// httptest's certificate for 127.0.0.1, as API servers serve only HTTPS
// (and client-go sends a kubeconfig's credentials over nothing else).
func NewWithOptions(opts Options) *Server {
	s := &Server{opts: opts, token: defaultToken, services: map[string]event{}, configMaps: map[string]map[string]string{}, stop: make(chan struct{}), rv: 100}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Server.TLS = &tls.Config{}
	s.Server.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what some tests want
	if opts.ClientCAs != nil {
		s.Server.TLS.ClientCAs = opts.ClientCAs
		s.Server.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	}
	s.StartTLS()
	return s
}

// CAPEM is the PEM certificate that verifies the server's.
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// Token is the bearer token every request must carry (unless it has a
// client certificate the server trusts).
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// SetToken changes the token the server demands, as a rotated credential
// does: requests with the old one get 401.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// Kubeconfig writes a kubeconfig naming the server, its CA and its token
// under dir and returns its path.
func (s *Server) Kubeconfig(dir string) string {
	return s.KubeconfigFor(dir, fmt.Sprintf("{token: %q}", s.Token()))
}

// KubeconfigFor writes a kubeconfig naming the server and its CA whose
// user is the YAML flow mapping user, under dir, and returns its path.
// Relative paths in user are relative to dir.
func (s *Server) KubeconfigFor(dir, user string) string {
	file := filepath.Join(dir, "kubeconfig")
	cluster := fmt.Sprintf("{server: %q, certificate-authority-data: %s}", s.URL, base64.StdEncoding.EncodeToString(s.CAPEM()))
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
contexts:
  - name: test
    context: {cluster: test, user: test}
clusters:
  - name: test
    cluster: %s
users:
  - name: test
    user: %s
`, cluster, user)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		panic(err)
	}
	return file
}

func (s *Server) objectJSON(svc Service, rv int) []byte {
	ports := make([]map[string]any, len(svc.Ports))
	for i, p := range svc.Ports {
		ports[i] = map[string]any{"name": p.Name, "port": p.Port, "protocol": "TCP", "targetPort": p.Port}
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"name": svc.Name, "namespace": svc.Namespace, "uid": fmt.Sprintf("uid-%s-%s", svc.Namespace, svc.Name),
			"resourceVersion": strconv.Itoa(rv), "creationTimestamp": "2026-12-01T00:00:00Z",
			"labels": svc.Labels, "annotations": svc.Annotations,
		},
		"spec":   map[string]any{"type": "ClusterIP", "clusterIP": "10.0.0.1", "ports": ports},
		"status": map[string]any{"loadBalancer": map[string]any{}},
	})
	return b
}

// Put creates or replaces a Service.
func (s *Server) Put(svc Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	key := svc.Namespace + "/" + svc.Name
	typ := "MODIFIED"
	if _, ok := s.services[key]; !ok {
		typ = "ADDED"
	}
	ev := event{rv: s.rv, typ: typ, obj: s.objectJSON(svc, s.rv), ns: svc.Namespace, lbls: svc.Labels}
	s.services[key] = ev
	s.history = append(s.history, ev)
}

// Delete deletes a Service.
func (s *Server) Delete(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ns + "/" + name
	old, ok := s.services[key]
	if !ok {
		return
	}
	s.rv++
	delete(s.services, key)
	var obj map[string]any
	_ = json.Unmarshal(old.obj, &obj)
	obj["metadata"].(map[string]any)["resourceVersion"] = strconv.Itoa(s.rv)
	b, _ := json.Marshal(obj)
	s.history = append(s.history, event{rv: s.rv, typ: "DELETED", obj: b, ns: ns, lbls: old.lbls})
}

// PutConfigMap creates or replaces a ConfigMap's data.
func (s *Server) PutConfigMap(ns, name string, data map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.configMaps[ns+"/"+name] = data
}

// Compact forgets the history: a watch from any version before now gets
// 410 Gone, and open watches are ended, so clients list again.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = nil
	s.oldest = s.rv + 1
	close(s.stop)
	s.stop = make(chan struct{})
}

// Fail makes every request answer 503 and ends the open watches, as an
// API server going away does; Fail(false) brings it back.
func (s *Server) Fail(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = on
	if on {
		close(s.stop)
		s.stop = make(chan struct{})
	}
}

// Requests is every request's method, path and query, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Rejected is every request the server refused as malformed, with why.
func (s *Server) Rejected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rejected)
}

// tooLarge is the API server's answer to a resourceVersion newer than its
// own: 504 with the cause client-go recognises.
func tooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusGatewayTimeout)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": "Too large resource version", "reason": "Timeout", "code": http.StatusGatewayTimeout,
		"details": map[string]any{"causes": []map[string]any{{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}}, "retryAfterSeconds": 1}})
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure", "message": msg, "reason": reason, "code": code})
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, code int, reason, why string) {
	s.mu.Lock()
	s.rejected = append(s.rejected, r.Method+" "+r.URL.String()+": "+why)
	s.mu.Unlock()
	status(w, code, reason, why)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	failing := s.failing
	token := s.token
	// A request let in before Fail or Compact ends with them: it takes the
	// stop they close now, under the lock that decided it may run.
	stop := s.stop
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodGet:
		s.reject(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed", "driftd only reads")
		return
	case r.Header.Get("Authorization") != "Bearer "+token && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0):
		s.reject(w, r, http.StatusUnauthorized, "Unauthorized", "no or wrong bearer token, and no client certificate")
		return
	case !strings.Contains(r.Header.Get("Accept"), "application/json"):
		s.reject(w, r, http.StatusNotAcceptable, "NotAcceptable", "Accept must name application/json")
		return
	case !strings.HasPrefix(r.UserAgent(), "driftd/"):
		s.reject(w, r, http.StatusBadRequest, "BadRequest", "User-Agent is not driftd's")
		return
	case failing:
		status(w, http.StatusServiceUnavailable, "ServiceUnavailable", "the API server is going away")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 3 && parts[0] == "api" && parts[1] == "v1" && parts[2] == "services":
		s.listOrWatch(w, r, "", stop)
	case len(parts) == 5 && parts[0] == "api" && parts[1] == "v1" && parts[2] == "namespaces" && parts[4] == "services":
		s.listOrWatch(w, r, parts[3], stop)
	case len(parts) == 6 && parts[0] == "api" && parts[1] == "v1" && parts[2] == "namespaces" && parts[4] == "configmaps":
		s.mu.Lock()
		data, ok := s.configMaps[parts[3]+"/"+parts[5]]
		s.mu.Unlock()
		if !ok {
			status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("configmaps %q not found", parts[5]))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": parts[5], "namespace": parts[3]}, "data": data})
	default:
		s.reject(w, r, http.StatusNotFound, "NotFound", "not a path kubernetes_sd reads")
	}
}

// selects reports whether labels match selector: comma-separated
// key=value (or key==value) terms, all of which must hold.
func selects(selector string, labels map[string]string) (bool, error) {
	if selector == "" {
		return true, nil
	}
	for _, term := range strings.Split(selector, ",") {
		k, v, ok := strings.Cut(term, "=")
		if !ok {
			return false, fmt.Errorf("kubetest supports key=value selectors only, not %q", term)
		}
		v = strings.TrimPrefix(v, "=")
		if labels[k] != v {
			return false, nil
		}
	}
	return true, nil
}

func (s *Server) listOrWatch(w http.ResponseWriter, r *http.Request, ns string, stop <-chan struct{}) {
	q := r.URL.Query()
	selector := q.Get("labelSelector")
	if _, err := selects(selector, nil); err != nil {
		s.reject(w, r, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	if q.Get("watch") == "1" || q.Get("watch") == "true" {
		s.watch(w, r, ns, selector, stop)
		return
	}
	s.mu.Lock()
	rv := s.rv
	// The server keeps the newest state only: a list is at least as new as
	// any version it knows ("", "0" or older: now), never from the future.
	if v := q.Get("resourceVersion"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			s.mu.Unlock()
			s.reject(w, r, http.StatusBadRequest, "BadRequest", "resourceVersion is not a number")
			return
		case n > rv:
			s.mu.Unlock()
			tooLarge(w)
			return
		case q.Get("resourceVersionMatch") == "Exact" && n != rv:
			s.mu.Unlock()
			status(w, http.StatusGone, "Expired", "too old resource version")
			return
		}
	}
	var keys []string
	for k, ev := range s.services {
		if ok, _ := selects(selector, ev.lbls); ok && (ns == "" || ev.ns == ns) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	from := 0
	if c := q.Get("continue"); c != "" {
		// The continue token is the key to start after, at the list's version.
		after, at, _ := strings.Cut(c, "@")
		if at != strconv.Itoa(rv) {
			s.mu.Unlock()
			status(w, http.StatusGone, "Expired", "the continue token is stale")
			return
		}
		from = len(keys)
		for i, k := range keys {
			if k > after {
				from = i
				break
			}
		}
	}
	limit := len(keys)
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 {
		limit = l
	}
	end := min(len(keys), from+limit)
	items := make([]json.RawMessage, 0, end-from)
	for _, k := range keys[from:end] {
		items = append(items, s.services[k].obj)
	}
	s.mu.Unlock()
	meta := map[string]any{"resourceVersion": strconv.Itoa(rv)}
	if end < len(keys) {
		meta["continue"] = keys[end-1] + "@" + strconv.Itoa(rv)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "ServiceList", "metadata": meta, "items": items})
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, ns, selector string, stop <-chan struct{}) {
	q := r.URL.Query()
	var initial []event // a streamed list's Services, before the watch's events
	var rv int
	if q.Get("sendInitialEvents") == "true" {
		if !s.opts.WatchList {
			status(w, http.StatusUnprocessableEntity, "Invalid", "ListOptions.meta.k8s.io is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")
			return
		}
		if q.Get("resourceVersionMatch") != "NotOlderThan" {
			s.reject(w, r, http.StatusBadRequest, "BadRequest", "sendInitialEvents needs resourceVersionMatch=NotOlderThan")
			return
		}
		s.mu.Lock()
		rv = s.rv
		for _, ev := range s.services {
			if ok, _ := selects(selector, ev.lbls); ok && (ns == "" || ev.ns == ns) {
				initial = append(initial, ev)
			}
		}
		s.mu.Unlock()
		slices.SortFunc(initial, func(a, b event) int { return a.rv - b.rv })
	} else {
		var err error
		if rv, err = strconv.Atoi(q.Get("resourceVersion")); err != nil {
			s.reject(w, r, http.StatusBadRequest, "BadRequest", "a watch must start from the list's resourceVersion")
			return
		}
	}
	timeout := time.Hour
	if t, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && t > 0 {
		timeout = time.Duration(t) * time.Second
	}
	bookmarks := q.Get("allowWatchBookmarks") == "true"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	if q.Get("sendInitialEvents") == "true" {
		for _, ev := range initial {
			enc.Encode(map[string]any{"type": "ADDED", "object": json.RawMessage(ev.obj)})
		}
		enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{"kind": "Service", "apiVersion": "v1", "metadata": map[string]any{
			"resourceVersion": strconv.Itoa(rv), "annotations": map[string]string{"k8s.io/initial-events-end": "true"}}}})
	}
	for {
		s.mu.Lock()
		if rv < s.oldest-1 {
			s.mu.Unlock()
			enc.Encode(map[string]any{"type": "ERROR", "object": map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": http.StatusGone, "message": "too old resource version"}})
			return
		}
		var send []event
		for _, ev := range s.history {
			if ev.rv > rv {
				if ok, _ := selects(selector, ev.lbls); ok && (ns == "" || ev.ns == ns) {
					send = append(send, ev)
				}
			}
		}
		latest := s.rv
		s.mu.Unlock()
		for _, ev := range send {
			enc.Encode(map[string]any{"type": ev.typ, "object": json.RawMessage(ev.obj)})
			rv = ev.rv
		}
		if bookmarks && latest > rv {
			rv = latest
			enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{"kind": "Service", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": strconv.Itoa(rv)}}})
		}
		if fl != nil {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-stop:
			return
		case <-deadline:
			return
		case <-tick.C:
		}
	}
}
