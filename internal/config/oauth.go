package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	promconfig "github.com/prometheus/common/config"
)

// OAuth is a target's machine identity (docs/authentication.md): how it
// gets an access token for the MCP server from the server's authorization
// server, found by MCP authorization discovery. Secrets come from files
// only, read when a token is requested, so that a rotated file (a
// projected service-account token) is picked up without a reload.
//
// What is set picks the grant:
//   - client_secret_file: client credentials, client_secret_basic or
//     client_secret_post;
//   - private_key_file: client credentials, private_key_jwt (RFC 7523 §2.2);
//   - assertion_file: the JWT-bearer grant (RFC 7523 §2.1) with that JWT,
//     workload identity; with client_secret_file too, the client
//     authenticates with its secret as well;
//   - token_exchange: the JWT-bearer grant with an ID-JAG from the
//     enterprise identity provider (enterprise-managed authorization).
type OAuth struct {
	ClientID         string `yaml:"client_id,omitempty"`
	ClientSecretFile string `yaml:"client_secret_file,omitempty"`
	PrivateKeyFile   string `yaml:"private_key_file,omitempty"`
	// SigningAlgorithm is the private_key_jwt assertion's: ES256 or RS256;
	// empty takes it from the key.
	SigningAlgorithm string `yaml:"signing_algorithm,omitempty"`
	AssertionFile    string `yaml:"assertion_file,omitempty"`
	// TokenEndpointAuthMethod forces one of client_secret_basic,
	// client_secret_post, private_key_jwt or none; empty picks from what
	// the authorization server advertises.
	TokenEndpointAuthMethod string `yaml:"token_endpoint_auth_method,omitempty"`
	// Scopes replace the scope choice (the challenge's, else the
	// protected resource metadata's scopes_supported, else none).
	Scopes []string `yaml:"scopes,omitempty"`
	// Issuer pins the authorization server: a credential is sent only to
	// it, and it is fetched even if the server lists another.
	Issuer string `yaml:"issuer,omitempty"`
	// TokenURL turns discovery off: tokens come from here, for Resource
	// (default: the target's URL).
	TokenURL string `yaml:"token_url,omitempty"`
	Resource string `yaml:"resource,omitempty"`
	// DPoP is auto (use it when the authorization server advertises it),
	// always or never; empty is auto.
	DPoP string `yaml:"dpop,omitempty"`
	// TokenExchange, when set, is enterprise-managed authorization: the
	// JWT-bearer grant's assertion is an ID-JAG the enterprise identity
	// provider exchanges for an identity token (RFC 8693).
	TokenExchange *TokenExchange `yaml:"token_exchange,omitempty"`
	// Login, when set, makes the identity a person's: a session that
	// `driftd auth login TARGET` opens once (authorization code with
	// PKCE) and the daemon keeps alive with its refresh token
	// (docs/authentication.md#logging-in-once). client_id and
	// client_secret_file, when set, are a pre-registered client.
	Login *Login `yaml:"login,omitempty"`
}

// Login is a user-delegated session's settings.
type Login struct {
	// ClientMetadataURL is the client ID metadata document the operator
	// hosts (its URL is the client_id), used when the authorization
	// server supports them and no client_id is configured.
	ClientMetadataURL string `yaml:"client_metadata_url,omitempty"`
	// SessionFile is a session the operator provides (a mounted Secret);
	// it may be read-only. Empty: the state directory's copy only.
	SessionFile string `yaml:"session_file,omitempty"`
	// StateFile is where driftd keeps the session it refreshes:
	// <state_dir>/sessions/<target>.json for a daemon target (set when the
	// configuration is settled), the session file itself for check.
	StateFile string `yaml:"-"`
}

