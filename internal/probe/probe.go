package probe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
)

// MaxTools bounds the tools one listing may return across all pages.
const MaxTools = 100_000

// Options are the run-independent settings of a probe.
type Options struct {
	// Version is driftd's version, sent as clientInfo and put in the report.
	Version string
	Logger  *slog.Logger
	// OnExchange, if set, sees every MCP request of the run.
	OnExchange func(*mcp.Exchange)
	// Policy holds severity overrides and ignores; nil keeps everything.
	Policy *catalogue.Policy
	// Now is the clock for ignore expiry; nil is time.Now.
	Now func() time.Time
	// Tracer, if set, traces the run: a span per run, a child span per MCP
	// request, and every finding names the span of its evidence.
	Tracer trace.Tracer
}

// run is the state of one probe.
type run struct {
	t        config.Target
	declared *manifest.Manifest
	opts     Options
	rep      *Report
	log      *slog.Logger
	findings []catalogue.Finding
	once     map[string]bool

	tracer *requestTracer
	// evidence is the exchange the findings being emitted were read from;
	// emit stamps its span ids on them (DESIGN §12).
	evidence *mcp.Exchange
	// lastMain and lastAnon are the latest exchanges of the main and the
	// anonymous client.
	lastMain, lastAnon *mcp.Exchange
}

// Run probes t once and compares it against declared (nil: no drift
// checks, as for capture). It never panics and returns within the target's
// timeout plus one second.
func Run(ctx context.Context, t config.Target, declared *manifest.Manifest, opts Options) *Report {
	start := time.Now()
	r := newRun(t, declared, opts, start)
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	if opts.Tracer != nil {
		var span trace.Span
		ctx, span = opts.Tracer.Start(ctx, "driftd.probe "+t.Name, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attribute.String("driftd.target", t.Name)))
		r.tracer = newRequestTracer(opts.Tracer, t.URL)
		defer func() {
			if !r.rep.Success {
				span.SetAttributes(attribute.String("error.type", string(r.rep.FailureReason)))
				span.SetStatus(codes.Error, string(r.rep.FailureReason))
			}
			span.End()
		}()
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("probe panicked", "panic", p)
				r.fail(mcp.ReasonInvalidResponse, fmt.Sprintf("internal error: %v", p))
			}
		}()
		r.probe(ctx)
	}()
	r.finish(time.Since(start))
	return r.rep
}

// newRun starts the state of one run and its report, with what is known
// before anything is sent. Run, Failed and Diff all begin here.
func newRun(t config.Target, declared *manifest.Manifest, opts Options, start time.Time) *run {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &run{t: t, declared: declared, opts: opts, log: opts.Logger.With("target", t.Name), once: map[string]bool{}}
	r.rep = &Report{
		DriftdVersion:          opts.Version,
		Target:                 t.Name,
		BaseURL:                config.RedactedURL(t.URL),
		StartedAt:              start.UTC(),
		Era:                    "unknown",
		ProtocolRevision:       Revision{Reason: "not established"},
		AuthorizationHeaders:   config.CredentialHeaders(&t.HTTPClient),
		AuthorizationPresented: credentialsPresented(&t.HTTPClient),
		AuthPosture:            AuthPosture{AnonymousList: "not_checked"},
	}
	if declared != nil {
		r.rep.Tools.Declared = len(declared.Tools)
	}
	return r
}

func credentialsPresented(c *promconfig.HTTPClientConfig) bool {
	return len(config.CredentialHeaders(c)) > 0 || c.TLSConfig.CertFile != "" || c.TLSConfig.Cert != ""
}

func (r *run) probe(ctx context.Context) {
	if len(r.t.Invoke.Tools) > 0 || r.t.Invoke.Execute {
		// The gates are checked before any request is sent.
		inv, err := Plan(r.t, r.declared)
		if err != nil {
			inv = &Invocation{Seed: r.t.Invoke.Seed, Planned: []PlannedCall{}, Findings: []catalogue.Finding{}, Refused: err.Error()}
		}
		seed := r.t.Invoke.Seed
		r.rep.Invocation, r.rep.Seed = inv, &seed
	}
	r.rep.Classification = Classify(r.t)
	r.plaintextCheck() // evidence-free: the URL alone says it
	main, err := r.client(r.t.HTTPClient, false, &r.lastMain)
	if err != nil {
		r.fail(mcp.ReasonConfig, err.Error())
		return
	}
	sess, err := main.Connect(ctx)
	r.evidence = r.lastMain
	if err != nil {
		r.connectFailed(err)
		return
	}
	defer sess.Close(ctx)
	r.established(sess)
	served, ok := r.listAll(ctx, sess, true)
	if !ok {
		return
	}
	r.rep.Success = true
	r.rep.Tools.Served = len(served.tools)
	r.rep.served = served.tools
	r.conformTools(served)
	r.secondConnection(ctx, sess, served)
	if r.declared != nil {
		r.drift(served)
	}
	r.authPosture(ctx, sess, served)
	r.invoke(ctx, sess, served)
}

