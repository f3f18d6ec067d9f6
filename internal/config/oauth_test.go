package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadBadOAuth: every problem of the oauth blocks, with its line and
// field, in one pass; no secret is quoted.
func TestLoadBadOAuth(t *testing.T) {
	path := filepath.Join("testdata", "bad-oauth.yml")
	_, err := Load(path)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	got := err.Error()
	for _, w := range []string{
		`:7: targets[0].oauth.client_secret: unknown field: secrets are read from files; use client_secret_file`,
		`:11: targets[1].oauth.client_id: required with client_secret_file or private_key_file`,
		`:13: targets[1].oauth.private_key_file: and client_secret_file both set: a client authenticates one way`,
		`:14: targets[1].oauth.dpop: "sometimes" must be auto, always or never`,
		`:15: targets[1].oauth.issuer: carries user information: credentials come from files, never from a URL`,
		`:22: targets[2].oauth: and an http_client credential (authorization, basic_auth, oauth2, bearer_token) both set the Authorization header: keep one`,
		`:25: targets[2].oauth.token_endpoint_auth_method: private_key_jwt needs private_key_file`,
		`:26: targets[2].oauth.signing_algorithm: "HS256" must be ES256 or RS256`,
		`targets[3].oauth.token_exchange.token_url: required: the identity provider's token endpoint`,
		`targets[3].oauth.token_exchange.subject_token_file: required: the identity token to exchange`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("error lacks %q:\n%s", w, got)
		}
	}
	for _, secret := range []string{"inline-is-refused", "user:pw"} {
		if strings.Contains(got, secret) {
			t.Errorf("the error quotes %q", secret)
		}
	}
}

// TestOAuthPathsAndCredentials: the block's files resolve against the
// config's directory, and a target with one presents Authorization and
// redacts the files' contents.
func TestOAuthPathsAndCredentials(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "m.json"), []byte(`{"tools":[]}`), 0o600)
	os.WriteFile(filepath.Join(dir, "key.pem"), []byte("-----BEGIN PRIVATE KEY-----\nAAAAline-one\nBBBBline-two\n-----END PRIVATE KEY-----\n"), 0o600)
	cfg := filepath.Join(dir, "driftd.yml")
	os.WriteFile(cfg, []byte("targets:\n  - name: a\n    url: https://a.example/mcp\n    manifest: m.json\n    oauth:\n      client_id: driftd\n      private_key_file: key.pem\n"), 0o600)
	c, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets[0]
	if tg.OAuth.PrivateKeyFile != filepath.Join(dir, "key.pem") {
		t.Errorf("private_key_file %q", tg.OAuth.PrivateKeyFile)
	}
	if cr := tg.Credentials(); !cr.Any() || strings.Join(cr.Headers, ",") != "Authorization" {
		t.Errorf("credentials %+v", cr)
	}
	secrets := strings.Join(tg.Secrets(), "\n")
	for _, line := range []string{"AAAAline-one", "BBBBline-two"} {
		if !strings.Contains(secrets, line) {
			t.Errorf("the key's line %s is not among the values redacted", line)
		}
	}
}
