package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/oauth/oauthtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is an authorization server, a protected endpoint behind it, and a
// Transport presenting cfg to it.
type rig struct {
	as       *oauthtest.Server
	endpoint string
	tr       *Transport
	tokens   *Tokens
	served   int
	mu       sync.Mutex
}

func newRig(t *testing.T, opts oauthtest.Options, cfg config.OAuth) *rig {
	t.Helper()
	r := &rig{as: oauthtest.New(t, opts), tokens: NewTokens()}
	var rs *httptest.Server
	rs = httptest.NewServer(r.as.Protect(func() string { return rs.URL + "/mcp" }, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if string(b) != "ping" {
			http.Error(w, "body not resent", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.served++
		r.mu.Unlock()
		_, _ = io.WriteString(w, "pong")
	})))
	t.Cleanup(rs.Close)
	r.endpoint = rs.URL + "/mcp"
	base := http.DefaultTransport.(*http.Transport).Clone()
	r.tr = &Transport{Base: base, Tokens: r.tokens, OAuth: &cfg, Endpoint: r.endpoint,
		Anonymous: func() (*http.Client, error) {
			return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, nil
		}}
	t.Cleanup(r.tr.CloseIdleConnections)
	return r
}

// call sends one request as a run would, and returns its status and usage.
func (r *rig) call(t *testing.T) (int, UsageReport) {
	t.Helper()
	u := &Usage{}
	ctx, cancel := context.WithTimeout(WithUsage(context.Background(), u), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, strings.NewReader("ping"))
	resp, err := (&http.Client{Transport: r.tr, CheckRedirect: noRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, u.Report()
}

func secretFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClientSecretOneTokenForManyRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		methods []string
		want    string
	}{
		{"none advertised is basic", nil, "client_secret_basic"},
		{"basic", []string{"client_secret_basic", "client_secret_post"}, "client_secret_basic"},
		{"only post", []string{"client_secret_post"}, "client_secret_post"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker", Methods: tc.methods},
				config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker\n")})
			status, u := r.call(t)
			if status != http.StatusOK || u.Err != nil {
				t.Fatalf("status %d, err %v", status, u.Err)
			}
			if len(u.Requests) != 1 || u.Requests[0] != "success" || !u.Fetched || u.Scheme != "Bearer" || u.Method != tc.want {
				t.Fatalf("usage %+v", u)
			}
			for range 5 {
				if status, u := r.call(t); status != http.StatusOK || len(u.Requests) != 0 || u.Fetched {
					t.Fatalf("a cached token was not reused: %d %+v", status, u)
				}
			}
			reqs := r.as.Requests()
			if len(reqs) != 1 || reqs[0].Method != tc.want || reqs[0].Resource != r.endpoint || reqs[0].Grant != "client_credentials" {
				t.Fatalf("token requests %+v", reqs)
			}
		})
	}
}

func TestConcurrentRunsShareOneTokenRequest(t *testing.T) {
	r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker"},
		config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker")})
	if status, _ := r.call(t); status != http.StatusOK { // discovery done once
		t.Fatal(status)
	}
	r.as.Revoke()
	r.tokens.mu.Lock()
	clear(r.tokens.entries)
	r.tokens.mu.Unlock()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if status, _ := r.call(t); status != http.StatusOK {
				t.Errorf("status %d", status)
			}
		})
	}
	wg.Wait()
	if n := len(r.as.Requests()); n != 2 {
		t.Fatalf("%d token requests, want 2 (one before, one for 20 concurrent runs)", n)
	}
}

func pemFile(t *testing.T, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return secretFile(t, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
}

func TestPrivateKeyJWT(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name   string
		signed any
		known  any
		ok     bool
	}{
		{"ES256", ec, &ec.PublicKey, true},
		{"RS256", rk, &rk.PublicKey, true},
		{"a key the server does not know", other, &ec.PublicKey, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, oauthtest.Options{ClientID: "driftd", ClientKey: tc.known, Methods: []string{"private_key_jwt"}},
				config.OAuth{ClientID: "driftd", PrivateKeyFile: pemFile(t, tc.signed)})
			status, u := r.call(t)
			if tc.ok {
				if status != http.StatusOK || u.Method != "private_key_jwt" {
					t.Fatalf("status %d usage %+v", status, u)
				}
				return
			}
			if status != http.StatusUnauthorized || u.Err == nil || !strings.Contains(u.Err.Error(), "invalid_client") ||
				len(u.Requests) != 1 || u.Requests[0] != "invalid_client" {
				t.Fatalf("a refused assertion: status %d usage %+v", status, u)
			}
		})
	}
}

