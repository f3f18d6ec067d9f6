// Package oauthtest is an OAuth authorization server and a protected
// resource wrapper for tests, on loopback: RFC 8414 metadata, a token
// endpoint for the client credentials and JWT-bearer grants that checks
// every rule a client must follow (grant, client authentication,
// resource parameter, DPoP proof), and an MCP endpoint guard that serves
// RFC 9728 metadata, challenges, and checks tokens, scopes and DPoP proofs.
// It records every token request, so that tests can count them.
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Options configure the authorization server.
type Options struct {
	ClientID string
	// Secret is the client secret (client_secret_basic/_post).
	Secret string
	// ClientKey verifies private_key_jwt assertions.
	ClientKey crypto.PublicKey
	// AssertionKey verifies JWT-bearer grant assertions.
	AssertionKey crypto.PublicKey
	// Methods are token_endpoint_auth_methods_supported.
	Methods []string
	// DPoP advertises dpop_signing_alg_values_supported [ES256] and binds
	// tokens to a proof's key; Nonce makes the token endpoint and the
	// resource ask for a DPoP nonce first.
	DPoP, Nonce bool
	// Lifetime is expires_in (default an hour); 0 < Lifetime.
	Lifetime time.Duration
	// Scopes are the PRM's scopes_supported; Required is the scope the
	// resource needs, asked for with 403 insufficient_scope.
	Scopes   []string
	Required string
	// Issuer, if set, is the issuer the metadata claims (a mismatch
	// test); default the server's own URL.
	Issuer string
	// Resource, if set, is the PRM's resource (a mismatch test).
	Resource string
	// SubjectToken, if set, makes the server an enterprise identity
	// provider too: POST /idp/token exchanges exactly this subject token
	// (RFC 8693) for an ID-JAG that the token endpoint accepts as a
	// JWT-bearer assertion.
	SubjectToken string
	// Login makes it an authorization server for people too: an
	// authorization endpoint that approves at once (PKCE S256 and the
	// resource parameter required), dynamic registration of public
	// clients, the authorization code and refresh token grants, and
	// revocation. RefreshLifetime bounds a refresh token (default a
	// day); Rotate issues a new refresh token with every refresh.
	Login           bool
	RefreshLifetime time.Duration
	Rotate          bool
}

// TokenRequest is one request the token endpoint received.
type TokenRequest struct {
	Grant, Method, Resource, Scope string
	DPoP                           bool
	// Error is the OAuth error returned, "" on success.
	Error string
}

// Server is a running authorization server.
type Server struct {
	*httptest.Server
	opts Options

	mu       sync.Mutex
	requests []TokenRequest
	tokens   map[string]token
	jtis     map[string]bool
	idp      *ecdsa.PrivateKey
	clients  map[string][]string // dynamic client → redirect URIs
	codes    map[string]code
	refresh  map[string]refreshToken
}

type code struct {
	client, redirect, challenge, resource, scope string
}

type refreshToken struct {
	client, resource, scope string
	jkt                     string
	expires                 time.Time
}

type token struct {
	scopes   []string
	jkt      string
	resource string
}

