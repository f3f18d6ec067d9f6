package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// The OAuth rows' secrets. Every one starts with oauthMark, so a sweep for
// it finds any of them, whole or cut after the prefix.
const (
	oauthMark        = "MARKER-oauth"
	oauthSecret      = "MARKER-oauth-client-5ecr3t-2c9e"
	oauthShortSecret = "MARKER-oauth-sh"
	oauthAssertion   = "MARKER-oauth-assertion-6d1f"
	oauthKeyNote     = "MARKER-oauth-key-pem-8b40"          // a header line of the PEM key
	oauthIdPSecret   = "MARKER-oauth-idp-5ecr3t-77a1"       // driftd's secret at the identity provider
	oauthSubject     = "MARKER-oauth-subject-id-token-3e9f" // the identity token exchanged
	oauthIDJAGPre    = "MARKER-oauth-idjag-"                // every ID-JAG the identity provider issues
	oauthTokenPre    = "MARKER-oauth-token-"                // every access token issued
	oauthClient      = "faults-client"
	// A person's login (the Login rows).
	oauthCodePre      = "MARKER-oauth-code-"       // every authorization code
	oauthRefreshPre   = "MARKER-oauth-refresh-"    // every refresh token
	oauthDCRSecretPre = "MARKER-oauth-dcr-5ecr3t-" // every client secret registration issues
)

// oauthPeers is a hostile authorization server, the MCP server it
// protects, and an "other host" nothing may be sent to, on loopback. Each
// behaviour of theirs is a field; what they received is recorded so the
// sweep can look for it.
type oauthPeers struct {
	as, rs, other *httptest.Server
	mock          http.Handler

	// token answers a token request (after it was recorded); nil issues
	// a marker-bearing token.
	token func(p *oauthPeers, w http.ResponseWriter, r *http.Request)
	// asMeta and prm answer the metadata requests; nil serves correct
	// documents.
	asMeta, prm func(p *oauthPeers, w http.ResponseWriter, r *http.Request)
	// idp answers a token exchange at /idp/token (after it was
	// recorded); nil issues a marker-bearing ID-JAG.
	idp func(p *oauthPeers, w http.ResponseWriter, r *http.Request)
	// mcp answers an MCP request that presents an issued token and
	// reports whether it did; false hands it to the mock.
	mcp func(p *oauthPeers, w http.ResponseWriter, r *http.Request, q rpcReq) bool
	// dpop makes the authorization server advertise DPoP (ES256).
	dpop bool

	// login makes the authorization server one for a person's login:
	// it advertises /authorize (PKCE S256, iss) and /register, and its
	// tokens come with a marker refresh token and expire at once, so
	// every run refreshes.
	login bool
	// authorize answers the authorization request; nil redirects to
	// its redirect_uri at once with a marker code.
	authorize func(p *oauthPeers, w http.ResponseWriter, r *http.Request)
	// register answers dynamic client registration (after it was
	// counted); nil registers a client with a marker client secret.
	register func(p *oauthPeers, w http.ResponseWriter, r *http.Request)
	// refresh answers a refresh_token grant (after it was recorded);
	// nil issues.
	refresh func(p *oauthPeers, w http.ResponseWriter, r *http.Request)

	mu     sync.Mutex
	issued int
	seen   []string // client assertions and DPoP proofs received

	otherPaths []string // the paths the other host was asked for

	tokenRequests   atomic.Int64
	refreshRequests atomic.Int64 // refresh_token grants
	registrations   atomic.Int64
	authorizations  atomic.Int64
	otherHits       atomic.Int64 // requests the other host received
	injected        atomic.Bool  // a request carried a header smuggled in a token
}

// start starts the three servers; they stop with the test.
func (p *oauthPeers) start(tb testing.TB) *oauthPeers {
	p.mock = mcptest.NewHandler(mcptest.Options{Tools: tools("a")})
	ctx, cancel := context.WithCancel(context.Background())
	// Handlers wait until every server is started: they read each
	// other's URLs, and a request from the child process is no
	// happens-before edge the race detector sees.
	ready := make(chan struct{})
	serve := func(h http.HandlerFunc) *httptest.Server {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-ready
			h(w, r)
		}))
		// A hanging answer ends when the test's servers stop.
		s.Config.BaseContext = func(net.Listener) context.Context { return ctx }
		s.Start()
		return s
	}
	p.as = serve(p.serveAS)
	p.rs = serve(p.serveRS)
	p.other = serve(func(w http.ResponseWriter, r *http.Request) {
		p.otherHits.Add(1)
		p.record(r)
		p.mu.Lock()
		p.otherPaths = append(p.otherPaths, r.URL.Path)
		p.mu.Unlock()
		writeJSON(w, http.StatusOK, []byte(`{"issuer":"`+p.other.URL+`","token_endpoint":"`+p.other.URL+`/token","access_token":"`+oauthTokenPre+`other","token_type":"Bearer"}`))
	})
	close(ready)
	tb.Cleanup(func() {
		cancel()
		for _, s := range []*httptest.Server{p.as, p.rs, p.other} {
			s.CloseClientConnections()
			s.Close()
		}
	})
	return p
}

