package probe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
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
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/poison"
	"github.com/driftd/driftd/internal/sanitize"
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
	// Bodies, if set, lends the buffers the run's response bodies are kept
	// in; the caller releases them once it is done with the report's
	// served set (Report.Served), the only part of a report that points
	// into them.
	Bodies *mcp.Bodies
	// HTTPClient, if set, is the main connection's client (NewHTTPClient),
	// kept by the caller from run to run so that its idle connection is
	// reused; the run leaves it open. nil builds a client for the run and
	// closes its connection at the end. The second connection and the
	// anonymous list always use a fresh client of their own.
	HTTPClient *http.Client
	// Pool, if set, is the daemon's pool of bytes in flight
	// (global.max_inflight_bytes): every byte the run reads is drawn from
	// it as well as from max_run_bytes, and returned when Run returns.
	Pool *mcp.Pool
	// Caches are the program's caches (NewCaches), built once where it
	// starts and shared by its runs; nil remembers nothing.
	Caches *Caches
	// Tokens are the program's OAuth access tokens, built once where it
	// starts and shared by its runs and targets; nil gives each run a
	// cache of its own.
	Tokens *oauth.Tokens
	// Login, if set, logs a login target's person in again when its
	// session cannot serve (driftd check --oauth.login); nil in the
	// daemon, whose target then fails as auth_required with the hint to
	// run driftd auth login.
	Login func(ctx context.Context, more []string) (*oauth.Session, error)
}

// run is the state of one probe.
type run struct {
	// t is the probed target; Diff, which sends nothing, has none.
	t        config.Target
	declared *manifest.Manifest
	// pending is a manifest still being read (Prepared.Pending).
	pending func(context.Context) (*manifest.Manifest, error)
	// resolve is Prepared.Resolve, until the listing is in.
	resolve func(context.Context, []mcp.Tool) (*manifest.Manifest, error)
	opts    Options
	// ref names what the declared surface is in messages: "manifest", or
	// "baseline" for a baseline-mode target.
	ref      string
	rep      *Report
	log      *slog.Logger
	findings []catalogue.Finding
	once     map[string]bool

	tracer *requestTracer
	// lastMain and lastAnon are the latest exchanges of the main and the
	// anonymous client.
	lastMain, lastAnon *mcp.Exchange
	// secrets are the target's configured credential values, redacted
	// from every server string that reaches the report.
	secrets *sanitize.Secrets
	// budget is the bytes every client of the run may read together.
	budget *mcp.Budget
	// scan runs the MCP-SEC text detectors; it knows the served tools'
	// names once the tools are listed.
	scan *poison.Scanner
	// surfaceChecked is set once the authorization surface was checked.
	surfaceChecked bool
	// usage is what the target's oauth block did this run; oauthClose
	// closes the connections its discovery and token requests opened.
	usage      *oauth.Usage
	oauthClose []func()
	// recall is what the last run concluded from its listing
	// (Prepared.Recall); recallable is set when this run may conclude
	// the next one (Report.Recall), with what the listing's checks found
	// (listingFound, fromListing).
	recall       Recall
	recallable   bool
	listingFound []catalogue.Finding
	capturing    bool // emitFrom keeps what it is given in listingFound
}

// scanner returns the run's text scanner, one without tool names when no
// tools were listed.
func (r *run) scanner() *poison.Scanner {
	if r.scan == nil {
		r.scan = poison.NewScanner(nil, r.t.ShadowTools)
	}
	return r.scan
}

// Run probes a prepared target once and compares it against its declared
// manifest. It never panics and returns within the target's timeout plus
// one second.
func Run(ctx context.Context, p *Prepared, opts Options) *Report {
	start := time.Now()
	t := p.Target
	r := newRun(t, p.Declared, opts, start)
	r.pending = p.Pending
	if p.Resolve != nil && p.Declared == nil && p.Pending == nil {
		r.resolve = p.Resolve
		r.rep.ComparedAgainst = "manifest"
		r.rep.Tools.Declared = p.DeclaredTools
	}
	defer r.budget.Release()
	if p.Baseline {
		r.ref = "baseline"
		if p.Declared != nil {
			r.rep.ComparedAgainst = r.ref
		}
		if p.Review != "" {
			r.emitFrom(nil, checkBaselineReview(p.Review)...)
		}
	}
	r.rep.Invocation = p.Invocation.clone() // the run fills in outcomes
	if p.Invocation == nil && !p.Baseline && p.Pending == nil {
		r.recall, r.recallable = p.Recall, true
	}
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	if r.usage != nil {
		ctx = oauth.WithUsage(ctx, r.usage)
	}
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
	if r.rep.Success && ctx.Err() != nil {
		// One deadline covers the whole run, the checks' CPU included: a
		// run that overran it compared nothing it can vouch for.
		r.fail(mcp.ReasonTimeout, fmt.Sprintf("the run's deadline of %v passed before its checks finished", t.Timeout))
	}
	r.oauthDone()
	r.finish(time.Since(start))
	return r.rep
}

