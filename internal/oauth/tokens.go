package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/config"
)

// Grant types driftd requests.
const (
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

const (
	// maxEntries bounds the tokens (and resolved endpoints) kept: far
	// more than distinct credentials a fleet has; past it the oldest go.
	maxEntries = 10_000
	// maxSecretFile bounds a secret, key or assertion file.
	maxSecretFile = 64 << 10
	// discoveryTTL is how long what discovery found for an endpoint is
	// used before it is looked up again; a refused token looks it up at
	// once.
	discoveryTTL = time.Hour
	// defaultLifetime is how long a token that states no expires_in is
	// used, unless a 401 ends it sooner.
	defaultLifetime = 5 * time.Minute
)

// Tokens is the program's cache of access tokens, one per credential —
// client, authorization server, resource, scopes and DPoP — shared by
// every run and target that presents the same one, kept until shortly
// before expiry (the later of 10 s and a tenth of the lifetime, at most
// 5 minutes) or a 401. Tokens live in memory only: never in state, logs,
// reports, pages or spans. Build one where the program starts.
type Tokens struct {
	mu        sync.Mutex
	entries   map[string]*entry
	endpoints map[string]*resolved
	nonces    map[string]string // origin → the DPoP nonce it gave last
	dpop      *signer
	now       func() time.Time
}

// NewTokens returns an empty cache.
func NewTokens() *Tokens {
	return &Tokens{entries: map[string]*entry{}, endpoints: map[string]*resolved{}, nonces: map[string]string{}, now: time.Now}
}

// entry is one credential's token; mu makes concurrent runs that need it
// wait for one token request instead of sending one each, and guards
// tok.
type entry struct {
	mu   sync.Mutex
	tok  *token // nil: none yet, or the one a server refused
	used time.Time
	// session is a login's session as last read or refreshed.
	session *Session
}

// token is an access token as presented: runs hold a copy.
type token struct {
	value  string
	scheme string // "Bearer" or "DPoP"
	issued time.Time
	// expires is when it expires (issued + defaultLifetime when the
	// server stated no expires_in).
	expires time.Time
	// key is the DPoP key a session's token is bound to; nil: the
	// process's key.
	key *signer
	// issuer is the session's authorization server ("" for a machine
	// identity's token, whose issuer discovery checks).
	issuer string
}

// resolved is what a token request for an endpoint needs, from discovery
// or configuration.
type resolved struct {
	resource, issuer, tokenURL string
	methods, signingAlgs       []string
	dpopAlgs, scopesSupported  []string
	// scopes are the scopes requested last for the endpoint.
	scopes []string
	at     time.Time
}

// knownType refuses a token of a type driftd cannot present (RFC 6749
// §7.1: a client must not use a token whose type it does not understand).
func knownType(typ string) error {
	if typ == "" || strings.EqualFold(typ, "Bearer") || strings.EqualFold(typ, "DPoP") {
		return nil
	}
	// The type is not quoted: a hostile server may put anything in it.
	return errors.New("the token endpoint issued a token of a type driftd does not know how to present (not Bearer or DPoP; RFC 6749 §7.1): refused")
}

// expiresAt is when tok, received at now by the cache's clock, expires:
// x/oauth2 turns expires_in into a time by the wall clock.
func expiresAt(now time.Time, tok *oauth2.Token) time.Time {
	if tok.Expiry.IsZero() {
		return now.Add(defaultLifetime)
	}
	return now.Add(time.Until(tok.Expiry))
}

// fresh reports whether the token is usable at now.
func (t *token) fresh(now time.Time) bool {
	if t == nil {
		return false
	}
	margin := min(max(10*time.Second, t.expires.Sub(t.issued)/10), 5*time.Minute)
	return now.Before(t.expires.Add(-margin))
}

// cached returns a copy of the entry's token when it is fresh at now and
// not stale, the one a server just refused (which it forgets), recording
// its use in u; nil otherwise. The caller holds e.mu.
func (e *entry) cached(now time.Time, stale string, u *Usage) *token {
	if e.tok != nil && e.tok.value == stale {
		e.tok = nil
	}
	if !e.tok.fresh(now) {
		return nil
	}
	c := *e.tok
	u.use(&c, false)
	return &c
}

// entry returns the entry of key, making it (and evicting the least
// recently used when full).
func (ts *Tokens) entry(key string) *entry {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	e, ok := ts.entries[key]
	if !ok {
		if len(ts.entries) >= maxEntries {
			var oldest string
			var at time.Time
			for k, v := range ts.entries {
				if oldest == "" || v.used.Before(at) {
					oldest, at = k, v.used
				}
			}
			delete(ts.entries, oldest)
		}
		e = &entry{}
		ts.entries[key] = e
	}
	e.used = ts.now()
	return e
}

// endpoint returns what was resolved for key, if still fresh.
func (ts *Tokens) endpoint(key string) *resolved {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r := ts.endpoints[key]
	if r == nil || ts.now().Sub(r.at) > discoveryTTL {
		return nil
	}
	return r
}

func (ts *Tokens) setEndpoint(key string, r *resolved) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.endpoints) >= maxEntries {
		clear(ts.endpoints)
	}
	if r == nil {
		delete(ts.endpoints, key)
		return
	}
	ts.endpoints[key] = r
}

