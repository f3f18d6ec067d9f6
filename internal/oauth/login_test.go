package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