// New starts an authorization server; it stops with the test.
func New(t testing.TB, opts Options) *Server {
	if opts.Lifetime == 0 {
		opts.Lifetime = time.Hour
	}
	if opts.RefreshLifetime == 0 {
		opts.RefreshLifetime = 24 * time.Hour
	}
	s := &Server{opts: opts, tokens: map[string]token{}, jtis: map[string]bool{}, clients: map[string][]string{},
		codes: map[string]code{}, refresh: map[string]refreshToken{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /token", s.token)
	if opts.Login {
		mux.HandleFunc("GET /authorize", s.authorize)
		mux.HandleFunc("POST /register", s.register)
		mux.HandleFunc("POST /revoke", s.revoke)
		mux.HandleFunc("POST /device", s.device)
	}
	if opts.SubjectToken != "" {
		s.idp, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		s.opts.AssertionKey = &s.idp.PublicKey
		mux.HandleFunc("POST /idp/token", s.exchange)
	}
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Requests returns the token requests so far.
func (s *Server) Requests() []TokenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Tokens returns the access tokens issued so far.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.tokens {
		out = append(out, k)
	}
	return out
}

func (s *Server) issuer() string {
	if s.opts.Issuer != "" {
		return s.opts.Issuer
	}
	return s.URL
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	md := map[string]any{
		"issuer": s.issuer(), "token_endpoint": s.URL + "/token",
		"grant_types_supported":            []string{"client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"code_challenge_methods_supported": []string{"S256"}, "authorization_response_iss_parameter_supported": true,
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256", "RS256"},
	}
	if s.opts.Methods != nil {
		md["token_endpoint_auth_methods_supported"] = s.opts.Methods
	}
	if s.opts.DPoP {
		md["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if s.opts.Login {
		md["authorization_endpoint"] = s.URL + "/authorize"
		md["registration_endpoint"] = s.URL + "/register"
		md["revocation_endpoint"] = s.URL + "/revoke"
		md["device_authorization_endpoint"] = s.URL + "/device"
		md["scopes_supported"] = append(slices.Clone(s.opts.Scopes), "offline_access")
		md["grant_types_supported"] = []string{"authorization_code", "refresh_token", "client_credentials"}
	}
	writeJSON(w, http.StatusOK, md)
}

// nonce is the one DPoP nonce the server hands out.
const nonce = "oauthtest-nonce"

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	req := TokenRequest{Grant: r.PostFormValue("grant_type"), Resource: r.PostFormValue("resource"), Scope: r.PostFormValue("scope")}
	fail := func(status int, code string, h ...string) {
		req.Error = code
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		for i := 0; i+1 < len(h); i += 2 {
			w.Header().Set(h[i], h[i+1])
		}
		writeJSON(w, status, map[string]string{"error": code})
	}
	id, secret, basic := r.BasicAuth()
	switch {
	case basic:
		req.Method = "client_secret_basic"
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	case r.PostFormValue("client_assertion") != "":
		req.Method = "private_key_jwt"
	case r.PostFormValue("client_secret") != "":
		req.Method, id, secret = "client_secret_post", r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	default:
		req.Method, id = "none", r.PostFormValue("client_id")
	}
	if req.Resource == "" {
		fail(http.StatusBadRequest, "invalid_target")
		return
	}
	jkt := ""
	if p := r.Header.Get("DPoP"); p != "" || s.opts.DPoP {
		req.DPoP = p != ""
		if p == "" {
			fail(http.StatusBadRequest, "invalid_dpop_proof")
			return
		}
		var err error
		if jkt, err = s.checkProof(p, "POST", s.URL+"/token", ""); err != nil {
			fail(http.StatusBadRequest, "invalid_dpop_proof")
			return
		}
		if s.opts.Nonce && claim(p, "nonce") != nonce {
			fail(http.StatusBadRequest, "use_dpop_nonce", "DPoP-Nonce", nonce)
			return
		}
	}
	switch req.Method {
	case "client_secret_basic", "client_secret_post":
		if s.opts.Methods != nil && !slices.Contains(s.opts.Methods, req.Method) || id != s.opts.ClientID || secret != s.opts.Secret || s.opts.Secret == "" {
			fail(http.StatusUnauthorized, "invalid_client")
			return
		}
	case "private_key_jwt":
		if r.PostFormValue("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || s.opts.ClientKey == nil {
			fail(http.StatusUnauthorized, "invalid_client")
			return
		}
		c, err := s.verify(r.PostFormValue("client_assertion"), s.opts.ClientKey, s.issuer())
		if err != nil || c["iss"] != s.opts.ClientID || c["sub"] != s.opts.ClientID || !s.fresh(c) {
			fail(http.StatusUnauthorized, "invalid_client")
			return
		}
	}
	var rt string // the refresh token issued with this token
	switch req.Grant {
	case "authorization_code":
		s.mu.Lock()
		c, ok := s.codes[r.PostFormValue("code")]
		delete(s.codes, r.PostFormValue("code"))
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if !ok || c.redirect != r.PostFormValue("redirect_uri") || c.challenge != base64.RawURLEncoding.EncodeToString(sum[:]) ||
			c.resource != req.Resource || (req.Method == "none" && r.PostFormValue("client_id") != c.client) {
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		req.Scope = c.scope
		if slices.Contains(strings.Fields(c.scope), "offline_access") {
			rt = s.newRefresh(refreshToken{client: c.client, resource: c.resource, scope: c.scope, jkt: jkt})
		}
	case "urn:ietf:params:oauth:grant-type:device_code":
		s.mu.Lock()
		c, ok := s.codes["device:"+r.PostFormValue("device_code")]
		delete(s.codes, "device:"+r.PostFormValue("device_code"))
		s.mu.Unlock()
		if !ok || c.resource != req.Resource || r.PostFormValue("client_id") != c.client {
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		req.Scope = c.scope
		if slices.Contains(strings.Fields(c.scope), "offline_access") {
			rt = s.newRefresh(refreshToken{client: c.client, resource: c.resource, scope: c.scope, jkt: jkt})
		}
	case "refresh_token":
		s.mu.Lock()
		old, ok := s.refresh[r.PostFormValue("refresh_token")]
		s.mu.Unlock()
		if !ok || time.Now().After(old.expires) || old.resource != req.Resource || old.jkt != jkt {
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
		req.Scope = old.scope
		rt = r.PostFormValue("refresh_token")
		if s.opts.Rotate {
			s.mu.Lock()
			delete(s.refresh, rt)
			s.mu.Unlock()
			rt = s.newRefresh(old)
		}
	case "client_credentials":
		if req.Method == "none" {
			fail(http.StatusUnauthorized, "invalid_client")
			return
		}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if s.opts.AssertionKey == nil {
			fail(http.StatusBadRequest, "unsupported_grant_type")
			return
		}
		if _, err := s.verify(r.PostFormValue("assertion"), s.opts.AssertionKey, s.issuer()); err != nil {
			fail(http.StatusBadRequest, "invalid_grant")
			return
		}
	default:
		fail(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	s.mu.Lock()
	tok := fmt.Sprintf("oauthtest-token-%d-%d", len(s.requests), time.Now().UnixNano())
	s.tokens[tok] = token{scopes: strings.Fields(req.Scope), jkt: jkt, resource: req.Resource}
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	resp := map[string]any{"access_token": tok, "token_type": typ, "expires_in": int(s.opts.Lifetime.Seconds())}
	if req.Scope != "" {
		resp["scope"] = req.Scope
	}
	if rt != "" && (req.Grant != "refresh_token" || s.opts.Rotate) {
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) newRefresh(r refreshToken) string {
	r.expires = time.Now().Add(s.opts.RefreshLifetime)
	v := "oauthtest-refresh-" + rand.Text()
	s.mu.Lock()
	s.refresh[v] = r
	s.mu.Unlock()
	return v
}

// ExpireRefresh ends every refresh token, as their expiry or a
// revocation would, and every access token with them.
func (s *Server) ExpireRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
	clear(s.tokens)
}

// RefreshTokens returns how many refresh tokens are valid.
func (s *Server) RefreshTokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refresh)
}

// authorize approves at once: it checks what a client must send and
// redirects to the callback with the code, the state and iss.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	client, redirect := q.Get("client_id"), q.Get("redirect_uri")
	s.mu.Lock()
	uris, dynamic := s.clients[client]
	s.mu.Unlock()
	registered := dynamic && slices.Contains(uris, redirect) || client == s.opts.ClientID && client != ""
	ru, err := url.Parse(redirect)
	if !registered || err != nil || ru.Hostname() != "127.0.0.1" || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	c := rand.Text()
	s.mu.Lock()
	s.codes[c] = code{client: client, redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
	s.mu.Unlock()
	v := url.Values{"code": {c}, "state": {q.Get("state")}, "iss": {s.issuer()}}
	http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
}

// register is dynamic client registration (RFC 7591) of public clients.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "oauthtest-client-" + rand.Text()
	s.mu.Lock()
	s.clients[id] = md.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// device starts a device authorization (RFC 8628) that a person has
// already approved: the first poll gets the token.
func (s *Server) device(w http.ResponseWriter, r *http.Request) {
	dc := rand.Text()
	s.mu.Lock()
	s.codes["device:"+dc] = code{client: r.PostFormValue("client_id"), resource: r.PostFormValue("resource"), scope: r.PostFormValue("scope")}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"device_code": dc, "user_code": "WDJB-MJHT", "verification_uri": s.URL + "/device-login",
		"expires_in": 600, "interval": 1})
}

// revoke ends a refresh or access token (RFC 7009).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	t := r.PostFormValue("token")
	s.mu.Lock()
	delete(s.refresh, t)
	delete(s.tokens, t)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// exchange is the identity provider's token exchange.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	req := TokenRequest{Grant: r.PostFormValue("grant_type"), Resource: r.PostFormValue("resource"), Scope: r.PostFormValue("scope"), Method: "idp"}
	ok := req.Grant == "urn:ietf:params:oauth:grant-type:token-exchange" &&
		r.PostFormValue("subject_token") == s.opts.SubjectToken &&
		r.PostFormValue("subject_token_type") == "urn:ietf:params:oauth:token-type:id_token" &&
		r.PostFormValue("requested_token_type") == "urn:ietf:params:oauth:token-type:id-jag" &&
		r.PostFormValue("audience") == s.issuer() && req.Resource != ""
	if !ok {
		req.Error = "invalid_grant"
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	jag, _ := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": s.URL + "/idp", "sub": "driftd", "aud": s.issuer(),
		"resource": req.Resource, "exp": time.Now().Add(5 * time.Minute).Unix(), "jti": rand.Text()}).SignedString(s.idp)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
}

// verify checks a JWT's signature with key, its audience (the issuer,
// with or without a trailing slash) and expiry.
func (s *Server) verify(raw string, key crypto.PublicKey, aud string) (jwt.MapClaims, error) {
	c := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, c, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"ES256", "RS256"}), jwt.WithExpirationRequired())
	if err != nil {
		return nil, err
	}
	auds, _ := c.GetAudience()
	if !slices.Contains(auds, aud) && !slices.Contains(auds, aud+"/") {
		return nil, fmt.Errorf("audience %v", auds)
	}
	return c, nil
}