// client builds an MCP client from an HTTP client configuration. fresh
// clients never reuse a connection; last, if set, tracks the client's
// latest exchange.
func (r *run) client(hc promconfig.HTTPClientConfig, fresh bool, last **mcp.Exchange) (*mcp.Client, error) {
	hc.FollowRedirects = false
	opts := []promconfig.HTTPClientOption{promconfig.WithUserAgent("driftd/" + r.opts.Version)}
	if fresh {
		opts = append(opts, promconfig.WithKeepAlivesDisabled())
	}
	httpClient, err := promconfig.NewClientFromConfig(hc, "driftd", opts...)
	if err != nil {
		return nil, fmt.Errorf("http_client: %w", err)
	}
	limits := mcp.Limits{MaxResponseBytes: r.t.MaxResponseBytes}
	observe := func(ex *mcp.Exchange) {
		if last != nil {
			*last = ex
		}
		if r.opts.OnExchange != nil {
			r.opts.OnExchange(ex)
		}
	}
	c := mcp.NewClient(httpClient, r.t.URL, mcp.Implementation{Name: "driftd", Version: r.opts.Version}, limits, observe)
	if r.tracer != nil {
		c.WithTracer(r.tracer)
	}
	return c, nil
}

// connectFailed turns a failed discovery into findings and a failure.
func (r *run) connectFailed(err error) {
	var me *mcp.Error
	errors.As(err, &me)
	switch {
	case me != nil && me.Reason == mcp.ReasonProtocolUnsupported:
		r.emit(catalogue.New(catalogue.DriftProtocolUnsupported, "",
			fmt.Sprintf("%s: the server supports %s, none of which driftd speaks (%s and legacy %v); nothing was compared",
				me.Method, quoteList(me.Supported), mcp.ModernVersion, mcp.LegacyVersions)))
	case me != nil && me.Reason == mcp.ReasonAuthRequired:
		r.rep.AuthPosture.Challenge = me.Challenge
		if !r.rep.AuthorizationPresented {
			r.rep.AuthPosture.AnonymousList = "refused"
			r.refused(me.Challenge, "a request without credentials")
		}
	}
	r.failErr(err)
}

// established records the era, revision and server identity.
func (r *run) established(s *mcp.Session) {
	r.rep.Era = string(s.Era)
	if s.ServerInfo != nil {
		r.rep.ServerInfo = &mcp.Implementation{Name: ClipName(s.ServerInfo.Name), Version: ClipName(s.ServerInfo.Version)}
	}
	if s.Era == mcp.EraModern {
		v := s.Version
		r.rep.ProtocolRevision = Revision{Value: &v}
		r.conformResult("server/discover", s.Discover.ResultMeta, false)
		return
	}
	r.rep.ProtocolRevision = Revision{Reason: fmt.Sprintf("legacy server: %s; initialize negotiated %s", s.FallbackReason, s.Version)}
	r.emit(catalogue.New(catalogue.DriftLegacyServer, "",
		fmt.Sprintf("no 2026-07-28 server/discover (%s); compared over legacy initialize at %s, revision not claimed", s.FallbackReason, s.Version)))
}

func (r *run) fail(reason mcp.Reason, msg string) {
	r.rep.Success = false
	r.rep.FailureReason = reason
	r.rep.FailureMessage = msg
}

func (r *run) failErr(err error) {
	var me *mcp.Error
	if errors.As(err, &me) && me.IsRedirect() {
		r.emit(catalogue.New(catalogue.ConfRedirect, "",
			fmt.Sprintf("%s answered HTTP %d redirect to %s; driftd never follows redirects", me.Method, me.Status, describeLocation(me.Location))))
	}
	r.fail(mcp.Classify(err), err.Error())
}

// describeLocation names a redirect target by scheme and host only: a
// Location can carry tokens in its query.
func describeLocation(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || loc == "" {
		return "an unparseable location"
	}
	if u.Host == "" {
		return "a path on the same host"
	}
	return u.Scheme + "://" + u.Host
}

// emit records a finding once per identity: the fields its fingerprint
// covers.
func (r *run) emit(f catalogue.Finding) {
	key := f.Rule + "\x00" + f.Tool + "\x00" + f.Direction + "\x00" + f.Pointer + "\x00" + f.Change
	if r.once[key] {
		return
	}
	r.once[key] = true
	if ev := r.evidence; ev != nil && f.TraceID == "" {
		f.TraceID, f.SpanID = ev.TraceID, ev.SpanID
	}
	r.findings = append(r.findings, f)
}

// finish fingerprints, sorts and files the findings.
func (r *run) finish(d time.Duration) {
	rep := r.rep
	rep.DurationSeconds = d.Seconds()
	for i := range r.findings {
		f := &r.findings[i]
		f.Fingerprint = catalogue.Fingerprint(r.t.Name, *f)
		f.Tool = ClipName(f.Tool)
	}
	now := time.Now
	if r.opts.Now != nil {
		now = r.opts.Now
	}
	rep.Findings, rep.Ignored, rep.StaleIgnores = r.opts.Policy.Apply(r.findings, now())
	catalogue.Sort(rep.Findings)
	catalogue.Sort(rep.Ignored)
	rep.Drift.Findings, rep.Conformance.Findings, rep.AuthPosture.Findings = []catalogue.Finding{}, []catalogue.Finding{}, []catalogue.Finding{}
	for _, f := range rep.Findings {
		switch catalogue.FamilyOf(f.Rule) {
		case catalogue.FamilyDrift:
			if rep.Invocation != nil && strings.HasPrefix(f.Rule, "MCP-DRIFT-CALL-") {
				rep.Invocation.Findings = append(rep.Invocation.Findings, f)
				continue
			}
			rep.Drift.Findings = append(rep.Drift.Findings, f)
		case catalogue.FamilyConf:
			rep.Conformance.Findings = append(rep.Conformance.Findings, f)
		case catalogue.FamilyAuth:
			rep.AuthPosture.Findings = append(rep.AuthPosture.Findings, f)
		}
	}
	if rep.AuthorizationHeaders == nil {
		rep.AuthorizationHeaders = []string{}
	}
	rep.ServedChanges = []ServedChange{}
	rep.Summary = catalogue.Summary(rep.Findings)
}
