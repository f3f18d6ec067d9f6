package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/oauth/oauthtest"
)

func keyFile(t *testing.T, k *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckOAuthPrivateKeyJWT: check with --oauth.client-id and
// --oauth.private-key-file finds the authorization server by discovery,
// gets a token with a private_key_jwt assertion and lists the tools; with
// a key the server does not know it ends as auth_required, exit 3, saying
// why. Neither the key, the secret file's content nor the token is
// printed.
func TestCheckOAuthPrivateKeyJWT(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	wrong, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as := oauthtest.New(t, oauthtest.Options{ClientID: "driftd-ci", ClientKey: &key.PublicKey, Methods: []string{"private_key_jwt"}, DPoP: true})
	var rs *httptest.Server
	h := mcptest.NewHandler(mcptest.Options{Tools: mockTools("a", "b")})
	rs = httptest.NewServer(as.Protect(func() string { return rs.URL + "/mcp" }, h))
	defer rs.Close()
	m := writeManifest(t, "a", "b")
	good, bad := keyFile(t, key), keyFile(t, wrong)

	code, stdout, stderr := driftd(t, "check", m, "--base-url", rs.URL+"/mcp", "--oauth.client-id", "driftd-ci", "--oauth.private-key-file", good, "--json")
	if code != exitOK || !strings.Contains(stdout, `"scheme": "DPoP"`) || !strings.Contains(stdout, `"client_auth": "private_key_jwt"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, r := range h.Requests() {
		if !strings.Contains(string(r.Body), `"extensions":{"io.modelcontextprotocol/oauth-client-credentials":{}}`) {
			t.Fatalf("a request with the machine identity does not declare the client credentials extension: %s", r.Body)
		}
		if err := h.CheckNoViolations(); err != nil {
			t.Fatal(err)
		}
	}
	tokens := as.Tokens()
	if len(tokens) != 1 {
		t.Fatalf("tokens %v", tokens)
	}
	pemBytes, _ := os.ReadFile(good)
	keyLine := strings.Split(string(pemBytes), "\n")[1]
	for _, s := range []string{tokens[0], keyLine} {
		if strings.Contains(stdout+stderr, s) {
			t.Fatalf("check printed a secret: %q", s)
		}
	}

	code, stdout, stderr = driftd(t, "check", m, "--base-url", rs.URL+"/mcp", "--oauth.client-id", "driftd-ci", "--oauth.private-key-file", bad)
	want := "the token endpoint " + as.URL + "/token refused the client_credentials request: invalid_client"
	if code != exitNoProbe || !strings.Contains(stdout+stderr, "(reason: auth_required)") || !strings.Contains(stdout+stderr, want) {
		t.Fatalf("exit %d (want 3); want %q\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}

	code, _, stderr = driftd(t, "check", m, "--base-url", rs.URL+"/mcp", "--oauth.client-id", "driftd-ci")
	if code != exitUsage || !strings.Contains(stderr, "needs --oauth.client-secret-file, --oauth.private-key-file, --oauth.assertion-file or --oauth.token-exchange.*") {
		t.Fatalf("an identity without a credential: exit %d\n%s", code, stderr)
	}
	code, _, stderr = driftd(t, "check", m, "--base-url", rs.URL+"/mcp", "--oauth.client-id", "x", "--oauth.private-key-file", good, "--oauth.issuer", "https://u:p@as.example")
	if code != exitUsage || !strings.Contains(stderr, "--oauth.issuer: carries user information") {
		t.Fatalf("a URL with credentials: exit %d\n%s", code, stderr)
	}
}