func assertion(t *testing.T, key *ecdsa.PrivateKey, aud string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": "https://idp.example", "sub": "system:serviceaccount:monitoring:driftd",
		"aud": aud, "exp": time.Now().Add(time.Hour).Unix(), "jti": rand.Text()}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWTBearerRereadsTheAssertionFile(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	r := newRig(t, oauthtest.Options{AssertionKey: &key.PublicKey}, config.OAuth{})
	file := secretFile(t, "token", assertion(t, key, r.as.URL))
	r.tr.OAuth.AssertionFile = file
	status, u := r.call(t)
	if status != http.StatusOK || u.Grant != "JWT-bearer" || u.Method != "none" {
		t.Fatalf("status %d usage %+v", status, u)
	}
	// The projected token rotates on disk: the next token request reads
	// the new one (here one for another audience, which is refused).
	if err := os.WriteFile(file, []byte(assertion(t, key, "https://elsewhere.example")), 0o600); err != nil {
		t.Fatal(err)
	}
	r.as.Revoke()
	status, u = r.call(t)
	if status != http.StatusUnauthorized || len(u.Requests) != 1 || u.Requests[0] != "invalid_grant" {
		t.Fatalf("status %d usage %+v", status, u)
	}
	if reqs := r.as.Requests(); len(reqs) != 2 || reqs[1].Grant != GrantJWTBearer {
		t.Fatalf("requests %+v: a failed JWT-bearer request is not retried", reqs)
	}
}

func TestDPoPWithNonces(t *testing.T) {
	r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker", DPoP: true, Nonce: true},
		config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker")})
	status, u := r.call(t)
	if status != http.StatusOK || u.Scheme != "DPoP" {
		t.Fatalf("status %d usage %+v", status, u)
	}
	reqs := r.as.Requests()
	if len(reqs) != 2 || reqs[0].Error != "use_dpop_nonce" || reqs[1].Error != "" || !reqs[1].DPoP {
		t.Fatalf("token requests %+v: want a nonce challenge, then a token", reqs)
	}
	// Every request carries a fresh proof (the server refuses a replayed
	// jti) with the nonce it gave.
	for range 3 {
		if status, _ := r.call(t); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
	}
	never := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker", DPoP: true},
		config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker"), DPoP: "never"})
	if status, u := never.call(t); status != http.StatusUnauthorized || u.Requests[0] != "invalid_dpop_proof" {
		t.Fatalf("dpop: never against a server that requires it: %d %+v", status, u)
	}
}

func TestRefusedTokenIsReplaced(t *testing.T) {
	r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker"},
		config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker")})
	r.call(t)
	r.as.Revoke() // the server no longer accepts the cached token
	status, u := r.call(t)
	if status != http.StatusOK || len(u.Requests) != 1 {
		t.Fatalf("status %d usage %+v", status, u)
	}
	if n := len(r.as.Requests()); n != 2 {
		t.Fatalf("%d token requests, want 2", n)
	}
}

func TestTokenRenewedBeforeExpiry(t *testing.T) {
	r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker", Lifetime: 100 * time.Second},
		config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker")})
	now := time.Now()
	r.tokens.now = func() time.Time { return now }
	r.call(t)
	now = now.Add(85 * time.Second) // 15 s left: more than the 10 s margin
	if _, u := r.call(t); len(u.Requests) != 0 {
		t.Fatalf("renewed too early: %+v", u)
	}
	now = now.Add(6 * time.Second) // 9 s left
	if _, u := r.call(t); len(u.Requests) != 1 {
		t.Fatalf("not renewed within the margin: %+v", u)
	}
}

func TestStepUpOnInsufficientScope(t *testing.T) {
	r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker", Scopes: []string{"tools.read"}, Required: "tools.admin"},
		config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker")})
	status, _ := r.call(t)
	reqs := r.as.Requests()
	if status != http.StatusOK || len(reqs) != 2 || reqs[0].Scope != "tools.read" || reqs[1].Scope != "tools.read tools.admin" {
		t.Fatalf("status %d requests %+v", status, reqs)
	}
	// The stepped-up scopes are what the endpoint gets from now on.
	if _, u := r.call(t); len(u.Requests) != 0 {
		t.Fatalf("%+v", u)
	}
}

