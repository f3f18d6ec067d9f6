// Package web is driftd's HTTP surface: /metrics, the lifecycle endpoints,
// the JSON API and server-rendered status pages.
package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

// Errors a Source returns for the API to map to status codes.
var (
	ErrUnknownTarget  = errors.New("unknown target")
	ErrAlreadyRunning = errors.New("a run of this target is in progress")
	ErrNotBaseline    = errors.New("the target is compared against a manifest, not a baseline (baseline: first_seen)")
	ErrNoBaseline     = errors.New("no baseline recorded yet: the target has not had a successful run")
)

// TargetStatus is one row of /api/v1/targets and of the status page: the
// target's configuration, its last run, and its status (health, drift,
// active finding counts), which state.Run.Status computes for every
// surface alike.
type TargetStatus struct {
	Name string `json:"name"`
	// Origin is where the target comes from: config, file:PATH,
	// kubernetes:NAMESPACE/SERVICE or registry:URL (docs/discovery.md).
	Origin         string      `json:"origin"`
	URL            string      `json:"url"`
	Classification string      `json:"classification"`
	Schedule       string      `json:"schedule"`
	NextRun        *time.Time  `json:"next_run"`
	Running        bool        `json:"running"`
	LastRun        *RunSummary `json:"last_run"`
	state.Status
	Labels map[string]string `json:"labels,omitempty"`
	// ManifestError is set while the target's manifest file cannot be
	// read or parsed and its runs compare against the last good version
	// (docs/daemon.md): why.
	ManifestError string `json:"manifest_error,omitempty"`
}

// ConfigStatus is what every status page says about the configuration:
// while the last reload was refused, when and why; the previous
// configuration keeps running meanwhile.
type ConfigStatus struct {
	ReloadFailedAt time.Time
	// ReloadProblems are the reload's problems, one a line, each
	// FILE:LINE: FIELD: message where it has a place in the file.
	ReloadProblems []string
}

// Failed reports whether the last reload was refused.
func (c ConfigStatus) Failed() bool { return !c.ReloadFailedAt.IsZero() }

// RunSummary is the outcome of a target's last run.
type RunSummary struct {
	StartedAt       time.Time `json:"started_at"`
	Success         bool      `json:"success"`
	FailureReason   string    `json:"failure_reason"`
	DurationSeconds float64   `json:"duration_seconds"`
}

// Rejected is a discovered target that is not probed: the source that
// found it and why it was left out.
type Rejected struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Source is what the web surface reads and triggers; the daemon implements it.
type Source interface {
	Ready() bool
	Targets() []TargetStatus
	Target(name string) (TargetStatus, bool)
	// Run returns a target's published outcome, read as it is: its report
	// (nil before the first run) and its state. false means the target is
	// not configured.
	Run(name string) (*state.Run, bool)
	// History returns a target's change history, newest last, as kept on
	// disk with the events not yet written; ErrUnknownTarget for a target
	// not configured.
	History(name string) ([]state.Event, error)
	Logs(name string) []string
	// Rejected lists the discovered targets that are not probed, and why
	// (docs/discovery.md).
	Rejected() []Rejected
	// Served returns the served set as last recorded (the state's
	// snapshot), Declared the target's manifest.
	Served(name string) ([]mcp.Tool, error)
	Declared(name string) (*manifest.Manifest, error)
	ConfigYAML() ([]byte, error)
	// ConfigStatus says whether the last reload was refused, and why.
	ConfigStatus() ConfigStatus
	Reload() error
	Probe(name string) error
	// AcceptBaseline records an accept of a baseline-mode target's
	// served surface, bound to its digest (baseline.go), and starts a
	// run; Baseline returns the recorded baseline. ErrNotBaseline for a
	// target with a manifest, ErrNoBaseline before the first successful
	// run, *DigestError for a digest that is not the served one.
	AcceptBaseline(name string, req AcceptRequest) (*state.Accept, error)
	Baseline(name string) (*state.Baseline, error)
}

// Options configure the handler.
type Options struct {
	EnableLifecycle bool
	// Metrics serves /metrics.
	Metrics http.Handler
	// RoutePrefix is the path every endpoint is served under
	// (--web.route-prefix), "/" or "" for the root; the caller strips it
	// from requests (Handler), the pages put it in every link.
	RoutePrefix string
	Version     string
	// MaxSchemaViews bounds the side-by-side schema views rendered at
	// once; past it a view answers 503. 0 is DefaultMaxSchemaViews.
	MaxSchemaViews int
}

