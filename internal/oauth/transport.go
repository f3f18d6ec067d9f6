package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
)

const (
	// maxMetadataBytes bounds one metadata document (and the target's
	// max_response_bytes bounds it further when smaller).
	maxMetadataBytes = 256 << 10
	// maxFetches bounds the GETs of one discovery: two protected resource
	// metadata paths and three discovery paths for each of two
	// authorization servers.
	maxFetches = 8
	// maxRefusalBody is how much of a refusal's body is kept to hand on
	// when no token can be had.
	maxRefusalBody = 64 << 10
)

// Usage is what one run's requests did with a target's machine identity,
// for its report and metrics. Put one in the run's context (WithUsage);
// the Transport fills it in.
type Usage struct {
	mu sync.Mutex
	// Budget, if set, is the run's byte budget: metadata documents are
	// drawn from it like MCP responses.
	Budget *mcp.Budget
	// MaxDocumentBytes, if positive and smaller, bounds one metadata
	// document below 256 KiB.
	MaxDocumentBytes int64

	requests []string
	tokens   []string
	issuer   string
	method   string
	grant    string
	scheme   string
	issued   time.Time
	expires  time.Time
	fetched  bool
	err      error
	notes    []string
}

// UsageReport is a Usage's outcome.
type UsageReport struct {
	// Requests are the outcomes of the token requests the run sent, in
	// order (Outcomes).
	Requests []string
	// Tokens are the values the run redacts from everything the servers
	// send back: the access tokens it presented, and what it sent in a
	// form no secret file holds — an ID-JAG, the client_secret_basic
	// credential, private_key_jwt assertions, DPoP proofs (one a request).
	Tokens []string
	// Issuer, Method, Grant and Scheme say who issued the token the run
	// used, how the client authenticated, with which grant, and how the
	// token was presented (Bearer or DPoP); empty when none was used.
	Issuer, Method, Grant, Scheme string
	// Issued and Expires are the token's times (Issued is when driftd
	// received it); zero when none was used.
	Issued, Expires time.Time
	// Fetched is true when this run requested the token it used.
	Fetched bool
	// Err says why no token could be had, nil when one was or none was
	// needed; a *LoginRequiredError when a person must log in again.
	Err error
	// Notes are what the run's log should say (a session that could not
	// be saved).
	Notes []string
}

// Report returns what the run did so far.
func (u *Usage) Report() UsageReport {
	u.mu.Lock()
	defer u.mu.Unlock()
	return UsageReport{Requests: slices.Clone(u.requests), Tokens: slices.Clone(u.tokens), Issuer: u.issuer,
		Method: u.method, Grant: u.grant, Scheme: u.scheme, Issued: u.issued, Expires: u.expires, Fetched: u.fetched, Err: u.err,
		Notes: slices.Clone(u.notes)}
}

func (u *Usage) requested(outcome string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests = append(u.requests, outcome)
}

func (u *Usage) use(e *token, fetched bool) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !slices.Contains(u.tokens, e.value) {
		u.tokens = append(u.tokens, e.value)
	}
	u.scheme, u.issued, u.expires = e.scheme, e.issued, e.expires
	u.fetched = u.fetched || fetched
	u.err = nil
}

// secret records a value the run must redact (an ID-JAG, a derived
// credential, a DPoP proof).
func (u *Usage) secret(v string) {
	if u == nil || v == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !slices.Contains(u.tokens, v) {
		u.tokens = append(u.tokens, v)
	}
}

func (u *Usage) identity(g *grant, method string) {
	issuer := g.res.issuer
	if issuer == "" {
		issuer = g.res.tokenURL
	}
	u.identify(issuer, method, grantName(g.cfg))
}

// identify records who issued the session's token and how.
func (u *Usage) identify(issuer, method, grant string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.issuer, u.method, u.grant = issuer, method, grant
}

// note records something the run's log should say.
func (u *Usage) note(s string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notes = append(u.notes, s)
}

func (u *Usage) fail(err error) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.err = err
}

type usageKey struct{}

// WithUsage returns ctx carrying u.
func WithUsage(ctx context.Context, u *Usage) context.Context {
	return context.WithValue(ctx, usageKey{}, u)
}

func usageOf(ctx context.Context) *Usage {
	u, _ := ctx.Value(usageKey{}).(*Usage)
	return u
}

// Transport presents a target's machine identity on every request to its
// MCP endpoint: the cached token, or, after a 401, one obtained through
// discovery; a 403 insufficient_scope steps the scopes up once; a DPoP
// nonce the server asks for is sent once more. It never follows a
// redirect and never sends a credential to a URL the fetch rule does not
// allow.
type Transport struct {
	// Base sends the requests to the endpoint (TLS, proxy, headers).
	Base http.RoundTripper
	// Anonymous builds the client discovery and token requests go
	// through: the target's TLS and proxy settings, no credential, no
	// redirect.
	Anonymous func() (*http.Client, error)
	Tokens    *Tokens
	OAuth     *config.OAuth
	// Endpoint is the target's URL.
	Endpoint string
	// Session, if set, makes the identity a person's login session
	// instead of a machine's credential.
	Session *SessionSource

	mu   sync.Mutex
	anon *http.Client
}