func (ts *Tokens) nonce(origin string) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.nonces[origin]
}

func (ts *Tokens) setNonce(origin, n string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.nonces) >= maxEntries {
		clear(ts.nonces)
	}
	ts.nonces[origin] = n
}

// dpopKey returns the process's DPoP key, made on first use.
func (ts *Tokens) dpopKey() (*signer, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.dpop == nil {
		k, err := newDPoPKey()
		if err != nil {
			return nil, err
		}
		ts.dpop = k
	}
	return ts.dpop, nil
}

// Extensions are the MCP authorization extensions a client with cfg
// speaks, declared in its capabilities: the client credentials extension,
// and workload identity federation for the JWT-bearer grant.
func Extensions(cfg *config.OAuth) []string {
	if cfg.TokenExchange != nil {
		return []string{"io.modelcontextprotocol/enterprise-managed-authorization"}
	}
	if cfg.AssertionFile != "" {
		return []string{"io.modelcontextprotocol/oauth-client-credentials", "io.modelcontextprotocol/auth/wif"}
	}
	return []string{"io.modelcontextprotocol/oauth-client-credentials"}
}

// Outcomes of a token request, driftd_oauth_token_requests_total's
// outcome label: success, an OAuth error code the authorization server
// returned (RFC 6749 §5.2, RFC 9449), other_error for any other code, or
// failed when no OAuth answer came (connection, status, body).
var Outcomes = []string{"success", "invalid_client", "invalid_grant", "invalid_scope", "unauthorized_client",
	"unsupported_grant_type", "invalid_request", "invalid_dpop_proof", "other_error", "failed"}

// grant is one token request as configured and resolved.
type grant struct {
	cfg    *config.OAuth
	res    *resolved
	scopes []string
	dpop   bool
	anon   *http.Client // no credential, no redirect
	usage  *Usage
}

