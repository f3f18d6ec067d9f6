package config

import (
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