// client returns the anonymous client, built once.
func (t *Transport) client() (*http.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.anon == nil {
		c, err := t.Anonymous()
		if err != nil {
			return nil, err
		}
		c.CheckRedirect = noRedirect
		t.anon = c
	}
	return t.anon, nil
}

// CloseIdleConnections closes the idle connections of both clients.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.anon != nil {
		t.anon.CloseIdleConnections()
	}
}

// CloseAnonymous closes the idle connections of the anonymous client
// only: the endpoint's connection may be kept for the next run.
func (t *Transport) CloseAnonymous() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.anon != nil {
		t.anon.CloseIdleConnections()
	}
}

// endpointKey names what discovery found for this target's endpoint and
// configuration.
func (t *Transport) endpointKey() string {
	return t.Endpoint + "\x00" + t.OAuth.Issuer + "\x00" + t.OAuth.TokenURL + "\x00" + t.OAuth.Resource
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Session != nil {
		return t.roundTripSession(req)
	}
	ctx := req.Context()
	u := usageOf(ctx)
	var e *token
	authorized, steppedUp, nonced := false, false, false
	if res := t.Tokens.endpoint(t.endpointKey()); res != nil {
		// Discovery was done: present the cached token, or get one now
		// rather than be refused first. A token request that fails is
		// not sent again for the refusal that follows.
		if g := t.grant(res, u); g != nil {
			ent, err := t.Tokens.token(ctx, g, "")
			if err != nil {
				u.fail(err)
				authorized = true
			}
			e = ent
		}
	}
	resp, err := t.send(req, e, 0)
	for err == nil {
		chs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		switch {
		case e != nil && e.scheme == "DPoP" && !nonced && resp.StatusCode == http.StatusUnauthorized &&
			challengeError(chs, "dpop") == "use_dpop_nonce" && validNonce(resp.Header.Get("DPoP-Nonce")):
			nonced = true
			t.Tokens.setNonce(origin(req.URL), resp.Header.Get("DPoP-Nonce"))
		case resp.StatusCode == http.StatusUnauthorized && !authorized:
			authorized = true
			stale := ""
			if e != nil {
				stale = e.value
			}
			var aerr error
			resp = keepRefusal(resp)
			if e, aerr = t.authorize(ctx, chs, stale, nil); aerr != nil {
				u.fail(aerr)
				return resp, nil
			}
			drop(resp)
		case resp.StatusCode == http.StatusForbidden && !steppedUp && e != nil && challengeError(chs, "") == "insufficient_scope":
			steppedUp = true
			more := strings.Fields(challengeParam(chs, "scope"))
			if len(more) == 0 || len(t.OAuth.Scopes) > 0 {
				return resp, nil
			}
			var aerr error
			resp = keepRefusal(resp)
			if e, aerr = t.authorize(ctx, chs, "", more); aerr != nil {
				u.fail(aerr)
				return resp, nil
			}
			drop(resp)
		default:
			return resp, nil
		}
		if req.Body != nil && req.GetBody == nil {
			return nil, errors.New("oauth: the request cannot be sent again")
		}
		resp, err = t.send(req, e, 1)
	}
	return resp, err
}

// send sends req (a copy with a fresh body on a retry) presenting e.
func (t *Transport) send(req *http.Request, e *token, attempt int) (*http.Response, error) {
	r := req.Clone(req.Context())
	if attempt > 0 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	r.Header.Del("Authorization")
	r.Header.Del("DPoP")
	if e != nil {
		r.Header.Set("Authorization", e.scheme+" "+e.value)
		if e.scheme == "DPoP" {
			key := e.key
			if key == nil {
				var err error
				if key, err = t.Tokens.dpopKey(); err != nil {
					return nil, err
				}
			}
			p, err := key.proof(req.Method, req.URL, t.Tokens.nonce(origin(req.URL)), e.value, time.Now())
			if err != nil {
				return nil, err
			}
			r.Header.Set("DPoP", p)
			usageOf(req.Context()).secret(p)
		}
	}
	return t.Base.RoundTrip(r)
}

// authorize gets a token after a refusal whose challenges are chs: stale
// is the token just refused ("" when none was sent), more the scopes a
// 403 insufficient_scope asked for.
func (t *Transport) authorize(ctx context.Context, chs []oauthex.Challenge, stale string, more []string) (*token, error) {
	u := usageOf(ctx)
	key := t.endpointKey()
	res := t.Tokens.endpoint(key)
	if res == nil || stale != "" {
		var err error
		if res, err = t.resolve(ctx, chs); err != nil {
			t.Tokens.setEndpoint(key, nil)
			return nil, err
		}
	} else {
		c := *res // shared with other runs: changed on a copy
		res = &c
	}
	switch {
	case len(t.OAuth.Scopes) > 0:
		res.scopes = t.OAuth.Scopes
	case len(more) > 0:
		res.scopes = union(res.scopes, more)
	case stale == "" && len(res.scopes) == 0:
		if s := strings.Fields(challengeParam(chs, "scope")); len(s) > 0 {
			res.scopes = s
		} else {
			res.scopes = res.scopesSupported
		}
	}
	t.Tokens.setEndpoint(key, res)
	g := t.grant(res, u)
	if g == nil {
		return nil, errors.New("the client for discovery and token requests cannot be built")
	}
	return t.Tokens.token(ctx, g, stale)
}