// fresh reports whether an assertion's jti was not seen before.
func (s *Server) fresh(c jwt.MapClaims) bool {
	id, _ := c["jti"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" || s.jtis[id] {
		return false
	}
	s.jtis[id] = true
	return true
}

// checkProof verifies a DPoP proof (RFC 9449 §4.3) for method and target
// and, when token is set, its ath; it returns the key's thumbprint.
func (s *Server) checkProof(p, method, target, tok string) (string, error) {
	var jwk map[string]any
	c := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(p, c, func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, fmt.Errorf("typ %v", t.Header["typ"])
		}
		jwk, _ = t.Header["jwk"].(map[string]any)
		if jwk == nil || jwk["d"] != nil {
			return nil, fmt.Errorf("jwk")
		}
		return publicKey(jwk)
	}, jwt.WithValidMethods([]string{"ES256"}))
	if err != nil || !parsed.Valid {
		return "", fmt.Errorf("proof: %v", err)
	}
	if c["htm"] != method || c["htu"] != target {
		return "", fmt.Errorf("htm %v htu %v", c["htm"], c["htu"])
	}
	iat, _ := c["iat"].(float64)
	if d := time.Since(time.Unix(int64(iat), 0)); d > time.Minute || d < -time.Minute {
		return "", fmt.Errorf("iat")
	}
	if tok != "" {
		sum := sha256.Sum256([]byte(tok))
		if c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", fmt.Errorf("ath")
		}
	}
	if !s.fresh(c) {
		return "", fmt.Errorf("jti replayed")
	}
	return thumbprint(jwk), nil
}

