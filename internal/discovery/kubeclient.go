package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

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

// key is the Service's namespace/name.
func (s *Service) key() string { return s.Metadata.Namespace + "/" + s.Metadata.Name }

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
// Its message is the server's prose and is never read.
type kubeStatus struct {
	Kind   string `json:"kind"`
	Code   int    `json:"code"`
	Reason string `json:"reason"`
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