// endpoint is the MCP endpoint's URL.
func (p *oauthPeers) endpoint() string { return p.rs.URL + "/mcp" }

func (p *oauthPeers) prmURL() string { return p.rs.URL + "/.well-known/oauth-protected-resource/mcp" }

// newToken is a fresh access token carrying the marker.
func (p *oauthPeers) newToken() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.issued++
	return fmt.Sprintf("%s%d-%d", oauthTokenPre, p.issued, time.Now().UnixNano())
}

// record keeps the one-use credentials a request carried.
func (p *oauthPeers) record(r *http.Request) {
	var vals []string
	if v := r.Header.Get("DPoP"); v != "" {
		vals = append(vals, v)
	}
	if r.Method == http.MethodPost && r.URL.Path == "/token" {
		// The PKCE verifier is driftd's own secret; the Basic credential
		// carries a registered client's secret.
		for _, k := range []string{"client_assertion", "code_verifier"} {
			if v := r.PostFormValue(k); v != "" {
				vals = append(vals, v)
			}
		}
		if v := r.Header.Get("Authorization"); strings.HasPrefix(v, "Basic ") {
			vals = append(vals, strings.TrimPrefix(v, "Basic "))
		}
	}
	if r.Header.Get("X-Injected") != "" {
		p.injected.Store(true)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, vals...)
}

// received returns the one-use credentials received so far.
func (p *oauthPeers) received() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *oauthPeers) serveAS(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/token":
		p.tokenRequests.Add(1)
		_ = r.ParseForm()
		p.record(r)
		if r.PostFormValue("grant_type") == "refresh_token" {
			p.refreshRequests.Add(1)
			if p.refresh != nil {
				p.refresh(p, w, r)
				return
			}
		} else if p.token != nil {
			p.token(p, w, r)
			return
		}
		p.issue(w, r, nil)
	case r.URL.Path == "/authorize" && p.login:
		p.authorizations.Add(1)
		if p.authorize != nil {
			p.authorize(p, w, r)
			return
		}
		p.approve(w, r, nil)
	case r.URL.Path == "/register" && p.login:
		p.registrations.Add(1)
		if p.register != nil {
			p.register(p, w, r)
			return
		}
		p.registerClient(w, nil)
	case r.URL.Path == "/idp/token":
		p.tokenRequests.Add(1)
		_ = r.ParseForm()
		p.record(r)
		if p.idp != nil {
			p.idp(p, w, r)
			return
		}
		p.issueIDJAG(w, nil)
	case strings.HasPrefix(r.URL.Path, "/.well-known/"):
		if p.asMeta != nil {
			p.asMeta(p, w, r)
			return
		}
		p.serveASMeta(w, r, nil)
	default:
		http.NotFound(w, r)
	}
}