// newRun starts the state of a probe of t and its report, with what is
// known before anything is sent. Run and Failed begin here.
func newRun(t config.Target, declared *manifest.Manifest, opts Options, start time.Time) *run {
	r := startRun(t.Name, config.RedactedURL(t.URL), declared, opts, start)
	r.t = t
	creds := t.Credentials()
	r.rep.AuthorizationHeaders, r.rep.AuthorizationPresented = creds.Headers, creds.Any()
	r.secrets = sanitize.NewSecrets(t.Secrets()...)
	switch {
	case t.MaxRunBytes.Bytes() > 0:
		r.budget = mcp.NewBudget(t.MaxRunBytes.Bytes(), opts.Pool)
	case opts.Pool != nil:
		r.budget = mcp.NewBudget(math.MaxInt64, opts.Pool)
	}
	if !t.OAuth.IsZero() {
		r.usage = &oauth.Usage{Budget: r.budget, MaxDocumentBytes: t.MaxResponseBytes.Bytes()}
		if r.opts.Tokens == nil {
			r.opts.Tokens = oauth.NewTokens()
		}
	}
	return r
}

// startRun starts a run and its report from what every report has: the
// target's name and base URL. Diff, which probes nothing, begins here.
func startRun(target, baseURL string, declared *manifest.Manifest, opts Options, start time.Time) *run {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &run{opts: opts, ref: "manifest", log: opts.Logger.With("target", target), once: map[string]bool{}}
	r.rep = &Report{
		DriftdVersion:    opts.Version,
		Target:           target,
		BaseURL:          baseURL,
		StartedAt:        start.UTC(),
		Era:              "unknown",
		ProtocolRevision: Revision{Reason: "not established"},
		AuthPosture:      AuthPosture{AnonymousList: "not_checked"},
	}
	r.setDeclared(declared)
	return r
}

// setDeclared sets the manifest the run compares against.
func (r *run) setDeclared(declared *manifest.Manifest) {
	r.declared = declared
	if declared != nil {
		r.rep.ComparedAgainst = "manifest"
		if declared.Declares(mcp.KindTool) {
			r.rep.Tools.Declared = len(declared.Tools)
		}
	}
}

// awaitManifest waits for a pending manifest (Prepared.Pending), or
// resolves one from the served tools (Prepared.Resolve), if any, and
// reports whether the run goes on: one that could not be read ends it
// as config.
func (r *run) awaitManifest(ctx context.Context, served []mcp.Tool) bool {
	pending := r.pending
	if resolve := r.resolve; resolve != nil {
		pending = func(ctx context.Context) (*manifest.Manifest, error) { return resolve(ctx, served) }
	}
	if pending == nil {
		return true
	}
	m, err := pending(ctx)
	r.pending, r.resolve = nil, nil
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		r.fail(mcp.ReasonTimeout, fmt.Sprintf("the run's deadline of %v passed while the declared manifest was read", r.t.Timeout))
		return false
	}
	if err != nil {
		r.fail(mcp.ReasonConfig, "the declared manifest: "+err.Error())
		return false
	}
	r.setDeclared(m)
	return true
}