// TokenExchange is the identity provider side of enterprise-managed
// authorization (the MCP extension
// io.modelcontextprotocol/enterprise-managed-authorization).
type TokenExchange struct {
	// TokenURL is the identity provider's token endpoint.
	TokenURL string `yaml:"token_url"`
	// ClientID and ClientSecretFile are driftd's client at the identity
	// provider; the secret is optional.
	ClientID         string `yaml:"client_id"`
	ClientSecretFile string `yaml:"client_secret_file,omitempty"`
	// SubjectTokenFile holds the identity token exchanged, re-read for
	// every exchange; SubjectTokenType is its type, default
	// urn:ietf:params:oauth:token-type:id_token.
	SubjectTokenFile string `yaml:"subject_token_file"`
	SubjectTokenType string `yaml:"subject_token_type,omitempty"`
}

// OAuth token endpoint authentication methods driftd speaks.
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
	AuthNone              = "none"
)

// IsZero reports whether no OAuth is configured.
func (o *OAuth) IsZero() bool {
	return o == nil || (o.ClientID == "" && o.ClientSecretFile == "" && o.PrivateKeyFile == "" && o.AssertionFile == "" &&
		o.TokenEndpointAuthMethod == "" && len(o.Scopes) == 0 && o.Issuer == "" && o.TokenURL == "" && o.Resource == "" &&
		o.DPoP == "" && o.SigningAlgorithm == "" && o.TokenExchange == nil && o.Login == nil)
}

// Files returns the secret files the block reads, with the field naming
// each.
func (o *OAuth) Files() []ClientFile {
	var out []ClientFile
	files := []ClientFile{{"oauth.client_secret_file", o.ClientSecretFile}, {"oauth.private_key_file", o.PrivateKeyFile}, {"oauth.assertion_file", o.AssertionFile}}
	if x := o.TokenExchange; x != nil {
		files = append(files, ClientFile{"oauth.token_exchange.client_secret_file", x.ClientSecretFile}, ClientFile{"oauth.token_exchange.subject_token_file", x.SubjectTokenFile})
	}
	for _, f := range files {
		if f.Path != "" {
			out = append(out, f)
		}
	}
	return out
}

// SetDirectory joins the block's relative file paths to dir.
func (o *OAuth) SetDirectory(dir string) {
	paths := []*string{&o.ClientSecretFile, &o.PrivateKeyFile, &o.AssertionFile}
	if l := o.Login; l != nil {
		paths = append(paths, &l.SessionFile)
	}
	if x := o.TokenExchange; x != nil {
		paths = append(paths, &x.ClientSecretFile, &x.SubjectTokenFile)
	}
	for _, p := range paths {
		*p = promconfig.JoinDir(dir, *p)
	}
}

