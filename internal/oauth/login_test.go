package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/oauth/oauthtest"
)

// loginRig is an authorization server for people and an endpoint behind
// it.
func loginRig(t *testing.T, opts oauthtest.Options) (*oauthtest.Server, string) {
	t.Helper()
	opts.Login = true
	as := oauthtest.New(t, opts)
	var rs *httptest.Server
	rs = httptest.NewServer(as.Protect(func() string { return rs.URL + "/mcp" }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "pong")
	})))
	t.Cleanup(rs.Close)
	return as, rs.URL + "/mcp"
}

func anonClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), CheckRedirect: noRedirect}
}

func TestLoginThenRefreshAcrossExpiryAndRestart(t *testing.T) {
	for _, dpop := range []bool{false, true} {
		t.Run(map[bool]string{false: "bearer", true: "dpop"}[dpop], func(t *testing.T) {
			as, endpoint := loginRig(t, oauthtest.Options{Scopes: []string{"tools.read"}, Lifetime: 100 * time.Second, Rotate: true, DPoP: dpop})
			cfg := &config.OAuth{Login: &config.Login{}}
			anon := anonClient()
			defer anon.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := Login(ctx, LoginOptions{Endpoint: endpoint, OAuth: cfg, Anonymous: anon, Follow: true, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if s.Registration != RegistrationDynamic || s.RefreshToken == "" || !slices.Contains(s.Scopes, "offline_access") ||
				!slices.Contains(s.Scopes, "tools.read") || s.Resource != endpoint || (s.DPoPKey != "") != dpop {
				t.Fatalf("session %+v", s)
			}
			file := filepath.Join(t.TempDir(), "sessions", "t.json")
			if err := s.Save(file); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
				t.Fatalf("session file mode %v", fi.Mode())
			}
			cfg.Login.StateFile = file

			now := time.Now()
			transport := func() (*rig, *Tokens) {
				ts := NewTokens()
				ts.now = func() time.Time { return now }
				r := &rig{as: as, endpoint: endpoint, tokens: ts}
				r.tr = &Transport{Base: http.DefaultTransport.(*http.Transport).Clone(), Tokens: ts, OAuth: cfg, Endpoint: endpoint,
					Anonymous: func() (*http.Client, error) { return anonClient(), nil },
					Session:   &SessionSource{Target: "orders", Own: file}}
				t.Cleanup(r.tr.CloseIdleConnections)
				return r, ts
			}
			r, _ := transport()
			before := len(as.Requests())
			if status, u := r.call(t); status != http.StatusOK || len(u.Requests) != 0 {
				t.Fatalf("the logged-in session's token: %d %+v", status, u)
			}
			now = now.Add(95 * time.Second) // within the margin of expiry
			status, u := r.call(t)
			if status != http.StatusOK || len(u.Requests) != 1 || u.Requests[0] != "success" || u.Grant != "refresh_token" {
				t.Fatalf("across expiry: %d %+v", status, u)
			}
			reqs := as.Requests()[before:]
			if len(reqs) != 1 || reqs[0].Grant != "refresh_token" || reqs[0].Resource != endpoint || reqs[0].DPoP != dpop {
				t.Fatalf("token requests %+v", reqs)
			}
			saved, err := LoadSession("", file)
			if err != nil || saved.RefreshToken == s.RefreshToken || saved.AccessToken == s.AccessToken {
				t.Fatalf("the rotated refresh token was not written back: %v", err)
			}
			// A restart: a new cache reads the session file.
			r2, _ := transport()
			if status, u := r2.call(t); status != http.StatusOK || len(u.Requests) != 0 {
				t.Fatalf("after a restart: %d %+v", status, u)
			}
			// The refresh token ends: a person must log in again.
			as.ExpireRefresh()
			now = now.Add(200 * time.Second)
			status, u = r2.call(t)
			var lr *LoginRequiredError
			if status != http.StatusUnauthorized || !errors.As(u.Err, &lr) ||
				!strings.Contains(u.Err.Error(), "refused the session's refresh token (invalid_grant)") ||
				!strings.HasSuffix(u.Err.Error(), "run `driftd auth login orders`") {
				t.Fatalf("an expired refresh token: %d %+v", status, u)
			}
		})
	}
}

func TestLoginRefusesWhatAClientMust(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts oauthtest.Options
		want string
	}{
		{"resource mismatch", oauthtest.Options{Resource: "https://evil.example/mcp"}, "names a resource other than the endpoint"},
		{"issuer mismatch", oauthtest.Options{Issuer: "https://evil.example"}, "names an issuer other than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as, endpoint := loginRig(t, tc.opts)
			anon := anonClient()
			defer anon.CloseIdleConnections()
			_, err := Login(context.Background(), LoginOptions{Endpoint: endpoint, OAuth: &config.OAuth{Login: &config.Login{}}, Anonymous: anon, Follow: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v", err)
			}
			if n := len(as.Requests()); n != 0 {
				t.Fatalf("%d token requests", n)
			}
		})
	}
}