func TestNoCredentialWhereDiscoveryDoesNotVouch(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts oauthtest.Options
		want string
	}{
		{"resource mismatch", oauthtest.Options{Resource: "https://evil.example/mcp"}, "names a resource other than the endpoint"},
		{"issuer mismatch", oauthtest.Options{Issuer: "https://evil.example"}, "names an issuer other than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.ClientID, tc.opts.Secret = "driftd", "s3cret-marker"
			r := newRig(t, tc.opts, config.OAuth{ClientID: "driftd", ClientSecretFile: secretFile(t, "secret", "s3cret-marker")})
			status, u := r.call(t)
			if status != http.StatusUnauthorized || u.Err == nil || !strings.Contains(u.Err.Error(), tc.want) {
				t.Fatalf("status %d usage %+v", status, u)
			}
			if n := len(r.as.Requests()); n != 0 {
				t.Fatalf("%d token requests: a credential went where discovery did not vouch for", n)
			}
		})
	}
}

func TestDiscoverFetchRule(t *testing.T) {
	endpoint, _ := url.Parse("https://mcp.example/tenant/mcp?key=v")
	var fetched []string
	fetch := func(_ context.Context, u string) ([]byte, string) {
		fetched = append(fetched, u)
		switch u {
		case "https://mcp.example/.well-known/oauth-protected-resource/tenant/mcp":
			return []byte(`{"resource":"https://mcp.example/tenant/mcp","authorization_servers":["https://as.example/t1","https://as2.example","https://as3.example"]}`), "HTTP 200"
		case "https://as.example/.well-known/openid-configuration/t1":
			return []byte(`{"issuer":"https://as.example/t1","token_endpoint":"https://as.example/t1/token"}`), "HTTP 200"
		}
		return nil, "HTTP 404"
	}
	d := Discover(context.Background(), fetch, endpoint, "https://other.example/.well-known/oauth-protected-resource", "")
	if len(fetched) != 0 || len(d.NotFetched) != 1 {
		t.Fatalf("a cross-origin resource_metadata was fetched: %v %+v", fetched, d)
	}
	d = Discover(context.Background(), fetch, endpoint, "", "")
	want := []string{
		"https://mcp.example/.well-known/oauth-protected-resource/tenant/mcp",
		"https://as.example/.well-known/oauth-authorization-server/t1",
		"https://as.example/.well-known/openid-configuration/t1",
		"https://as2.example/.well-known/oauth-authorization-server",
		"https://as2.example/.well-known/openid-configuration",
	}
	if strings.Join(fetched, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fetched\n%s\nwant\n%s", strings.Join(fetched, "\n"), strings.Join(want, "\n"))
	}
	s, err := d.Usable()
	if err != nil || s.Metadata.TokenEndpoint != "https://as.example/t1/token" || len(d.NotFetched) != 1 {
		t.Fatalf("usable %+v %v, not fetched %v", s, err, d.NotFetched)
	}
}