// New returns the handler for every endpoint of DESIGN §11.
func New(src Source, opts Options) http.Handler {
	if opts.MaxSchemaViews <= 0 {
		opts.MaxSchemaViews = DefaultMaxSchemaViews
	}
	h := &handler{src: src, opts: opts, views: make(chan struct{}, opts.MaxSchemaViews)}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", opts.Metrics)
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "OK\n") })
	mux.HandleFunc("GET /-/ready", h.ready)
	mux.HandleFunc("POST /-/reload", h.lifecycle(h.reload))
	mux.HandleFunc("GET /api/v1/targets", func(w http.ResponseWriter, _ *http.Request) {
		targets := src.Targets()
		if targets == nil {
			targets = []TargetStatus{} // "data": [], not null
		}
		apiOK(w, http.StatusOK, targets)
	})
	mux.HandleFunc("GET /api/v1/targets/{name}", h.report)
	mux.HandleFunc("GET /api/v1/targets/{name}/history", h.history)
	mux.HandleFunc("POST /api/v1/targets/{name}/probe", h.lifecycle(h.probe))
	mux.HandleFunc("GET /api/v1/targets/{name}/manifest", h.manifestDownload)
	mux.HandleFunc("GET /api/v1/targets/{name}/baseline", h.baselineDownload)
	mux.HandleFunc("POST /api/v1/targets/{name}/baseline", h.lifecycle(h.baselineAccept))
	mux.HandleFunc("GET /targets/{name}/schema", h.schemaView)
	mux.HandleFunc("GET /api/v1/rules", func(w http.ResponseWriter, _ *http.Request) { apiOK(w, http.StatusOK, catalogue.Catalogue()) })
	mux.HandleFunc("GET /rules", h.rulesPage)
	mux.HandleFunc("GET /config", h.config)
	mux.HandleFunc("GET /{$}", h.index)
	mux.HandleFunc("GET /targets/{name}", h.targetPage)
	// Go's profiler, as Prometheus and Alertmanager serve it: how an
	// operator sees where a daemon's CPU and memory go (docs/daemon.md).
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	// The pages' icon: a browser asks for one, and a 404 is a console error.
	for _, path := range []string{"GET /favicon.svg", "GET /favicon.ico"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "image/svg+xml")
			w.Header().Set("Cache-Control", "max-age=86400")
			_, _ = w.Write([]byte(faviconSVG))
		})
	}
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write([]byte(styleCSS))
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write(appJS)
	})
	// Every route, present and future, behind the same two gates.
	inner := securityHeaders(guardWrites(mux))
	if p := h.prefix(); p != "" {
		// Behind --web.route-prefix: everything under the prefix, and the
		// root sends a browser there, as Prometheus does.
		outer := http.NewServeMux()
		outer.Handle(p+"/", http.StripPrefix(p, inner))
		outer.Handle("GET /{$}", http.RedirectHandler(p+"/", http.StatusFound))
		return outer
	}
	return inner
}

// IsHealthCheck reports whether r asks for /-/healthy or /-/ready (under
// routePrefix): the two endpoints served without the web config's
// credentials, for probes that cannot send them (docs/security.md).
func IsHealthCheck(r *http.Request, routePrefix string) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := strings.TrimRight(routePrefix, "/")
	return r.URL.Path == p+"/-/healthy" || r.URL.Path == p+"/-/ready"
}

type handler struct {
	src  Source
	opts Options
	// views holds a token per schema view being rendered.
	views chan struct{}
}

// prefix is the route prefix as links start with it: "" or "/path".
func (h *handler) prefix() string { return strings.TrimRight(h.opts.RoutePrefix, "/") }

func (h *handler) ready(w http.ResponseWriter, _ *http.Request) {
	if !h.src.Ready() {
		text(w, http.StatusServiceUnavailable, "Not ready: configuration not loaded or targets not scheduled.\n")
		return
	}
	text(w, http.StatusOK, "OK\n")
}

// lifecycle guards endpoints that change state behind --web.enable-lifecycle.
func (h *handler) lifecycle(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.opts.EnableLifecycle {
			text(w, http.StatusForbidden, "Lifecycle API is not enabled (--web.enable-lifecycle).\n")
			return
		}
		next(w, r)
	}
}