func TestNoSessionIsLoginRequired(t *testing.T) {
	_, endpoint := loginRig(t, oauthtest.Options{})
	ts := NewTokens()
	r := &rig{endpoint: endpoint, tokens: ts}
	r.tr = &Transport{Base: http.DefaultTransport.(*http.Transport).Clone(), Tokens: ts, OAuth: &config.OAuth{Login: &config.Login{}}, Endpoint: endpoint,
		Anonymous: func() (*http.Client, error) { return anonClient(), nil },
		Session:   &SessionSource{Target: "crm", Own: filepath.Join(t.TempDir(), "none.json")}}
	t.Cleanup(r.tr.CloseIdleConnections)
	status, u := r.call(t)
	if status != http.StatusUnauthorized || u.Err == nil || u.Err.Error() != "no session: nobody has logged in to this target: run `driftd auth login crm`" {
		t.Fatalf("%d %+v", status, u)
	}
}

func TestLoginWithADeviceCode(t *testing.T) {
	as, endpoint := loginRig(t, oauthtest.Options{Scopes: []string{"tools.read"}})
	anon := anonClient()
	defer anon.CloseIdleConnections()
	var shown string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Login(ctx, LoginOptions{Endpoint: endpoint, OAuth: &config.OAuth{Login: &config.Login{}}, Anonymous: anon, Device: true,
		ShowDevice: func(u, code string) { shown = u + " " + code }})
	if err != nil {
		t.Fatal(err)
	}
	if shown != as.URL+"/device-login WDJB-MJHT" || s.RefreshToken == "" || s.Resource != endpoint {
		t.Fatalf("shown %q, session %+v", shown, s)
	}
}

// TestLoginErrorsCarryNoSecret: an authorization server that echoes what
// a login handled — the code, the PKCE verifier, the client secret it
// registered, the tokens — in an error code or the granted scope; the
// login's error and session scopes carry none of it.
func TestLoginErrorsCarryNoSecret(t *testing.T) {
	const secret, code, access = "dcr-5ecr3t-1c2d", "code-9f8e7d", "access-tok-4b5a"
	for _, tc := range []struct {
		name string
		// redirect adds to the authorization response; token answers
		// the code exchange.
		redirect func(url.Values)
		token    func(r *http.Request) (int, map[string]any)
		want     string
	}{
		{name: "the code as the redirect's error", redirect: func(v url.Values) { v.Set("error", v.Get("code")) },
			want: "the authorization server refused: <redacted>"},
		{name: "the client secret as the token error", token: func(r *http.Request) (int, map[string]any) {
			_, s, _ := r.BasicAuth()
			return http.StatusBadRequest, map[string]any{"error": s}
		}, want: "refused the code: <redacted>"},
		{name: "the verifier as the token error", token: func(r *http.Request) (int, map[string]any) {
			return http.StatusBadRequest, map[string]any{"error": r.PostFormValue("code_verifier")}
		}, want: "refused the code: <redacted>"},
		{name: "the tokens and code as the granted scope", token: func(r *http.Request) (int, map[string]any) {
			return http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": "refresh-7a6b",
				"scope": "mcp " + access + " refresh-7a6b " + r.PostFormValue("code") + " " + r.PostFormValue("code_verifier")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var verifier atomic.Value // the PKCE verifier the token endpoint received
			verifier.Store("")
			var as, rs *httptest.Server
			as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server":
					_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "authorization_endpoint": as.URL + "/authorize",
						"token_endpoint": as.URL + "/token", "registration_endpoint": as.URL + "/register",
						"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
				case "/register":
					w.WriteHeader(http.StatusCreated)
					_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "c", "client_secret": secret, "token_endpoint_auth_method": "client_secret_basic"})
				case "/authorize":
					q := r.URL.Query()
					v := url.Values{"code": {code}, "state": {q.Get("state")}}
					if tc.redirect != nil {
						tc.redirect(v)
					}
					http.Redirect(w, r, q.Get("redirect_uri")+"?"+v.Encode(), http.StatusFound)
				case "/token":
					_ = r.ParseForm()
					verifier.Store(r.PostFormValue("code_verifier"))
					status, body := tc.token(r)
					w.WriteHeader(status)
					_ = json.NewEncoder(w).Encode(body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer as.Close()
			rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
					_ = json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL + "/mcp", "authorization_servers": []string{as.URL}})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs.URL+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			}))
			defer rs.Close()
			anon := anonClient()
			defer anon.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := Login(ctx, LoginOptions{Endpoint: rs.URL + "/mcp", OAuth: &config.OAuth{Login: &config.Login{}}, Anonymous: anon, Follow: true})
			secrets := []string{secret, code, access, "refresh-7a6b"}
			if v := verifier.Load().(string); v != "" {
				secrets = append(secrets, v)
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				for _, v := range secrets {
					if strings.Contains(err.Error(), v) {
						t.Errorf("the error carries %q: %v", v, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Scopes, []string{"mcp"}) {
				t.Errorf("scopes %q: a granted scope holding a secret was kept", s.Scopes)
			}
		})
	}
}
