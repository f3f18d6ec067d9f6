package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	promconfig "github.com/prometheus/common/config"
)

// TestCredentials ties every user of the one definition together: each
// setting that identifies the caller is seen by CredentialsOf, removed by
// Anonymous, and its value (inline or from its file) is in SecretValues.
func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		set     func(c *promconfig.HTTPClientConfig)
		headers []string
		cert    bool
		secret  string // a value SecretValues must return; "" for none
	}{
		{"none", func(*promconfig.HTTPClientConfig) {}, nil, false, ""},
		{"authorization", func(c *promconfig.HTTPClientConfig) {
			c.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: "tok-inline"}
		}, []string{"Authorization"}, false, "tok-inline"},
		{"authorization file", func(c *promconfig.HTTPClientConfig) {
			c.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: file("a", "tok-file")}
		}, []string{"Authorization"}, false, "tok-file"},
		{"basic auth", func(c *promconfig.HTTPClientConfig) {
			c.BasicAuth = &promconfig.BasicAuth{Username: "u", Password: "pw-inline"}
		}, []string{"Authorization"}, false, "pw-inline"},
		{"oauth2", func(c *promconfig.HTTPClientConfig) {
			c.OAuth2 = &promconfig.OAuth2{ClientID: "id", ClientSecretFile: file("o", "cs-file"), TokenURL: "https://as.example/token"}
		}, []string{"Authorization"}, false, "cs-file"},
		{"bearer token", func(c *promconfig.HTTPClientConfig) { c.BearerToken = "bt-inline" }, []string{"Authorization"}, false, "bt-inline"},
		{"bearer token file", func(c *promconfig.HTTPClientConfig) { c.BearerTokenFile = file("b", "bt-file") }, []string{"Authorization"}, false, "bt-file"},
		{"header secrets", func(c *promconfig.HTTPClientConfig) {
			c.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{
				"X-Tenant":  {Values: []string{"acme"}},
				"X-Api-Key": {Secrets: []promconfig.Secret{"hk-inline"}, Files: []string{file("h", "hk-file")}},
			}}
		}, []string{"X-Api-Key", "X-Tenant"}, false, "hk-file"},
		{"client cert file", func(c *promconfig.HTTPClientConfig) { c.TLSConfig.CertFile = "/c" }, nil, true, ""},
		{"client cert inline", func(c *promconfig.HTTPClientConfig) { c.TLSConfig.Cert = "PEM" }, nil, true, ""},
		{"client key inline", func(c *promconfig.HTTPClientConfig) { c.TLSConfig.Key = "key-inline" }, nil, true, "key-inline"},
		{"client key file", func(c *promconfig.HTTPClientConfig) { c.TLSConfig.KeyFile = file("k", "key-file") }, nil, true, "key-file"},
		{"client cert ref", func(c *promconfig.HTTPClientConfig) { c.TLSConfig.CertRef = "vault/cert" }, nil, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultHTTPClientConfig()
			c.TLSConfig.CAFile = "/ca"
			tc.set(&c)
			got := CredentialsOf(&c)
			if !slices.Equal(got.Headers, tc.headers) || got.ClientCertificate != tc.cert {
				t.Fatalf("CredentialsOf = %+v, want headers %v, certificate %v", got, tc.headers, tc.cert)
			}
			if got.Any() != (len(tc.headers) > 0 || tc.cert) {
				t.Fatalf("Any() = %v", got.Any())
			}
			if tc.secret != "" && !slices.Contains(SecretValues(&c), tc.secret) {
				t.Fatalf("SecretValues = %q, want it to hold %q", SecretValues(&c), tc.secret)
			}
			before := CredentialsOf(&c)
			a := Anonymous(c)
			if CredentialsOf(&a).Any() || len(SecretValues(&a)) != 0 {
				t.Fatalf("Anonymous kept credentials: %+v, secrets %q", CredentialsOf(&a), SecretValues(&a))
			}
			if a.TLSConfig.CAFile != "/ca" {
				t.Fatal("Anonymous dropped the CA: the anonymous request must trust the same server")
			}
			if !slices.Equal(CredentialsOf(&c).Headers, before.Headers) {
				t.Fatal("Anonymous mutated its input")
			}
		})
	}
}

// TestClientFiles: every file setting of an HTTP client configuration is
// listed with the field that names it, as written under http_client.
func TestClientFiles(t *testing.T) {
	c := DefaultHTTPClientConfig()
	c.BasicAuth = &promconfig.BasicAuth{UsernameFile: "/u", PasswordFile: "/p"}
	c.OAuth2 = &promconfig.OAuth2{ClientID: "id", ClientSecretFile: "/cs", ClientCertificateKeyFile: "/ck", TokenURL: "https://as.example/token",
		TLSConfig: promconfig.TLSConfig{CAFile: "/oca"}}
	c.BearerTokenFile = "/bt"
	c.TLSConfig = promconfig.TLSConfig{CAFile: "/ca", CertFile: "/cert", KeyFile: "/key"}
	c.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{
		"X-Tenant":  {Values: []string{"acme"}},
		"X-Api-Key": {Secrets: []promconfig.Secret{"inline"}, Files: []string{"/h0", "/h1"}},
	}}
	want := []ClientFile{
		{"basic_auth.username_file", "/u"}, {"basic_auth.password_file", "/p"},
		{"oauth2.client_secret_file", "/cs"}, {"oauth2.client_certificate_key_file", "/ck"}, {"oauth2.tls_config.ca_file", "/oca"},
		{"bearer_token_file", "/bt"},
		{"tls_config.ca_file", "/ca"}, {"tls_config.cert_file", "/cert"}, {"tls_config.key_file", "/key"},
		{"http_headers.X-Api-Key.files[0]", "/h0"}, {"http_headers.X-Api-Key.files[1]", "/h1"},
	}
	if got := ClientFiles(&c); !slices.Equal(got, want) {
		t.Errorf("ClientFiles =\n%q\nwant\n%q", got, want)
	}
	a := DefaultHTTPClientConfig()
	a.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: "/a"}
	if got := ClientFiles(&a); !slices.Equal(got, []ClientFile{{"authorization.credentials_file", "/a"}}) {
		t.Errorf("ClientFiles(authorization) = %q", got)
	}
	if got := ClientFiles(new(DefaultHTTPClientConfig())); len(got) != 0 {
		t.Errorf("ClientFiles(default) = %q", got)
	}
}