// grant is the token request of res for this transport's credential.
func (t *Transport) grant(res *resolved, u *Usage) *grant {
	anon, err := t.client()
	if err != nil {
		return nil
	}
	g := &grant{cfg: t.OAuth, res: res, scopes: slices.Clone(res.scopes), anon: anon, usage: u}
	switch t.OAuth.DPoP {
	case "always":
		g.dpop = true
	case "never":
	default:
		g.dpop = slices.Contains(res.dpopAlgs, "ES256")
	}
	m, _ := g.method()
	u.identity(g, m)
	return g
}

// resolve finds the token endpoint: configured, or by discovery.
func (t *Transport) resolve(ctx context.Context, chs []oauthex.Challenge) (*resolved, error) {
	ep, err := url.Parse(t.Endpoint)
	if err != nil {
		return nil, errors.New("the target's URL does not parse")
	}
	if t.OAuth.TokenURL != "" {
		resource := t.OAuth.Resource
		if resource == "" {
			c := *ep
			c.RawQuery, c.Fragment = "", ""
			resource = c.String()
		}
		return &resolved{resource: resource, issuer: t.OAuth.Issuer, tokenURL: t.OAuth.TokenURL, at: t.Tokens.now()}, nil
	}
	anon, err := t.client()
	if err != nil {
		return nil, err
	}
	u := usageOf(ctx)
	var budget *mcp.Budget
	var maxDoc int64
	if u != nil {
		budget, maxDoc = u.Budget, u.MaxDocumentBytes
	}
	d := discover(ctx, anon, ep, challengeParam(chs, "resource_metadata"), t.OAuth.Issuer, budget, maxDoc)
	s, err := d.Usable()
	if err != nil {
		return nil, err
	}
	if err := tokenEndpointAllowed(s.Metadata.TokenEndpoint); err != nil {
		return nil, err
	}
	md := s.Metadata
	return &resolved{resource: *d.PRM.Resource, issuer: s.Issuer, tokenURL: md.TokenEndpoint, methods: md.TokenEndpointAuthMethods,
		signingAlgs: md.TokenEndpointAuthAlgs, dpopAlgs: md.DPoPAlgs, scopesSupported: d.PRM.ScopesSupported, at: t.Tokens.now()}, nil
}

// Get fetches one metadata document through hc (anonymous, no redirect),
// at most limit bytes drawn from budget, and returns the body of a 200
// answer, or nil and what came instead.
func Get(ctx context.Context, hc *http.Client, raw string, limit int64, budget *mcp.Budget) ([]byte, string) {
	doc, err := mcp.GetDocument(ctx, hc, raw, limit, budget)
	switch {
	case err != nil:
		return nil, string(mcp.Classify(err))
	case doc.Status >= 300 && doc.Status < 400:
		return nil, fmt.Sprintf("HTTP %d, redirect not followed", doc.Status)
	case doc.Status != http.StatusOK:
		return nil, fmt.Sprintf("HTTP %d", doc.Status)
	}
	return doc.Body, "HTTP 200"
}

// tokenEndpointAllowed refuses a token endpoint a credential must not be
// sent to: not http(s), user information, or plain http:// to anything but
// a loopback host.
func tokenEndpointAllowed(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return fmt.Errorf("the token_endpoint %s is not an http(s) URL", redact(raw))
	case u.User != nil:
		return fmt.Errorf("the token_endpoint %s carries user information", redact(raw))
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("the token_endpoint %s is plain http:// on a host that is not loopback: no credential is sent over it", redact(raw))
	}
	return nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// challengeError returns the error parameter of the first challenge of
// scheme ("" any of Bearer and DPoP).
func challengeError(chs []oauthex.Challenge, scheme string) string {
	for _, c := range chs {
		if (scheme == "" && (c.Scheme == "bearer" || c.Scheme == "dpop")) || c.Scheme == scheme {
			if e := c.Params["error"]; e != "" {
				return e
			}
		}
	}
	return ""
}

// challengeParam returns the first value of a parameter among chs.
func challengeParam(chs []oauthex.Challenge, name string) string {
	for _, c := range chs {
		if v := c.Params[name]; v != "" {
			return v
		}
	}
	return ""
}

func validNonce(n string) bool {
	return n != "" && len(n) <= 1024 && !strings.ContainsFunc(n, func(r rune) bool { return r < 0x21 || r > 0x7e })
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// keepRefusal reads a refusal's body (bounded) so that it can be handed on
// when no token can be had, and closes the connection's copy.
func keepRefusal(resp *http.Response) *http.Response {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxRefusalBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func drop(resp *http.Response) { resp.Body.Close() }