func (h *handler) reload(w http.ResponseWriter, _ *http.Request) {
	if err := h.src.Reload(); err != nil {
		text(w, http.StatusInternalServerError, "Reload failed; the previous configuration keeps running:\n"+err.Error()+"\n")
		return
	}
	text(w, http.StatusOK, "Reloaded.\n")
}

func (h *handler) probe(w http.ResponseWriter, r *http.Request) {
	switch err := h.src.Probe(r.PathValue("name")); {
	case errors.Is(err, ErrUnknownTarget):
		apiFail(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrAlreadyRunning):
		apiFail(w, http.StatusConflict, err.Error())
	case err != nil:
		apiFail(w, http.StatusInternalServerError, err.Error())
	default:
		apiOK(w, http.StatusAccepted, message{"probe started"})
	}
}

// reportView is /api/v1/targets/{name}: the last run's report (the JSON
// of driftd check --json, plus served_changes), and what the daemon knows
// beyond that run: the target's status and its active findings, which
// during an outage are the ones the last compared run saw, marked stale.
type reportView struct {
	*probe.Report
	Status         state.Status    `json:"status"`
	ActiveFindings []state.Finding `json:"active_findings"`
}

func (h *handler) report(w http.ResponseWriter, r *http.Request) {
	run, ok := h.src.Run(r.PathValue("name"))
	switch {
	case !ok:
		apiFail(w, http.StatusNotFound, ErrUnknownTarget.Error())
	case run.Report == nil:
		apiFail(w, http.StatusNotFound, "no run has finished yet")
	default:
		apiOK(w, http.StatusOK, reportView{Report: run.Report, Status: run.Status(), ActiveFindings: run.Findings()})
	}
}

func (h *handler) history(w http.ResponseWriter, r *http.Request) {
	events, err := h.src.History(r.PathValue("name"))
	switch {
	case errors.Is(err, ErrUnknownTarget):
		apiFail(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		apiFail(w, http.StatusInternalServerError, err.Error())
		return
	case events == nil:
		events = []state.Event{}
	}
	apiOK(w, http.StatusOK, events)
}

func (h *handler) config(w http.ResponseWriter, _ *http.Request) {
	b, err := h.src.ConfigYAML()
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(b)
}

// Response is every JSON answer of /api/v1, in the shape of Prometheus'
// HTTP API: {"status": "success", "data": …}, or on an error {"status":
// "error", "errorType": …, "error": …} with data where an error has more
// to say (a refused accept's current digest). T is the data's type: the
// handlers answer Response[any], a client (driftd baseline accept) reads
// Response[[]TargetStatus] or Response[AcceptAnswer].
type Response[T any] struct {
	Status    string `json:"status"`
	Data      T      `json:"data,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
	Error     string `json:"error,omitempty"`
}

// message is the data of an answer that only says what was done.
type message struct {
	Message string `json:"message"`
}

// apiOK answers data with status.
func apiOK(w http.ResponseWriter, status int, data any) {
	writeJSON(w, status, Response[any]{Status: "success", Data: data})
}

// apiFail answers an error with status; data may be nil.
func apiFail(w http.ResponseWriter, status int, msg string) { apiFailData(w, status, msg, nil) }

func apiFailData(w http.ResponseWriter, status int, msg string, data any) {
	writeJSON(w, status, Response[any]{Status: "error", ErrorType: errorType(status), Error: msg, Data: data})
}

// errorType names an error's class as Prometheus' API does (bad_data,
// not_found, internal, unavailable), with conflict for a 409.
func errorType(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "not_found"
	case status == http.StatusConflict:
		return "conflict"
	case status == http.StatusServiceUnavailable:
		return "unavailable"
	case status >= 500:
		return "internal"
	}
	return "bad_data"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func text(w http.ResponseWriter, status int, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(s))
}

// faviconSVG is a drift: two offset arcs.
const faviconSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d2430"/><path d="M3 10c2-3 4-3 6 0s4 3 5 0" stroke="#64b5f6" stroke-width="1.6" fill="none"/><path d="M3 6c2-3 4-3 6 0s4 3 5 0" stroke="#ef9a9a" stroke-width="1.6" fill="none"/></svg>`