func TestTokenEndpointAllowed(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://as.example/token":      true,
		"http://127.0.0.1:9/token":      true,
		"http://localhost:9/token":      true,
		"http://as.example/token":       false,
		"https://u:p@as.example/token":  false,
		"ftp://as.example/token":        false,
		"https:///token":                false,
		"http://[::1]:8080/oauth/token": true,
	} {
		if err := tokenEndpointAllowed(raw); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestEnterpriseManagedAuthorization(t *testing.T) {
	const idToken = "MARKER-id-token-of-the-monitor"
	r := newRig(t, oauthtest.Options{ClientID: "driftd", Secret: "s3cret-marker", SubjectToken: idToken, Methods: []string{"client_secret_basic"}}, config.OAuth{})
	r.tr.OAuth.ClientID, r.tr.OAuth.ClientSecretFile = "driftd", secretFile(t, "secret", "s3cret-marker")
	r.tr.OAuth.TokenExchange = &config.TokenExchange{TokenURL: r.as.URL + "/idp/token", ClientID: "driftd-at-idp", SubjectTokenFile: secretFile(t, "id", idToken)}
	status, u := r.call(t)
	if status != http.StatusOK || u.Grant != "JWT-bearer" || u.Method != "client_secret_basic" {
		t.Fatalf("status %d usage %+v", status, u)
	}
	reqs := r.as.Requests()
	if len(reqs) != 2 || reqs[0].Method != "idp" || reqs[0].Resource != r.endpoint || reqs[1].Grant != GrantJWTBearer {
		t.Fatalf("requests %+v: want the exchange, then the JWT-bearer grant", reqs)
	}
	if len(u.Tokens) != 3 { // the ID-JAG is redacted like the access token, and the Basic credential
		t.Fatalf("redacted values %d, want the ID-JAG, the Basic credential and the access token", len(u.Tokens))
	}
}

// TestHostileTokenAnswers: what a run reports of a token endpoint that
// answers badly quotes no token it was given, and names every credential
// it sent in a derived form among Tokens, which the run redacts: an access token quoted by x/oauth2's parse error, one with CR LF,
// and the Basic credential and the client assertion echoed as the error.
func TestHostileTokenAnswers(t *testing.T) {
	const tok = "MARKER-hostile-token"
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name   string
		key    bool
		answer func(w http.ResponseWriter, r *http.Request)
		want   string // in the error
		sent   func(r *http.Request) string
	}{
		{name: "token in expires_in", want: "failed: oauth2: cannot parse json",
			answer: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"access_token":"`+tok+`","token_type":"Bearer","expires_in":"`+tok+`"}`)
			}},
		{name: "CR LF in the token", want: "answered an access_token that is not printable ASCII",
			answer: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"access_token":"`+tok+`\r\nX-Injected: 1","token_type":"Bearer"}`)
			}},
		{name: "Basic credential as the error", want: "refused the client_credentials request: Basic ",
			answer: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"`+r.Header.Get("Authorization")+`"}`)
			},
			sent: func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ") }},
		{name: "client assertion as the description", key: true, want: "refused the client_credentials request: invalid_client",
			answer: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"`+r.PostFormValue("client_assertion")+`"}`)
			},
			sent: func(r *http.Request) string { return r.PostFormValue("client_assertion") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				if tc.sent != nil {
					mu.Lock()
					got = append(got, tc.sent(r))
					mu.Unlock()
				}
				tc.answer(w, r)
			}))
			defer as.Close()
			rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Injected") != "" {
					t.Error("a header smuggled in the token reached the server")
				}
				w.Header().Set("WWW-Authenticate", "Bearer")
				w.WriteHeader(http.StatusUnauthorized)
			}))
			defer rs.Close()
			cfg := config.OAuth{ClientID: "c", ClientSecretFile: secretFile(t, "secret", "s3cret-marker\n"), TokenURL: as.URL + "/token"}
			if tc.key {
				cfg.ClientSecretFile, cfg.PrivateKeyFile = "", pemFile(t, ec)
			}
			tr := &Transport{Base: http.DefaultTransport.(*http.Transport).Clone(), Tokens: NewTokens(), OAuth: &cfg, Endpoint: rs.URL,
				Anonymous: func() (*http.Client, error) {
					return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, nil
				}}
			defer tr.CloseIdleConnections()
			u := &Usage{}
			req, _ := http.NewRequestWithContext(WithUsage(context.Background(), u), http.MethodGet, rs.URL, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			rep := u.Report()
			if rep.Err == nil || !strings.Contains(rep.Err.Error(), tc.want) || strings.Contains(rep.Err.Error(), tok) {
				t.Fatalf("error %v, want %q and no token", rep.Err, tc.want)
			}
			if len(rep.Requests) != 1 || rep.Requests[0] == "success" || rep.Scheme != "" {
				t.Errorf("usage %+v", rep)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range got {
				if !slices.Contains(rep.Tokens, s) {
					t.Errorf("the values redacted %q lack %q", rep.Tokens, s)
				}
			}
		})
	}
}

// TestAnswerError: x/oauth2's words on an answer are kept, what they quote
// of it is not, also wrapped by go-sdk's token exchange.
func TestAnswerError(t *testing.T) {
	quoted := errors.New(`oauth2: cannot parse json: json: invalid number literal, trying to unmarshal "\"MARKER-quoted\"" into Number`)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{quoted, "oauth2: cannot parse json"},
		{fmt.Errorf("token exchange request failed: %w", quoted), "token exchange request failed: oauth2: cannot parse json"},
		{errors.New("oauth2: server response missing access_token"), "oauth2: server response missing access_token"},
		{&url.Error{Op: "Post", URL: "https://as.example/token?k=MARKER-quoted", Err: errors.New("connection refused")}, "connection refused"},
	} {
		if got := answerError(tc.err); got != tc.want {
			t.Errorf("answerError(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
