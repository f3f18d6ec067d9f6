package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// Registrations: how a session's client came to be.
const (
	RegistrationPre      = "pre-registered"
	RegistrationMetadata = "client_id_metadata_document"
	RegistrationDynamic  = "dynamic"
)

// LoginOptions configure one login.
type LoginOptions struct {
	// Endpoint is the MCP endpoint; OAuth the target's block (its login
	// settings, a pre-registered client, scopes, issuer, DPoP).
	Endpoint string
	OAuth    *config.OAuth
	// Anonymous sends discovery, registration and token requests: the
	// target's TLS and proxy settings, no credential, no redirect.
	Anonymous *http.Client
	Version   string
	// Show is given the authorization URL for the operator to open.
	Show func(authorizationURL string)
	// Follow makes driftd open the authorization URL itself and carry
	// its redirect to the callback: for an authorization server that
	// approves without a person (automation, tests). Without it, a
	// person opens the URL.
	Follow bool
	// Device uses the device authorization grant (RFC 8628) instead of
	// a redirect: ShowDevice is given the URL to open and the code to
	// enter, on any machine.
	Device     bool
	ShowDevice func(verificationURL, userCode string)
	// MoreScopes are asked for beside the usual ones (a step-up).
	MoreScopes []string
	// Listen is the callback's address (default 127.0.0.1:0).
	Listen string
	// Budget and MaxDocumentBytes bound the metadata read, as for a run.
	Budget           *mcp.Budget
	MaxDocumentBytes int64
}

// Login runs the authorization code flow with PKCE for a person: it finds
// the authorization server by discovery, registers driftd (a configured
// client, a client ID metadata document, or dynamic registration, in
// that order), shows the authorization URL, takes the code at a loopback
// callback (RFC 8252), checks state and iss (RFC 9207), and exchanges it
// with the resource parameter, DPoP-bound when the server supports it.
//
// Nothing the login handles — the client secret, the code, the PKCE
// verifier, the tokens — reaches its error or the session's scopes: an
// authorization server may echo any of them in an error code, a
// redirect's parameters or the granted scope, and the error goes to the
// terminal as it is.
func Login(ctx context.Context, o LoginOptions) (*Session, error) {
	sec := &loginSecrets{}
	s, err := login(ctx, o, sec)
	if err != nil {
		return nil, &loginError{msg: sec.Redact(err.Error()), err: err}
	}
	return s, nil
}

// loginSecrets are the values a login handled that no message of it may
// carry.
type loginSecrets struct{ *sanitize.Secrets }

func (l *loginSecrets) add(v ...string) { l.Secrets = l.Secrets.With(v...) }

// loginError is a login's failure with its secrets redacted from the
// message; errors.Is and errors.As still see the cause (a deadline).
type loginError struct {
	msg string
	err error
}

func (e *loginError) Error() string { return e.msg }
func (e *loginError) Unwrap() error { return e.err }