// Protect serves next as a protected resource whose URL is resource():
// RFC 9728 metadata at the path-inserted well-known URL, a 401 with a
// challenge without a valid token, 403 insufficient_scope without the
// required scope.
func (s *Server) Protect(resource func() string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := resource()
		ru, _ := url.Parse(res)
		wk := "/.well-known/oauth-protected-resource" + strings.TrimSuffix(ru.Path, "/")
		if r.URL.Path == wk {
			prm := map[string]any{"resource": res, "authorization_servers": []string{s.URL}}
			if s.opts.Resource != "" {
				prm["resource"] = s.opts.Resource
			}
			if s.opts.Scopes != nil {
				prm["scopes_supported"] = s.opts.Scopes
			}
			writeJSON(w, http.StatusOK, prm)
			return
		}
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		challenge := func(status int, extra string) {
			v := fmt.Sprintf(`Bearer resource_metadata="%s://%s%s"`, ru.Scheme, ru.Host, wk)
			if s.opts.DPoP {
				v = fmt.Sprintf(`DPoP algs="ES256", resource_metadata="%s://%s%s"`, ru.Scheme, ru.Host, wk)
			}
			if extra != "" {
				v += ", " + extra
			}
			w.Header().Set("WWW-Authenticate", v)
			writeJSON(w, status, map[string]string{"error": "unauthorized"})
		}
		s.mu.Lock()
		info, ok := s.tokens[tok]
		s.mu.Unlock()
		if tok == "" || !ok || info.resource != res {
			challenge(http.StatusUnauthorized, `error="invalid_token"`)
			return
		}
		if info.jkt != "" {
			if !strings.EqualFold(scheme, "DPoP") {
				challenge(http.StatusUnauthorized, `error="invalid_token"`)
				return
			}
			p := r.Header.Get("DPoP")
			jkt, err := s.checkProof(p, r.Method, res, tok)
			if err != nil || jkt != info.jkt {
				challenge(http.StatusUnauthorized, `error="invalid_dpop_proof"`)
				return
			}
			if s.opts.Nonce && claim(p, "nonce") != nonce {
				w.Header().Set("DPoP-Nonce", nonce)
				challenge(http.StatusUnauthorized, `error="use_dpop_nonce"`)
				return
			}
		} else if !strings.EqualFold(scheme, "Bearer") {
			challenge(http.StatusUnauthorized, `error="invalid_token"`)
			return
		}
		if s.opts.Required != "" && !slices.Contains(info.scopes, s.opts.Required) {
			challenge(http.StatusForbidden, fmt.Sprintf(`error="insufficient_scope", scope="%s"`, s.opts.Required))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Revoke forgets every token issued: the next request with one is
// refused with 401 invalid_token.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

func claim(p, name string) string {
	c := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(p, c); err != nil {
		return ""
	}
	v, _ := c[name].(string)
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