// key identifies the credential the grant presents: a token it got is
// good for any grant with the same key.
func (g *grant) key() string {
	h := sha256.New()
	if x := g.cfg.TokenExchange; x != nil {
		for _, s := range []string{x.TokenURL, x.ClientID, x.ClientSecretFile, x.SubjectTokenFile, x.SubjectTokenType} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
	}
	for _, s := range []string{g.cfg.ClientID, g.cfg.ClientSecretFile, g.cfg.PrivateKeyFile, g.cfg.AssertionFile,
		g.cfg.TokenEndpointAuthMethod, g.cfg.SigningAlgorithm, g.res.issuer, g.res.tokenURL, g.res.resource,
		strings.Join(g.scopes, " "), fmt.Sprint(g.dpop)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// token returns a fresh token of the grant's credential, from the cache
// or, when there is none (or stale is the one cached, which a server just
// refused), from the authorization server: one request however many runs
// ask at once.
func (ts *Tokens) token(ctx context.Context, g *grant, stale string) (*token, error) {
	e := ts.entry(g.key())
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.cached(ts.now(), stale, g.usage); t != nil {
		return t, nil
	}
	tok, err := ts.request(ctx, g)
	if err != nil {
		return nil, err
	}
	if err := knownType(tok.TokenType); err != nil {
		return nil, err
	}
	now := ts.now()
	t := token{value: tok.AccessToken, scheme: "Bearer", issued: now, expires: expiresAt(now, tok)}
	if g.dpop && strings.EqualFold(tok.TokenType, "DPoP") {
		t.scheme = "DPoP"
	}
	e.tok = &t
	c := t
	g.usage.use(&c, true)
	return &c, nil
}

// request sends one token request.
func (ts *Tokens) request(ctx context.Context, g *grant) (*oauth2.Token, error) {
	cc, err := ts.configure(ctx, g)
	if err != nil {
		return nil, err
	}
	hc := g.anon
	if g.dpop {
		key, err := ts.dpopKey()
		if err != nil {
			return nil, err
		}
		hc = dpopClient(g.anon.Transport, key, ts)
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err == nil && !vschar(tok.AccessToken) {
		// A CR or LF would fail every request it is set on, blamed on
		// the MCP server; it is the authorization server's answer.
		g.usage.requested("failed")
		return nil, fmt.Errorf("the token endpoint %s answered an access_token that is not printable ASCII (RFC 6749 §A.12)", redact(g.res.tokenURL))
	}
	return tok, g.outcome(ctx, err, g.res.tokenURL, grantName(g.cfg))
}

// outcome counts the outcome of a request to tokenURL and returns err as
// the run reports it.
func (g *grant) outcome(ctx context.Context, err error, tokenURL, what string) error {
	if err == nil {
		g.usage.requested("success")
		return nil
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		code := re.ErrorCode
		if !slices.Contains(Outcomes, code) || code == "failed" || code == "success" {
			code = "other_error"
		}
		g.usage.requested(code)
		return fmt.Errorf("the token endpoint %s refused the %s request: %s", redact(tokenURL), what, errorCode(re.ErrorCode))
	}
	g.usage.requested("failed")
	if re != nil {
		return fmt.Errorf("the token endpoint %s answered HTTP %d without an OAuth error", redact(tokenURL), re.Response.StatusCode)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the %s request to %s did not finish: %w", what, redact(tokenURL), ctx.Err())
	}
	return fmt.Errorf("the %s request to %s failed: %s", what, redact(tokenURL), answerError(err))
}

// answerError is what a token request that got no token says: the
// transport's error, or x/oauth2's word on an answer it could not make a
// token of (go-sdk's token exchange wraps it) without what it quotes of
// the body — encoding/json quotes a value that is not a number, and a
// hostile answer puts its token there, which the run never presented
// and so cannot redact.
func answerError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return scrubError(err)
	}
	msg := err.Error()
	if i := strings.Index(msg, "oauth2: "); i >= 0 {
		what, _, _ := strings.Cut(msg[i+len("oauth2: "):], ":")
		return scrubError(errors.New(msg[:i] + "oauth2: " + what))
	}
	return scrubError(err)
}

// vschar reports whether an access token is 1*VSCHAR (RFC 6749 §A.12).
func vschar(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e })
}