func (r *run) probe(ctx context.Context) {
	if r.rep.Invocation != nil {
		seed := r.t.Invoke.Seed
		r.rep.Seed = &seed
	}
	r.rep.Classification = Classify(r.t)
	r.emitFrom(nil, r.checkPlaintextTransport()...) // the URL alone says it
	main, err := r.client(false, false, &r.lastMain)
	if err != nil {
		r.fail(mcp.ReasonConfig, err.Error())
		return
	}
	// The second connection starts as soon as its era is known: with a
	// legacy server, when the discovery falls back, so that its handshake
	// overlaps the first's instead of following it.
	var second *secondListing
	main.OnFallback(func(version, why string) {
		second = r.startSecond(ctx, &mcp.Session{Era: mcp.EraLegacy, Version: version, FallbackReason: why}, main.LastID())
	})
	sess, err := main.Connect(ctx)
	connected := r.lastMain // the discovery's outcome is the evidence
	if err != nil {
		if second != nil {
			second.close(ctx)
		}
		r.connectFailed(ctx, connected, err)
		return
	}
	defer sess.Close(ctx)
	r.established(connected, sess)
	if second == nil {
		second = r.startSecond(ctx, sess, main.LastID())
	}
	defer second.close(ctx)
	served, ok := r.listPrimary(ctx, sess)
	if !ok {
		return
	}
	items, ok := r.listItems(ctx, sess)
	if !ok {
		return
	}
	r.rep.Success = true
	r.rep.Tools.Served = len(served.tools)
	r.rep.served = served.tools
	if served.unread != nil {
		r.rep.Tools.Served, r.rep.servedAsBefore = r.recall.Tools, true
	}
	r.rep.servedItems = make(map[mcp.Kind][]mcp.Item, len(items))
	for k, l := range items {
		r.rep.servedItems[k] = l.items
	}
	// Each step checks the deadline first: the checks' CPU counts too.
	for _, step := range []func(){
		func() { r.secondConnection(ctx, second, served, items) },
		func() {
			if r.declared != nil {
				if served.unread == nil { // else its conclusion is recalled
					r.fromListing(func() { r.drift(served) })
				}
				r.driftItems(ctx, items)
			}
		},
		func() { r.authPosture(ctx, sess, served) },
		func() { r.invoke(ctx, sess, served, items) },
		func() {
			if r.ref == "baseline" && r.declared == nil { // a run that records a baseline
				r.emitFrom(nil, checkBaselineBounds(r.rep)...)
			}
		},
	} {
		if ctx.Err() != nil {
			return
		}
		step()
	}
	r.nextRecall(served)
}

// NewHTTPClient builds the HTTP client a run talks to a target through,
// from its http_client configuration, with a transport of its own: no
// connection of another client is ever reused. idle, if positive, is how
// long it keeps an idle connection, between the requests of a run and, for
// a caller that passes the client to every run (Options.HTTPClient),
// between runs.
func NewHTTPClient(hc promconfig.HTTPClientConfig, version string, idle time.Duration) (*http.Client, error) {
	hc.FollowRedirects = false
	opts := []promconfig.HTTPClientOption{promconfig.WithUserAgent("driftd/" + version)}
	if idle > 0 {
		opts = append(opts, promconfig.WithIdleConnTimeout(idle))
	}
	c, err := promconfig.NewClientFromConfig(hc, "driftd", opts...)
	if err != nil {
		return nil, fmt.Errorf("http_client: %w", err)
	}
	return c, nil
}

// client builds an MCP client from an HTTP client configuration. A fresh
// client has a transport of its own, so its conversation opens a
// connection of its own (one: a legacy session's initialize, notification
// and list share it), closed when the conversation ends (Session.Close,
// CloseIdleConnections); the main one (not fresh) is Options.HTTPClient
// when set, and its connection outlives the run. last, if set, tracks the
// client's latest exchange.
func (r *run) client(anonymous, fresh bool, last **mcp.Exchange) (*mcp.Client, error) {
	hc := r.t.HTTPClient.HTTPClientConfig
	if anonymous {
		hc = config.Anonymous(hc)
	}
	httpClient, keep := r.opts.HTTPClient, !fresh && r.opts.HTTPClient != nil
	if !keep {
		var err error
		if httpClient, err = NewHTTPClient(hc, r.opts.Version, 0); err != nil {
			return nil, err
		}
	}
	if !anonymous && !r.t.OAuth.IsZero() {
		httpClient = r.withOAuth(httpClient)
	}
	limits := mcp.Limits{MaxResponseBytes: r.t.MaxResponseBytes.Bytes(), Budget: r.budget, Bodies: r.opts.Bodies, Decoded: r.opts.Caches.Decoded()}
	observe := func(ex *mcp.Exchange) {
		if last != nil {
			*last = ex
		}
		if r.opts.OnExchange != nil {
			r.opts.OnExchange(ex)
		}
	}
	c := mcp.NewClient(httpClient, r.t.URL, mcp.Implementation{Name: "driftd", Version: r.opts.Version}, limits, observe)
	if !anonymous && !r.t.OAuth.IsZero() {
		c.DeclareExtensions(oauth.Extensions(&r.t.OAuth)...)
	}
	if r.tracer != nil {
		c.WithTracer(r.tracer)
	}
	if keep {
		c.KeepConnections()
	}
	return c, nil
}

