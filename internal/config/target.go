// Package config holds driftd's configuration types, their defaults and
// their validation.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"time"

	promconfig "github.com/prometheus/common/config"
)

// Defaults of DESIGN §4.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxListPages     = 50
	DefaultMaxResponseBytes = 16 << 20
)

// Classes are the environment classifications a target can have.
var Classes = []string{"local", "dev", "staging", "production", "unknown"}

var targetName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// Target is one (name, URL, manifest) triple and how to probe it.
type Target struct {
	Name             string                      `yaml:"name"`
	URL              string                      `yaml:"url"`
	Manifest         string                      `yaml:"manifest"`
	Timeout          time.Duration               `yaml:"timeout,omitempty"`
	MaxListPages     int                         `yaml:"max_list_pages,omitempty"`
	MaxResponseBytes int64                       `yaml:"max_response_bytes,omitempty"`
	Environment      string                      `yaml:"environment,omitempty"`
	HTTPClient       promconfig.HTTPClientConfig `yaml:"http_client,omitempty"`
	SkipAuthProbe    bool                        `yaml:"skip_auth_probe,omitempty"`
	Classification   []ClassificationRule        `yaml:"-"`
}

// ClassificationRule maps hosts matching a regexp to a class.
type ClassificationRule struct {
	Match *regexp.Regexp
	Class string
}

// NewTarget returns a target with the defaults applied.
func NewTarget(name, rawURL string) Target {
	return Target{
		Name:             name,
		URL:              rawURL,
		Timeout:          DefaultTimeout,
		MaxListPages:     DefaultMaxListPages,
		MaxResponseBytes: DefaultMaxResponseBytes,
		HTTPClient:       DefaultHTTPClientConfig(),
	}
}

// DefaultHTTPClientConfig is prometheus/common's default with redirects off:
// following one would resend credentials and the body to a place nobody
// configured.
func DefaultHTTPClientConfig() promconfig.HTTPClientConfig {
	c := promconfig.DefaultHTTPClientConfig
	c.FollowRedirects = false
	return c
}

// Validate checks the target and returns every problem found, joined.
func (t *Target) Validate() error {
	var errs []error
	if !targetName.MatchString(t.Name) {
		errs = append(errs, fmt.Errorf("name %q must match %s", t.Name, targetName))
	}
	if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("url %q must be an absolute http:// or https:// URL", t.URL))
	} else if u.User != nil {
		errs = append(errs, errors.New("url must not carry credentials; use http_client"))
	}
	if t.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %v must be positive", t.Timeout))
	}
	if t.MaxListPages < 1 {
		errs = append(errs, fmt.Errorf("max_list_pages %d must be at least 1", t.MaxListPages))
	}
	if t.MaxResponseBytes < 1024 {
		errs = append(errs, fmt.Errorf("max_response_bytes %d must be at least 1024", t.MaxResponseBytes))
	}
	if t.Environment != "" && !validClass(t.Environment) {
		errs = append(errs, fmt.Errorf("environment %q must be one of %v", t.Environment, Classes))
	}
	if t.HTTPClient.FollowRedirects {
		errs = append(errs, errors.New("http_client.follow_redirects must be false: driftd never follows redirects"))
	}
	if err := t.HTTPClient.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("http_client: %w", err))
	}
	return errors.Join(errs...)
}

func validClass(c string) bool {
	for _, k := range Classes {
		if k == c {
			return true
		}
	}
	return false
}

// CredentialHeaders returns the names of the headers the HTTP client
// configuration adds that carry credentials, sorted and without values.
func CredentialHeaders(c *promconfig.HTTPClientConfig) []string {
	var names []string
	if c.Authorization != nil || c.BasicAuth != nil || c.OAuth2 != nil || c.BearerToken != "" || c.BearerTokenFile != "" {
		names = append(names, "Authorization")
	}
	if c.HTTPHeaders != nil {
		for name := range c.HTTPHeaders.Headers {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Anonymous returns a copy of c with every credential-bearing setting
// removed: what a caller without credentials would send.
func Anonymous(c promconfig.HTTPClientConfig) promconfig.HTTPClientConfig {
	c.Authorization, c.BasicAuth, c.OAuth2, c.HTTPHeaders = nil, nil, nil, nil
	c.BearerToken, c.BearerTokenFile = "", ""
	c.TLSConfig.Cert, c.TLSConfig.CertFile = "", ""
	c.TLSConfig.Key, c.TLSConfig.KeyFile = "", ""
	return c
}