// configure builds the token request of g with x/oauth2's client
// credentials flow: its grant_type, client authentication, scopes and
// resource (RFC 8707), the secret files read now.
func (ts *Tokens) configure(ctx context.Context, g *grant) (*clientcredentials.Config, error) {
	cfg := g.cfg
	cc := &clientcredentials.Config{ClientID: cfg.ClientID, TokenURL: g.res.tokenURL, Scopes: g.scopes,
		EndpointParams: url.Values{"resource": {g.res.resource}}, AuthStyle: oauth2.AuthStyleInParams}
	switch {
	case cfg.AssertionFile != "":
		a, err := readSecret(cfg.AssertionFile, "oauth.assertion_file")
		if err != nil {
			g.usage.requested("failed")
			return nil, err
		}
		cc.EndpointParams.Set("grant_type", GrantJWTBearer)
		cc.EndpointParams.Set("assertion", a)
	case cfg.TokenExchange != nil:
		a, err := g.exchange(ctx)
		if err != nil {
			return nil, err
		}
		cc.EndpointParams.Set("grant_type", GrantJWTBearer)
		cc.EndpointParams.Set("assertion", a)
	}
	method, err := g.method()
	if err != nil {
		g.usage.requested("failed")
		return nil, err
	}
	switch method {
	case config.AuthClientSecretBasic, config.AuthClientSecretPost:
		s, err := readSecret(cfg.ClientSecretFile, "oauth.client_secret_file")
		if err != nil {
			g.usage.requested("failed")
			return nil, err
		}
		cc.ClientSecret = s
		if method == config.AuthClientSecretBasic {
			cc.AuthStyle = oauth2.AuthStyleInHeader
			// As x/oauth2 sends it (RFC 6749 §2.3.1): an echo of the
			// header is not the secret file's content.
			g.usage.secret(base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(cfg.ClientID) + ":" + url.QueryEscape(s))))
		}
	case config.AuthPrivateKeyJWT:
		pem, err := readSecret(cfg.PrivateKeyFile, "oauth.private_key_file")
		if err != nil {
			g.usage.requested("failed")
			return nil, err
		}
		key, err := parseKey([]byte(pem), cfg.SigningAlgorithm)
		if err != nil {
			g.usage.requested("failed")
			return nil, fmt.Errorf("oauth.private_key_file: %v", err)
		}
		if algs := g.res.signingAlgs; len(algs) > 0 && !slices.Contains(algs, key.method.Alg()) {
			g.usage.requested("failed")
			return nil, fmt.Errorf("the authorization server accepts client assertions signed with %v, not %s", algs, key.method.Alg())
		}
		aud := g.res.issuer
		if aud == "" {
			aud = g.res.tokenURL
		}
		a, err := key.clientAssertion(cfg.ClientID, aud, time.Now())
		if err != nil {
			return nil, err
		}
		g.usage.secret(a)
		cc.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		cc.EndpointParams.Set("client_assertion", a)
		cc.ClientID = "" // the assertion's sub says who (RFC 7523 §3; the client credentials extension's example)
	}
	return cc, nil
}

// exchange gets the ID-JAG of enterprise-managed authorization: the
// identity provider exchanges the subject token for an assertion whose
// audience is the authorization server and whose resource is the MCP
// server's (RFC 8693, through go-sdk's oauthex.ExchangeToken).
func (g *grant) exchange(ctx context.Context) (string, error) {
	x := g.cfg.TokenExchange
	if err := tokenEndpointAllowed(x.TokenURL); err != nil {
		g.usage.requested("failed")
		return "", fmt.Errorf("oauth.token_exchange.token_url: %v", err)
	}
	subject, err := readSecret(x.SubjectTokenFile, "oauth.token_exchange.subject_token_file")
	if err != nil {
		g.usage.requested("failed")
		return "", err
	}
	creds := &oauthex.ClientCredentials{ClientID: x.ClientID}
	if x.ClientSecretFile != "" {
		s, err := readSecret(x.ClientSecretFile, "oauth.token_exchange.client_secret_file")
		if err != nil {
			g.usage.requested("failed")
			return "", err
		}
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: s}
	}
	typ := x.SubjectTokenType
	if typ == "" {
		typ = oauthex.TokenTypeIDToken
	}
	aud := g.res.issuer
	tok, err := oauthex.ExchangeToken(ctx, x.TokenURL, &oauthex.TokenExchangeRequest{RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience: aud, Resource: g.res.resource, Scope: g.scopes, SubjectToken: subject, SubjectTokenType: typ}, creds, g.anon)
	if err := g.outcome(ctx, err, x.TokenURL, "token exchange"); err != nil {
		return "", err
	}
	if t, _ := tok.Extra("issued_token_type").(string); t != oauthex.TokenTypeIDJAG {
		return "", fmt.Errorf("the identity provider %s issued a token that is not an ID-JAG", redact(x.TokenURL))
	}
	g.usage.secret(tok.AccessToken)
	return tok.AccessToken, nil
}

