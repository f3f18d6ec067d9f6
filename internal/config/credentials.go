package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	promconfig "github.com/prometheus/common/config"
)

// Credentials is what an HTTP client configuration presents that
// identifies the caller. It is the one definition of a credential: the
// probe reports it, the anonymous probe strips it (Anonymous), discovery
// refuses it from a source (sd_credentials only), and its values are
// redacted from everything a server sends back (SecretValues).
type Credentials struct {
	// Headers are the names of the request headers that carry
	// credentials, sorted, without values.
	Headers []string
	// ClientCertificate is true when a TLS client certificate or its key
	// is configured, inline or from a file.
	ClientCertificate bool
}

// Any reports whether anything identifies the caller.
func (c Credentials) Any() bool { return len(c.Headers) > 0 || c.ClientCertificate }

// CredentialsOf returns what c presents.
func CredentialsOf(c *promconfig.HTTPClientConfig) Credentials {
	var out Credentials
	if c.Authorization != nil || c.BasicAuth != nil || c.OAuth2 != nil || c.BearerToken != "" || c.BearerTokenFile != "" {
		out.Headers = append(out.Headers, "Authorization")
	}
	if c.HTTPHeaders != nil {
		for name := range c.HTTPHeaders.Headers {
			out.Headers = append(out.Headers, name)
		}
	}
	slices.Sort(out.Headers)
	t := &c.TLSConfig
	out.ClientCertificate = t.Cert != "" || t.CertFile != "" || t.CertRef != "" ||
		t.Key != "" || t.KeyFile != "" || t.KeyRef != ""
	return out
}

// Credentials returns what the target presents: its HTTP client's
// credentials, and the Authorization header its oauth block sets.
func (t *Target) Credentials() Credentials {
	c := CredentialsOf(&t.HTTPClient.HTTPClientConfig)
	if !t.OAuth.IsZero() && !slices.Contains(c.Headers, "Authorization") {
		c.Headers = append(c.Headers, "Authorization")
		slices.Sort(c.Headers)
	}
	return c
}

// Secrets returns the credential values the target would send
// (SecretValues) and the current contents of its oauth block's files: a
// server that echoes any of them back is redacted. The access tokens the
// block obtains are added by the run that uses them.
func (t *Target) Secrets() []string {
	out := SecretValues(&t.HTTPClient.HTTPClientConfig)
	for _, f := range t.OAuth.Files() {
		if b, err := os.ReadFile(f.Path); err == nil {
			out = append(out, secretLines(string(b))...)
		}
	}
	return out
}

// secretLines returns a secret file's value and, for a multi-line one (a
// PEM key), each of its lines, so that a server echoing part of it is
// redacted too.
func secretLines(v string) []string {
	v = strings.TrimSpace(v)
	out := []string{v}
	if strings.Contains(v, "\n") {
		for line := range strings.SplitSeq(v, "\n") {
			if line = strings.TrimSpace(line); !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// Anonymous returns a copy of c with every credential CredentialsOf sees
// removed: what a caller without credentials would send. What makes the
// server trusted (CA, server name) stays.
func Anonymous(c promconfig.HTTPClientConfig) promconfig.HTTPClientConfig {
	c.Authorization, c.BasicAuth, c.OAuth2, c.HTTPHeaders = nil, nil, nil, nil
	c.BearerToken, c.BearerTokenFile = "", ""
	c.TLSConfig.Cert, c.TLSConfig.CertFile, c.TLSConfig.CertRef = "", "", ""
	c.TLSConfig.Key, c.TLSConfig.KeyFile, c.TLSConfig.KeyRef = "", "", ""
	return c
}

// SecretValues returns the credential values c would send — inline values
// and the current contents of the files named for them — so that a value
// a server echoes back can be redacted before anything is stored. Files
// that cannot be read are skipped: the request fails on its own.
func SecretValues(c *promconfig.HTTPClientConfig) []string {
	var out []string
	add := func(inline promconfig.Secret, file string) {
		if inline != "" {
			out = append(out, string(inline))
		}
		if file != "" {
			if b, err := os.ReadFile(file); err == nil {
				out = append(out, strings.TrimSpace(string(b)))
			}
		}
	}
	if a := c.Authorization; a != nil {
		add(a.Credentials, a.CredentialsFile)
	}
	if b := c.BasicAuth; b != nil {
		add(b.Password, b.PasswordFile)
	}
	if o := c.OAuth2; o != nil {
		add(o.ClientSecret, o.ClientSecretFile)
	}
	add(c.BearerToken, c.BearerTokenFile)
	add(c.TLSConfig.Key, c.TLSConfig.KeyFile)
	if c.HTTPHeaders != nil {
		for _, h := range c.HTTPHeaders.Headers {
			for _, s := range h.Secrets {
				add(s, "")
			}
			for _, f := range h.Files {
				add("", f)
			}
		}
	}
	return out
}

// ClientFile is a file an HTTP client configuration names, and the field
// that names it, as written under http_client (e.g.
// authorization.credentials_file).
type ClientFile struct {
	Field, Path string
}

// ClientFiles returns every file c reads as it sends: the secret files
// (credentials_file, username_file, password_file, client_secret_file,
// bearer_token_file, http_headers files) and the TLS files (ca_file,
// cert_file, key_file, the oauth2 block's too), in the order of the
// block. A file that cannot be read fails the requests that need it.
func ClientFiles(c *promconfig.HTTPClientConfig) []ClientFile {
	var out []ClientFile
	add := func(field, path string) {
		if path != "" {
			out = append(out, ClientFile{field, path})
		}
	}
	tls := func(prefix string, t *promconfig.TLSConfig) {
		add(prefix+"tls_config.ca_file", t.CAFile)
		add(prefix+"tls_config.cert_file", t.CertFile)
		add(prefix+"tls_config.key_file", t.KeyFile)
	}
	if b := c.BasicAuth; b != nil {
		add("basic_auth.username_file", b.UsernameFile)
		add("basic_auth.password_file", b.PasswordFile)
	}
	if a := c.Authorization; a != nil {
		add("authorization.credentials_file", a.CredentialsFile)
	}
	if o := c.OAuth2; o != nil {
		add("oauth2.client_secret_file", o.ClientSecretFile)
		add("oauth2.client_certificate_key_file", o.ClientCertificateKeyFile)
		tls("oauth2.", &o.TLSConfig)
	}
	add("bearer_token_file", c.BearerTokenFile)
	tls("", &c.TLSConfig)
	if c.HTTPHeaders != nil {
		for _, name := range slices.Sorted(maps.Keys(c.HTTPHeaders.Headers)) {
			for i, f := range c.HTTPHeaders.Headers[name].Files {
				add(fmt.Sprintf("http_headers.%s.files[%d]", name, i), f)
			}
		}
	}
	return out
}
