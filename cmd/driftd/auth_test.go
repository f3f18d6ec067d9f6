package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/oauth/oauthtest"
)

// TestAuthLoginStatusLogout: driftd auth login saves a session (mode
// 0600) that check then uses without logging in; auth status lists it;
// auth logout revokes the refresh token and removes driftd's copy, after
// which the target is auth_required with the login hint.
func TestAuthLoginStatusLogout(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{Login: true, Scopes: []string{"tools.read"}})
	var rs *httptest.Server
	rs = httptest.NewServer(as.Protect(func() string { return rs.URL + "/mcp" }, mcptest.NewHandler(mcptest.Options{Tools: mockTools("a")})))
	defer rs.Close()
	dir := t.TempDir()
	m := writeManifest(t, "a")
	os.WriteFile(filepath.Join(dir, "m.json"), mustRead(t, m), 0o600)
	cfg := filepath.Join(dir, "driftd.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("global:\n  state_dir: state\ntargets:\n  - name: crm\n    url: %s/mcp\n    manifest: m.json\n    oauth:\n      login: {}\n", rs.URL)), 0o600)

	code, stdout, stderr := driftd(t, "auth", "status", "--config.file", cfg)
	if code != exitOK || !strings.Contains(stdout, "crm: no session; run `driftd auth login crm`") {
		t.Fatalf("status before login: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = driftd(t, "auth", "login", "crm", "--config.file", cfg, "--follow")
	session := filepath.Join(dir, "state", "sessions", "crm.json")
	if code != exitOK || !strings.Contains(stdout, "session saved to "+session+" (mode 0600)") || !strings.Contains(stdout, "refresh token: yes") {
		t.Fatalf("login: %d\n%s%s", code, stdout, stderr)
	}
	if fi, err := os.Stat(session); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(session)
	for _, tok := range as.Tokens() {
		if strings.Contains(stdout+stderr, tok) {
			t.Fatal("login printed the access token")
		}
	}
	if strings.Contains(stdout+stderr, "oauthtest-refresh-") || !strings.Contains(string(b), "oauthtest-refresh-") {
		t.Fatal("the refresh token is printed, or not saved")
	}
	code, stdout, _ = driftd(t, "auth", "status", "--config.file", cfg)
	if code != exitOK || !strings.Contains(stdout, "crm: issuer "+as.URL) || !strings.Contains(stdout, "refresh token: yes") {
		t.Fatalf("status: %d\n%s", code, stdout)
	}
	code, stdout, stderr = driftd(t, "check", m, "--base-url", rs.URL+"/mcp", "--oauth.session-file", session)
	if code != exitOK {
		t.Fatalf("check with the session: %d\n%s%s", code, stdout, stderr)
	}
	if n := as.RefreshTokens(); n != 1 {
		t.Fatalf("%d refresh tokens", n)
	}
	code, stdout, stderr = driftd(t, "auth", "logout", "crm", "--config.file", cfg)
	if code != exitOK || !strings.Contains(stdout, "crm: logged out") || as.RefreshTokens() != 0 {
		t.Fatalf("logout: %d %d\n%s%s", code, as.RefreshTokens(), stdout, stderr)
	}
	if _, err := os.Stat(session); !os.IsNotExist(err) {
		t.Fatal("the session file is still there")
	}
	code, stdout, stderr = driftd(t, "check", m, "--base-url", rs.URL+"/mcp", "--target", "crm", "--oauth.session-file", session)
	if code != exitNoProbe || !strings.Contains(stdout+stderr, "run `driftd auth login crm`") {
		t.Fatalf("check after logout: %d\n%s%s", code, stdout, stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