// method is the client authentication the grant uses: the configured one,
// else the one its credential allows that the authorization server
// advertises (client_secret_basic when it advertises none, RFC 8414 §2).
func (g *grant) method() (string, error) {
	cfg, adv := g.cfg, g.res.methods
	if m := cfg.TokenEndpointAuthMethod; m != "" {
		if len(adv) > 0 && !slices.Contains(adv, m) {
			return "", fmt.Errorf("oauth.token_endpoint_auth_method %s is not among the authorization server's %v", m, adv)
		}
		return m, nil
	}
	switch {
	case cfg.PrivateKeyFile != "":
		return config.AuthPrivateKeyJWT, nil
	case cfg.ClientSecretFile != "":
		if len(adv) > 0 && !slices.Contains(adv, config.AuthClientSecretBasic) && slices.Contains(adv, config.AuthClientSecretPost) {
			return config.AuthClientSecretPost, nil
		}
		return config.AuthClientSecretBasic, nil
	}
	return config.AuthNone, nil
}

// grantName says which grant cfg requests, for messages.
func grantName(cfg *config.OAuth) string {
	if cfg.AssertionFile != "" || cfg.TokenExchange != nil {
		return "JWT-bearer"
	}
	return "client_credentials"
}

// errorCode bounds an error code from an authorization server for a
// message: a code is a short ASCII token (RFC 6749 §5.2).
func errorCode(c string) string {
	if len(c) > 64 || strings.ContainsFunc(c, func(r rune) bool { return r < 0x20 || r > 0x7e || r == '"' || r == '\\' }) {
		return "an error code that is not an RFC 6749 token"
	}
	return c
}

// scrubError keeps an error about a request from quoting the URL (and
// anything in its query).
func scrubError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// readSecret reads a secret file through the one reader (a FIFO or a
// device is refused), bounded, trimmed.
func readSecret(path, field string) (string, error) {
	b, err := atomicfile.ReadFile(path, maxSecretFile)
	if err != nil {
		return "", fmt.Errorf("%s: %v", field, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s: the file is empty", field)
	}
	return s, nil
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// dpopClient is a client for token requests through anon's transport that
// proves possession of key, remembering nonces in ts.
func dpopClient(anon http.RoundTripper, key *signer, ts *Tokens) *http.Client {
	return &http.Client{Transport: &dpopTokenTransport{base: anon, key: key, ts: ts, now: time.Now}, CheckRedirect: noRedirect}
}

// dpopTokenTransport adds a DPoP proof to token requests, and sends one
// again with the nonce an authorization server asks for (RFC 9449 §8).
type dpopTokenTransport struct {
	base http.RoundTripper
	key  *signer
	ts   *Tokens
	now  func() time.Time
}

func (t *dpopTokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	origin := req.URL.Scheme + "://" + req.URL.Host
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if attempt > 0 {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		p, err := t.key.proof(req.Method, req.URL, t.ts.nonce(origin), "", t.now())
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", p)
		usageOf(req.Context()).secret(p)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		n := resp.Header.Get("DPoP-Nonce")
		if n == "" || len(n) > 1024 || attempt > 0 || resp.StatusCode != http.StatusBadRequest || req.GetBody == nil {
			if n != "" && len(n) <= 1024 {
				t.ts.setNonce(origin, n)
			}
			return resp, nil
		}
		t.ts.setNonce(origin, n)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

func redact(s string) string { return config.RedactedURL(s) }