// check returns the block's problems, fields named from "oauth".
func (o *OAuth) check(hc *HTTPClient) []issue {
	var is issues
	if o.IsZero() {
		return nil
	}
	if l := o.Login; l != nil {
		if o.PrivateKeyFile != "" || o.AssertionFile != "" || o.TokenExchange != nil || o.TokenURL != "" {
			is.add("oauth.login", "is a person's session: private_key_file, assertion_file, token_exchange and token_url are a machine's")
		}
		if l.ClientMetadataURL != "" {
			if u, err := url.Parse(l.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.User != nil || u.Fragment != "" {
				is.add("oauth.login.client_metadata_url", "must be an https URL with a path, no user information or fragment (a client ID metadata document's URL is its client_id)")
			}
		}
		if o.ClientSecretFile != "" && o.ClientID == "" {
			is.add("oauth.client_id", "required with client_secret_file: the pre-registered client the secret is for")
		}
		slices.SortStableFunc(is, func(a, b issue) int { return strings.Compare(a.field, b.field) })
		return append(is, o.checkCommon(hc)...)
	}
	if o.ClientSecretFile == "" && o.PrivateKeyFile == "" && o.AssertionFile == "" && o.TokenExchange == nil {
		is.add("oauth", "needs client_secret_file, private_key_file, assertion_file or token_exchange: a machine identity needs a credential")
	}
	if x := o.TokenExchange; x != nil {
		if o.AssertionFile != "" {
			is.add("oauth.token_exchange", "and assertion_file both set: the assertion is either a file or the identity provider's ID-JAG")
		}
		if x.TokenURL == "" {
			is.add("oauth.token_exchange.token_url", "required: the identity provider's token endpoint")
		}
		if x.ClientID == "" {
			is.add("oauth.token_exchange.client_id", "required: driftd's client at the identity provider")
		}
		if x.SubjectTokenFile == "" {
			is.add("oauth.token_exchange.subject_token_file", "required: the identity token to exchange")
		}
		if o.TokenURL != "" && o.Issuer == "" {
			is.add("oauth.issuer", "required with token_url and token_exchange: the ID-JAG's audience")
		}
	}
	if o.ClientSecretFile != "" && o.PrivateKeyFile != "" {
		is.add("oauth.private_key_file", "and client_secret_file both set: a client authenticates one way")
	}
	if o.ClientID == "" && o.AssertionFile == "" && o.TokenExchange == nil {
		is.add("oauth.client_id", "required with client_secret_file or private_key_file")
	}
	return append(is, o.checkCommon(hc)...)
}

// checkCommon checks what a machine identity and a login share.
func (o *OAuth) checkCommon(hc *HTTPClient) []issue {
	var is issues
	switch m := o.TokenEndpointAuthMethod; m {
	case "":
	case AuthClientSecretBasic, AuthClientSecretPost:
		if o.ClientSecretFile == "" {
			is.add("oauth.token_endpoint_auth_method", "%s needs client_secret_file", m)
		}
	case AuthPrivateKeyJWT:
		if o.PrivateKeyFile == "" {
			is.add("oauth.token_endpoint_auth_method", "private_key_jwt needs private_key_file")
		}
	case AuthNone:
		if o.AssertionFile == "" && o.TokenExchange == nil && o.Login == nil {
			is.add("oauth.token_endpoint_auth_method", "none is only for the JWT-bearer grant (assertion_file)")
		}
	default:
		is.add("oauth.token_endpoint_auth_method", "%q must be one of client_secret_basic, client_secret_post, private_key_jwt, none", m)
	}
	if a := o.SigningAlgorithm; a != "" && a != "ES256" && a != "RS256" {
		is.add("oauth.signing_algorithm", "%q must be ES256 or RS256", a)
	}
	if d := o.DPoP; d != "" && d != "auto" && d != "always" && d != "never" {
		is.add("oauth.dpop", "%q must be auto, always or never", d)
	}
	urls := []struct{ field, v string }{{"oauth.issuer", o.Issuer}, {"oauth.token_url", o.TokenURL}, {"oauth.resource", o.Resource}}
	if x := o.TokenExchange; x != nil {
		urls = append(urls, struct{ field, v string }{"oauth.token_exchange.token_url", x.TokenURL})
	}
	for _, f := range urls {
		if f.v == "" {
			continue
		}
		u, err := url.Parse(f.v)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			is.add(f.field, "must be an http(s) URL")
		case u.User != nil:
			is.add(f.field, "carries user information: credentials come from files, never from a URL")
		case u.Fragment != "" || strings.Contains(f.v, "#"):
			is.add(f.field, "must not have a fragment")
		case f.field == "oauth.issuer" && (u.RawQuery != "" || u.ForceQuery):
			is.add(f.field, "must not have a query (RFC 8414 §2)")
		}
	}
	if o.Resource != "" && o.TokenURL == "" {
		is.add("oauth.resource", "only with token_url: with discovery, the resource is the protected resource metadata's")
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			is.add(fmt.Sprintf("oauth.scopes[%d]", i), "%q is not a scope token (RFC 6749 §3.3)", s)
		}
	}
	c := &hc.HTTPClientConfig
	if c.Authorization != nil || c.BasicAuth != nil || c.OAuth2 != nil || c.BearerToken != "" || c.BearerTokenFile != "" {
		is.add("oauth", "and an http_client credential (authorization, basic_auth, oauth2, bearer_token) both set the Authorization header: keep one")
	}
	if c.HTTPHeaders != nil {
		for name := range c.HTTPHeaders.Headers {
			if h := strings.ToLower(name); h == "authorization" || h == "dpop" {
				is.add("oauth", "and http_client.http_headers.%s both set %s: keep one", name, name)
			}
		}
	}
	slices.SortStableFunc(is, func(a, b issue) int { return strings.Compare(a.field, b.field) })
	return is
}