// serveASMeta serves correct RFC 8414 metadata with extra members.
func (p *oauthPeers) serveASMeta(w http.ResponseWriter, _ *http.Request, extra map[string]any) {
	md := map[string]any{"issuer": p.as.URL, "token_endpoint": p.as.URL + "/token",
		"grant_types_supported":                            []string{"client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"token_endpoint_auth_methods_supported":            []string{"client_secret_basic", "client_secret_post", "private_key_jwt"},
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256"}}
	if p.dpop {
		md["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if p.login {
		md["authorization_endpoint"] = p.as.URL + "/authorize"
		md["registration_endpoint"] = p.as.URL + "/register"
		md["code_challenge_methods_supported"] = []string{"S256"}
		md["authorization_response_iss_parameter_supported"] = true
		md["grant_types_supported"] = []string{"authorization_code", "refresh_token"}
		md["scopes_supported"] = []string{"mcp", "offline_access"}
	}
	maps.Copy(md, extra)
	b, _ := json.Marshal(md)
	writeJSON(w, http.StatusOK, b)
}

// issue answers a token request with a fresh marker token, DPoP-bound when
// the request carried a proof, with extra members.
func (p *oauthPeers) issue(w http.ResponseWriter, r *http.Request, extra func(tok string) map[string]any) {
	tok := p.newToken()
	resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600}
	if r.Header.Get("DPoP") != "" {
		resp["token_type"] = "DPoP"
	}
	if p.login {
		// Under driftd's 10 s margin: every run refreshes.
		resp["expires_in"] = 5
		resp["refresh_token"] = p.newSecret(oauthRefreshPre)
	}
	if extra != nil {
		maps.Copy(resp, extra(tok))
	}
	b, _ := json.Marshal(resp)
	writeJSON(w, http.StatusOK, b)
}

// newSecret is a fresh marker value with prefix pre.
func (p *oauthPeers) newSecret(pre string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.issued++
	return fmt.Sprintf("%s%d-%d", pre, p.issued, time.Now().UnixNano())
}

// approve answers an authorization request as a server that approves
// at once: a redirect to its redirect_uri with a marker code, the state
// and iss, and the extra parameters extra makes of the code.
func (p *oauthPeers) approve(w http.ResponseWriter, r *http.Request, extra func(code string) url.Values) {
	q := r.URL.Query()
	code := p.newSecret(oauthCodePre)
	v := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {p.as.URL}}
	if extra != nil {
		maps.Copy(v, extra(code))
	}
	http.Redirect(w, r, q.Get("redirect_uri")+"?"+v.Encode(), http.StatusFound)
}

// registerClient answers a dynamic client registration (RFC 7591) with
// a marker client secret, and the extra members extra makes of it.
func (p *oauthPeers) registerClient(w http.ResponseWriter, extra func(secret string) map[string]any) {
	secret := p.newSecret(oauthDCRSecretPre)
	resp := map[string]any{"client_id": "faults-dcr-client", "client_secret": secret, "client_secret_expires_at": 0,
		"token_endpoint_auth_method": "client_secret_basic", "redirect_uris": []string{"http://127.0.0.1/callback"}}
	if extra != nil {
		maps.Copy(resp, extra(secret))
	}
	b, _ := json.Marshal(resp)
	writeJSON(w, http.StatusCreated, b)
}

// issueIDJAG answers a token exchange with a fresh marker ID-JAG, with
// extra members.
func (p *oauthPeers) issueIDJAG(w http.ResponseWriter, extra func(jag string) map[string]any) {
	p.mu.Lock()
	p.issued++
	jag := fmt.Sprintf("%s%d-%d", oauthIDJAGPre, p.issued, time.Now().UnixNano())
	p.mu.Unlock()
	resp := map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A", "expires_in": 300}
	if extra != nil {
		maps.Copy(resp, extra(jag))
	}
	b, _ := json.Marshal(resp)
	writeJSON(w, http.StatusOK, b)
}

func (p *oauthPeers) serveRS(w http.ResponseWriter, r *http.Request) {
	p.record(r)
	if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
		if p.prm != nil {
			p.prm(p, w, r)
			return
		}
		p.servePRM(w, r, nil)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var q rpcReq
	_ = json.Unmarshal(body, &q)
	q.Auth = r.Header.Get("Authorization")
	if _, tok, _ := strings.Cut(q.Auth, " "); !strings.HasPrefix(tok, oauthTokenPre) {
		// No token of ours: a challenge, and a body that echoes what came.
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+p.prmURL()+`"`)
		b, _ := json.Marshal(map[string]string{"error": "unauthorized", "authorization": q.Auth, "dpop": r.Header.Get("DPoP")})
		writeJSON(w, http.StatusUnauthorized, b)
		return
	}
	if p.mcp != nil && p.mcp(p, w, r, q) {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.mock.ServeHTTP(w, r)
}

// servePRM serves correct RFC 9728 metadata with extra members.
func (p *oauthPeers) servePRM(w http.ResponseWriter, _ *http.Request, extra map[string]any) {
	prm := map[string]any{"resource": p.endpoint(), "authorization_servers": []string{p.as.URL}}
	maps.Copy(prm, extra)
	b, _ := json.Marshal(prm)
	writeJSON(w, http.StatusOK, b)
}

// presented is what a request presented: its Authorization and DPoP
// headers, and the token alone.
func presented(r *http.Request) (auth, proof, tok string) {
	auth, proof = r.Header.Get("Authorization"), r.Header.Get("DPoP")
	_, tok, _ = strings.Cut(auth, " ")
	return auth, proof, tok
}

// headerDump is every request header, name: value, one string.
func headerDump(r *http.Request) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		fmt.Fprintf(&b, "%s: %s; ", k, strings.Join(r.Header[k], ", "))
	}
	return b.String()
}