func login(ctx context.Context, o LoginOptions, sec *loginSecrets) (*Session, error) {
	ep, err := url.Parse(o.Endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") {
		return nil, errors.New("the endpoint is not an http(s) URL")
	}
	cfg := o.OAuth
	if cfg == nil {
		cfg = &config.OAuth{}
	}
	login := cfg.Login
	if login == nil {
		login = &config.Login{}
	}
	// The challenge: what the server says when asked without a token.
	c := mcp.NewClient(o.Anonymous, o.Endpoint, mcp.Implementation{Name: "driftd", Version: o.Version}, mcp.Limits{MaxResponseBytes: 1 << 20, Budget: o.Budget}, nil)
	sess, err := c.Connect(ctx)
	var me *mcp.Error
	switch {
	case err == nil:
		sess.Close(ctx)
		return nil, errors.New("the server answered without authorization: there is nothing to log in to")
	case !errors.As(err, &me) || me.Reason != mcp.ReasonAuthRequired:
		return nil, fmt.Errorf("the server could not be asked: %v", err)
	}
	ch := me.Challenge
	rm, challengeScope := "", ""
	if ch != nil {
		rm, challengeScope = ch.ResourceMetadata, ch.Scope
	}
	d := discover(ctx, o.Anonymous, ep, rm, cfg.Issuer, o.Budget, o.MaxDocumentBytes)
	s, err := d.Usable()
	if err != nil {
		return nil, err
	}
	md := s.Metadata
	switch {
	case md.AuthorizationEndpoint == "":
		return nil, fmt.Errorf("the authorization server %s has no authorization_endpoint", redact(s.Issuer))
	case !o.Device && !slices.Contains(md.CodeChallengeMethods, "S256"):
		return nil, fmt.Errorf("the authorization server %s does not advertise PKCE S256 (code_challenge_methods_supported): an MCP client must not proceed", redact(s.Issuer))
	}
	for _, e := range []string{md.AuthorizationEndpoint, md.TokenEndpoint} {
		if err := tokenEndpointAllowed(e); err != nil {
			return nil, err
		}
	}
	listen := o.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("the callback cannot listen: %v", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr().String())

	if o.Device && md.DeviceAuthorizationEndpoint == "" {
		return nil, fmt.Errorf("the authorization server %s offers no device authorization (no device_authorization_endpoint): log in with the browser redirect", redact(s.Issuer))
	}
	if o.Device {
		if err := tokenEndpointAllowed(md.DeviceAuthorizationEndpoint); err != nil {
			return nil, err
		}
	}
	reg, err := register(ctx, o, cfg, login, md, redirect)
	if err != nil {
		return nil, err
	}
	sec.add(reg.secret)
	scopes := cfg.Scopes
	switch {
	case len(scopes) > 0:
	case challengeScope != "":
		scopes = strings.Fields(challengeScope)
	default:
		scopes = d.PRM.ScopesSupported
	}
	scopes = union(scopes, o.MoreScopes)
	if slices.Contains(md.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	resource := *d.PRM.Resource
	conf := &oauth2.Config{ClientID: reg.clientID, ClientSecret: reg.secret, RedirectURL: redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint, DeviceAuthURL: md.DeviceAuthorizationEndpoint,
			AuthStyle: authStyle(reg.method)}}
	var key *signer
	hc := o.Anonymous
	if useDPoP(cfg.DPoP, md.DPoPAlgs) {
		if key, err = newDPoPKey(); err != nil {
			return nil, err
		}
		hc = dpopClient(o.Anonymous.Transport, key, NewTokens())
	}
	var tok *oauth2.Token
	if o.Device {
		tok, err = device(ctx, o, conf, hc, resource, sec)
	} else {
		tok, err = authorizationCode(ctx, o, conf, hc, ln, s.Issuer, md, resource, sec)
	}
	if err != nil {
		return nil, err
	}
	sec.add(tok.AccessToken, tok.RefreshToken)
	if err := knownType(tok.TokenType); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	out := &Session{Version: SessionVersion, Endpoint: o.Endpoint, Resource: resource, Issuer: s.Issuer, TokenEndpoint: md.TokenEndpoint,
		RevocationEndpoint: md.RevocationEndpoint, Registration: reg.how, ClientID: reg.clientID, ClientAuth: reg.method,
		Scopes: scopes, RefreshToken: tok.RefreshToken, AccessToken: tok.AccessToken, TokenType: tok.TokenType, Expiry: tok.Expiry,
		LoggedInAt: now, UpdatedAt: now}
	if reg.how == RegistrationDynamic {
		out.ClientSecret = reg.secret
	}
	if key != nil {
		if out.DPoPKey, err = encodeKey(key); err != nil {
			return nil, err
		}
	}
	if granted, ok := tok.Extra("scope").(string); ok && granted != "" {
		// A scope carrying a secret is no scope: it is dropped.
		out.Scopes = slices.DeleteFunc(strings.Fields(granted), sec.Contains)
	}
	return out, nil
}

