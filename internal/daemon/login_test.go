package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/oauth/oauthtest"
)

// TestDaemonKeepsALoginSession (issue 38): a target logged into once keeps
// being probed across the expiry of its access tokens (2 s) and a daemon
// restart, by refreshing, with no second login; when the refresh token
// ends, the target is auth_required with the login hint on the page, the
// API and the log, and driftd_oauth_login_required is 1.
func TestDaemonKeepsALoginSession(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{Login: true, Scopes: []string{"tools.read"}, Lifetime: 2 * time.Second, Rotate: true, DPoP: true})
	var rs *httptest.Server
	rs = httptest.NewServer(as.Protect(func() string { return rs.URL + "/mcp" }, mcptest.NewHandler(mcptest.Options{Tools: mockTools("a")})))
	defer rs.Close()
	e := newEnv(t)
	e.manifest("m.json", "a")
	e.config(fmt.Sprintf("global:\n  schedule: \"@every 1s\"\n  timeout: 5s\n  state_dir: state\ntargets:\n  - name: crm\n    url: %s/mcp\n    manifest: m.json\n    oauth:\n      login: {}\n", rs.URL))

	// driftd auth login crm, as the command does it.
	anon := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer anon.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := oauth.Login(ctx, oauth.LoginOptions{Endpoint: rs.URL + "/mcp", OAuth: &config.OAuth{Login: &config.Login{}}, Anonymous: anon, Follow: true, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(filepath.Join(e.dir, "state", "sessions", "crm.json")); err != nil {
		t.Fatal(err)
	}
	grants := func(grant string) int {
		n := 0
		for _, r := range as.Requests() {
			if r.Grant == grant && r.Error == "" {
				n++
			}
		}
		return n
	}

	d, base := e.start(false)
	// Past at least two access tokens' lifetimes.
	eventually(t, 20*time.Second, "two refreshes", func() bool { return grants("refresh_token") >= 2 })
	waitMetricAtLeast(t, base, `driftd_probes_total{result="success",target="crm"}`, 4)
	stop(t, d)
	refreshed := grants("refresh_token")

	d, base = e.start(false)
	eventually(t, 20*time.Second, "a refresh after the restart", func() bool { return grants("refresh_token") > refreshed })
	waitMetricAtLeast(t, base, `driftd_probes_total{result="success",target="crm"}`, 3)
	if n := grants("authorization_code"); n != 1 {
		t.Fatalf("%d logins, want the one", n)
	}
	if _, failed := metric(getBody(t, base+"/metrics"), `driftd_probes_total{result="failure",target="crm"}`); !failed {
		t.Fatal("no failure counter")
	}
	if v, _ := metric(getBody(t, base+"/metrics"), `driftd_oauth_login_required{target="crm"}`); v != 0 {
		t.Fatalf("driftd_oauth_login_required = %v while the session serves", v)
	}

	as.ExpireRefresh()
	waitMetric(t, base, `driftd_oauth_login_required{target="crm"}`, 1)
	const hint = "run `driftd auth login crm`"
	for path, want := range map[string]string{"/targets/crm": hint, "/api/v1/targets/crm": hint} {
		if _, out := get(t, base+path); !strings.Contains(out, "auth_required") || !strings.Contains(out, want) {
			i := strings.Index(out, "driftd auth login")
			t.Errorf("GET %s lacks auth_required and the login hint %q: %q", path, want, out[max(0, i-200):min(len(out), i+50)])
		}
	}
	stop(t, d)
	if !strings.Contains(e.log.String(), "driftd auth login crm") {
		t.Error("the log does not say to run driftd auth login crm")
	}
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	_, b := get(t, url)
	return b
}