// formSecrets is every credential a token request carried, one string:
// the client secret (Basic or form), the assertion, the client assertion,
// the subject token and the Authorization and DPoP headers as sent.
func formSecrets(r *http.Request) string {
	_, secret, _ := r.BasicAuth()
	if s := r.PostFormValue("client_secret"); s != "" {
		secret = s
	}
	return fmt.Sprintf("secret %s assertion %s client_assertion %s subject_token %s authorization %s dpop %s",
		secret, r.PostFormValue("assertion"), r.PostFormValue("client_assertion"), r.PostFormValue("subject_token"), r.Header.Get("Authorization"), r.Header.Get("DPoP"))
}

// The MCP server's echoes of what a request presented.

// echoListing serves the Authorization and DPoP headers and the token back
// in serverInfo, tool names, titles, descriptions and schema text.
func echoListing(_ *oauthPeers, w http.ResponseWriter, r *http.Request, q rpcReq) bool {
	auth, proof, tok := presented(r)
	both := auth + " DPoP: " + proof
	switch q.Method {
	case "server/discover":
		writeJSON(w, http.StatusOK, modernBody(q.idText(),
			`"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},`+serverInfoMeta(both, tok)))
	case "tools/list":
		schema := map[string]any{"type": "object", "title": auth, "description": proof,
			"properties": map[string]any{tok: map[string]any{"type": "string", "default": proof, "enum": []string{auth, tok}}}}
		list := []any{
			map[string]any{"name": tok, "description": both, "inputSchema": map[string]any{"type": "object"}},
			map[string]any{"name": proof, "title": auth, "description": "token " + tok, "inputSchema": schema, "annotations": map[string]any{"title": both}},
			map[string]any{"name": "a", "description": both, "inputSchema": schema},
		}
		b, _ := json.Marshal(list)
		writeJSON(w, http.StatusOK, modernBody(q.idText(), `"tools":`+string(b)+`,`+serverInfoMeta(tok, both)))
	default:
		return false
	}
	return true
}

// echoRPCError answers tools/list with a JSON-RPC error whose message and
// data echo what the request presented.
func echoRPCError(_ *oauthPeers, w http.ResponseWriter, r *http.Request, q rpcReq) bool {
	if q.Method != "tools/list" {
		return false
	}
	auth, proof, tok := presented(r)
	e, _ := json.Marshal(map[string]any{"code": -32603, "message": "refused " + auth + " with proof " + proof,
		"data": map[string]string{"token": tok, "dpop": proof}})
	writeJSON(w, http.StatusOK, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"error":`+string(e)+`}`))
	return true
}

// echoRefusal refuses every token with a 401 whose challenges and body
// echo what the request presented.
func echoRefusal(p *oauthPeers, w http.ResponseWriter, r *http.Request, _ rpcReq) bool {
	auth, proof, tok := presented(r)
	w.Header().Add("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", error_description="%s", scope="%s", resource_metadata="%s"`, auth, tok, p.prmURL()))
	w.Header().Add("WWW-Authenticate", fmt.Sprintf(`DPoP error="invalid_token", error_description="%s", algs="ES256"`, proof))
	b, _ := json.Marshal(map[string]string{"error": "invalid_token", "authorization": auth, "dpop": proof, "token": tok})
	writeJSON(w, http.StatusUnauthorized, b)
	return true
}

// echoForbidden answers 403 insufficient_scope asking for the token as a
// scope, its body echoing what the request presented.
func echoForbidden(_ *oauthPeers, w http.ResponseWriter, r *http.Request, _ rpcReq) bool {
	auth, proof, tok := presented(r)
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", error_description="%s"`, tok, proof))
	b, _ := json.Marshal(map[string]string{"error": "insufficient_scope", "authorization": auth, "dpop": proof})
	writeJSON(w, http.StatusForbidden, b)
	return true
}

// The authorization server's misbehaviours.

// oauthRefuse answers a token request with an OAuth error made by msg.
func oauthRefuse(status int, msg func(r *http.Request) map[string]string) func(*oauthPeers, http.ResponseWriter, *http.Request) {
	return func(_ *oauthPeers, w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(msg(r))
		writeJSON(w, status, b)
	}
}

// oauthRefuseForm is oauthRefuse in application/x-www-form-urlencoded,
// which x/oauth2 also reads.
func oauthRefuseForm(msg func(r *http.Request) string) func(*oauthPeers, http.ResponseWriter, *http.Request) {
	return func(_ *oauthPeers, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, msg(r))
	}
}

// hang never answers until the client or the test goes away.
func hang(_ *oauthPeers, w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(20 * time.Second):
	}
}

// tenMiB answers 200 with 10 MiB of an access token that never ends.
func tenMiB(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"token_type":"Bearer","access_token":"`+p.newToken())
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for range 160 {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, `"}`)
}

// redirectOther answers 307 to the same path on the other host.
func redirectOther(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, p.other.URL+r.URL.Path, http.StatusTemporaryRedirect)
}