// device runs the device authorization grant (RFC 8628) through
// x/oauth2, with the resource parameter.
func device(ctx context.Context, o LoginOptions, conf *oauth2.Config, hc *http.Client, resource string, sec *loginSecrets) (*oauth2.Token, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	da, err := conf.DeviceAuth(ctx, oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return nil, fmt.Errorf("the device authorization request failed: %s", answerError(err))
	}
	sec.add(da.DeviceCode) // the user code is shown to the person; the device code is the client's secret
	if o.ShowDevice != nil {
		u := da.VerificationURIComplete
		if u == "" {
			u = da.VerificationURI
		}
		o.ShowDevice(u, da.UserCode)
	}
	tok, err := conf.DeviceAccessToken(ctx, da, oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return nil, fmt.Errorf("the device authorization ended: %s", errorCode(re.ErrorCode))
		}
		return nil, fmt.Errorf("the device authorization ended: %s", answerError(err))
	}
	return tok, nil
}

// authorizationCode shows the authorization URL, takes the response at
// the loopback callback ln, checks it and exchanges the code.
func authorizationCode(ctx context.Context, o LoginOptions, conf *oauth2.Config, hc *http.Client, ln net.Listener, issuer string, md *ServerMetadata, resource string, sec *loginSecrets) (*oauth2.Token, error) {
	redirect := conf.RedirectURL
	state, verifier := rand.Text(), oauth2.GenerateVerifier()
	sec.add(verifier)
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	got := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "<!doctype html><title>driftd</title><p>driftd: the authorization response for %s reached driftd; you can close this tab.</p>", html.EscapeString(redact(o.Endpoint)))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if o.Show != nil {
		o.Show(authURL)
	}
	followed := make(chan error, 1)
	if o.Follow {
		go func() { followed <- follow(ctx, o.Anonymous, authURL, redirect) }()
	}
	var q url.Values
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("no authorization response reached the callback: %w", ctx.Err())
	case err := <-followed:
		if err != nil {
			return nil, err
		}
		select {
		case q = <-got:
		case <-ctx.Done():
			return nil, fmt.Errorf("no authorization response reached the callback: %w", ctx.Err())
		}
	case q = <-got:
	}
	// Every code the response carries, whatever its parameters say.
	sec.add(q["code"]...)
	if q.Get("state") != state {
		return nil, errors.New("the authorization response's state is not the one sent: refused")
	}
	iss, hasIss := q.Get("iss"), q.Has("iss")
	switch {
	case md.IssParameterSupported && !hasIss:
		return nil, errors.New("the authorization server advertises the iss parameter but the response has none (RFC 9207): refused")
	case hasIss && iss != issuer:
		return nil, fmt.Errorf("the authorization response's iss is not the issuer %s (RFC 9207, compared as strings): refused", redact(issuer))
	}
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("the authorization server refused: %s", errorCode(e))
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("the authorization response has no code")
	}

	tok, err := conf.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), code, oauth2.VerifierOption(verifier),
		oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return nil, fmt.Errorf("the token endpoint %s refused the code: %s", redact(md.TokenEndpoint), errorCode(re.ErrorCode))
		}
		return nil, fmt.Errorf("the token request to %s failed: %s", redact(md.TokenEndpoint), answerError(err))
	}
	return tok, nil
}

// registration is the client a login uses.
type registration struct {
	how, clientID, secret, method string
}