// connectFailed turns a failed discovery, read from ex, into findings and
// a failure.
func (r *run) connectFailed(ctx context.Context, ex *mcp.Exchange, err error) {
	var me *mcp.Error
	errors.As(err, &me)
	switch {
	case me != nil && me.Reason == mcp.ReasonProtocolUnsupported:
		r.emitFrom(ex, checkProtocolUnsupported(me)...)
	case me != nil && me.Reason == mcp.ReasonAuthRequired:
		r.rep.AuthPosture.Challenge = me.Challenge
		if !r.rep.AuthorizationPresented {
			r.rep.AuthPosture.AnonymousList = "refused"
			r.emitFrom(ex, r.checkRefusal(me.Challenge, "a request without credentials")...)
		}
		r.authSurface(ctx, me.Challenge, ex, nil)
	}
	r.failErr(ex, err)
}

// established records the era, revision and server identity that the
// connection, read from ex, established.
func (r *run) established(ex *mcp.Exchange, s *mcp.Session) {
	r.rep.Era = string(s.Era)
	if s.ServerInfo != nil {
		r.rep.ServerInfo = &mcp.Implementation{Name: sanitize.Name(s.ServerInfo.Name), Version: sanitize.Name(s.ServerInfo.Version)}
	}
	if s.Era == mcp.EraModern {
		v := s.Version
		r.rep.ProtocolRevision = Revision{Value: &v}
		r.conformResult(ex, "server/discover", s.Discover.ResultMeta, resultChecks)
		return
	}
	r.rep.ProtocolRevision = Revision{Reason: fmt.Sprintf("legacy server: %s; initialize negotiated %s", s.FallbackReason, s.Version)}
	r.emitFrom(ex, checkLegacyServer(s)...)
}

func (r *run) fail(reason mcp.Reason, msg string) {
	r.rep.Success = false
	r.rep.FailureReason = reason
	r.rep.FailureMessage = msg
}

// failErr fails the run with err, which the request of ex ended in.
func (r *run) failErr(ex *mcp.Exchange, err error) {
	r.emitFrom(ex, checkRedirect(err)...)
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

// emitFrom records findings together with the exchange that established
// them: each names that exchange's span (DESIGN §12) unless it names one
// already; ex is nil for findings no request showed. A finding is recorded
// once per catalogue.Finding.Identity, the fields its fingerprint covers.
func (r *run) emitFrom(ex *mcp.Exchange, fs ...catalogue.Finding) {
	for _, f := range fs {
		if r.capturing {
			r.listingFound = append(r.listingFound, f) // as checked (fromListing)
		}
		key := f.Identity()
		if r.once[key] {
			continue
		}
		r.once[key] = true
		if ex != nil && f.TraceID == "" {
			f.TraceID, f.SpanID = ex.TraceID, ex.SpanID
		}
		r.findings = append(r.findings, f)
	}
}

// finish fingerprints, sorts and files the findings.
func (r *run) finish(d time.Duration) {
	rep := r.rep
	rep.DurationSeconds = d.Seconds()
	for i := range r.findings {
		f := &r.findings[i]
		f.Fingerprint = catalogue.Fingerprint(r.rep.Target, *f)
	}
	r.scrub()
	now := time.Now
	if r.opts.Now != nil {
		now = r.opts.Now
	}
	rep.Findings, rep.Ignored, rep.StaleIgnores = r.opts.Policy.Apply(r.findings, now())
	catalogue.Sort(rep.Findings)
	catalogue.Sort(rep.Ignored)
	rep.Findings, rep.FindingsOmitted = catalogue.Cap(rep.Findings)
	var ignoredOmitted []catalogue.Omitted
	rep.Ignored, ignoredOmitted = catalogue.Cap(rep.Ignored)
	rep.IgnoredOmitted = catalogue.OmittedCount(ignoredOmitted)
	rep.Drift.Findings, rep.Conformance.Findings, rep.AuthPosture.Findings = []catalogue.Finding{}, []catalogue.Finding{}, []catalogue.Finding{}
	rep.Security.Findings = []catalogue.Finding{}
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
		case catalogue.FamilySec:
			rep.Security.Findings = append(rep.Security.Findings, f)
		}
	}
	if rep.AuthorizationHeaders == nil {
		rep.AuthorizationHeaders = []string{}
	}
	rep.ServedChanges = []ServedChange{}
	rep.Summary = catalogue.Summary(rep.Findings)
	for _, o := range rep.FindingsOmitted {
		rep.Summary.Add(o.Severity, o.Count)
	}
}