// register picks the client: the configured one, a client ID metadata
// document, or dynamic registration (RFC 7591, go-sdk's
// oauthex.RegisterClient), in the spec's order of preference.
func register(ctx context.Context, o LoginOptions, cfg *config.OAuth, login *config.Login, md *ServerMetadata, redirect string) (*registration, error) {
	if cfg.ClientID != "" {
		r := &registration{how: RegistrationPre, clientID: cfg.ClientID, method: config.AuthNone}
		if cfg.ClientSecretFile != "" {
			s, err := readSecret(cfg.ClientSecretFile, "oauth.client_secret_file")
			if err != nil {
				return nil, err
			}
			r.secret = s
			r.method = config.AuthClientSecretBasic
			if m := cfg.TokenEndpointAuthMethod; m != "" {
				r.method = m
			} else if len(md.TokenEndpointAuthMethods) > 0 && !slices.Contains(md.TokenEndpointAuthMethods, config.AuthClientSecretBasic) &&
				slices.Contains(md.TokenEndpointAuthMethods, config.AuthClientSecretPost) {
				r.method = config.AuthClientSecretPost
			}
		}
		return r, nil
	}
	if login.ClientMetadataURL != "" && md.ClientIDMetadataDocument {
		return &registration{how: RegistrationMetadata, clientID: login.ClientMetadataURL, method: config.AuthNone}, nil
	}
	if md.RegistrationEndpoint == "" {
		return nil, errors.New("the authorization server offers no way to register driftd (no registration_endpoint, and no client ID metadata document support or no oauth.login.client_metadata_url): configure a pre-registered oauth.client_id")
	}
	if err := tokenEndpointAllowed(md.RegistrationEndpoint); err != nil {
		return nil, err
	}
	method := config.AuthNone
	if adv := md.TokenEndpointAuthMethods; len(adv) > 0 && !slices.Contains(adv, config.AuthNone) {
		method = config.AuthClientSecretBasic
		if !slices.Contains(adv, method) && slices.Contains(adv, config.AuthClientSecretPost) {
			method = config.AuthClientSecretPost
		}
	}
	grants := []string{"authorization_code", "refresh_token"}
	if o.Device {
		grants = append(grants, "urn:ietf:params:oauth:grant-type:device_code")
	}
	resp, err := oauthex.RegisterClient(ctx, md.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: method, GrantTypes: grants,
		ResponseTypes: []string{"code"}, ClientName: "driftd", ApplicationType: "native", SoftwareID: "driftd", SoftwareVersion: o.Version,
	}, o.Anonymous)
	if err != nil {
		// The library's error may quote the response body (a secret):
		// only the OAuth error code is kept.
		var re *oauthex.ClientRegistrationError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("dynamic client registration at %s was refused: %s", redact(md.RegistrationEndpoint), errorCode(re.ErrorCode))
		}
		return nil, fmt.Errorf("dynamic client registration at %s failed", redact(md.RegistrationEndpoint))
	}
	if resp.TokenEndpointAuthMethod != "" {
		method = resp.TokenEndpointAuthMethod
	}
	if resp.ClientSecret == "" {
		method = config.AuthNone
	}
	return &registration{how: RegistrationDynamic, clientID: resp.ClientID, secret: resp.ClientSecret, method: method}, nil
}

// follow opens the authorization URL as a browser would, without a
// person: the authorization server must redirect at once to the
// callback, which is then requested.
func follow(ctx context.Context, anon *http.Client, authURL, redirect string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := anon.Do(req)
	if err != nil {
		return fmt.Errorf("the authorization URL could not be opened: %s", scrubError(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || !strings.HasPrefix(loc, redirect+"?") {
		return fmt.Errorf("the authorization server did not redirect to the callback at once (HTTP %d): a person must log in; run without --follow", resp.StatusCode)
	}
	cb, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return err
	}
	r, err := (&http.Client{Timeout: 10 * time.Second}).Do(cb)
	if err != nil {
		return fmt.Errorf("the callback could not be reached: %s", scrubError(err))
	}
	r.Body.Close()
	return nil
}

// useDPoP decides DPoP from the configured mode and what the
// authorization server advertises.
func useDPoP(mode string, advertised []string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return slices.Contains(advertised, "ES256")
}

// authStyle is x/oauth2's for a token endpoint authentication method.
func authStyle(method string) oauth2.AuthStyle {
	if method == config.AuthClientSecretBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// discover runs Discover through anon with the bounds of a run: at most
// maxFetches documents of at most limit bytes, drawn from budget.
func discover(ctx context.Context, anon *http.Client, ep *url.URL, resourceMetadata, pinned string, budget *mcp.Budget, maxDoc int64) *Discovery {
	limit := int64(maxMetadataBytes)
	if maxDoc > 0 && maxDoc < limit {
		limit = maxDoc
	}
	left := maxFetches
	fetch := func(ctx context.Context, raw string) ([]byte, string) {
		if left == 0 {
			return nil, fmt.Sprintf("not fetched: over the limit of %d metadata fetches", maxFetches)
		}
		left--
		return Get(ctx, anon, raw, limit, budget)
	}
	return Discover(ctx, fetch, ep, resourceMetadata, pinned)
}
