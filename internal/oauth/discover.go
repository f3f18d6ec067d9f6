// Package oauth is the client side of MCP authorization for a machine:
// discovery (RFC 9728 protected resource metadata, RFC 8414 and OpenID
// discovery, in the 2026-07-28 spec's order), the client credentials and
// JWT-bearer grants with client_secret_basic, client_secret_post,
// private_key_jwt or no client authentication, the resource parameter
// (RFC 8707), DPoP (RFC 9449), and a cache of tokens shared by every run
// and target that presents the same credential (docs/authentication.md).
//
// The same discovery serves the probe's check of a server's authorization
// surface, which sends no credential: both fetch what a client must, and
// only from where the fetch rule allows (docs/security.md, "The
// authorization surface").
package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// ProtectedResource is protected resource metadata (RFC 9728 §2) as driftd
// reads it.
type ProtectedResource struct {
	Resource             *string  `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is authorization server metadata (RFC 8414 §2, OpenID
// Discovery) as driftd reads it.
type ServerMetadata struct {
	Issuer                *string `json:"issuer"`
	AuthorizationEndpoint string  `json:"authorization_endpoint"`
	TokenEndpoint         string  `json:"token_endpoint"`
	RegistrationEndpoint  string  `json:"registration_endpoint"`
	RevocationEndpoint    string  `json:"revocation_endpoint"`
	// DeviceAuthorizationEndpoint is RFC 8628's (§4).
	DeviceAuthorizationEndpoint string   `json:"device_authorization_endpoint"`
	CodeChallengeMethods        []string `json:"code_challenge_methods_supported"`
	IssParameterSupported       bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocument    bool     `json:"client_id_metadata_document_supported"`
	TokenEndpointAuthMethods    []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthAlgs       []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	DPoPAlgs                    []string `json:"dpop_signing_alg_values_supported"`
	ScopesSupported             []string `json:"scopes_supported"`
}

// Fetch gets one metadata URL and returns the body of a 200 answer, or
// nil and what came instead ("HTTP 404", "redirect not followed",
// "response_too_large", "not fetched: …"). It bounds size, time and count;
// Discover decides what may be fetched.
type Fetch func(ctx context.Context, url string) (body []byte, outcome string)

// Attempt is one URL tried and what came of it.
type Attempt struct{ URL, Outcome string }

// Discovery is what a client finds when it looks for how to authenticate
// to an endpoint. URLs are as fetched: a caller that shows them redacts
// them first.
type Discovery struct {
	// PRMURL is where protected resource metadata was served, "" when
	// nowhere; PRMTried lists every URL tried.
	PRMURL   string
	PRMTried []Attempt
	PRM      *ProtectedResource
	// PRMProblem says what is wrong with the served document ("" when
	// nothing): "has no resource string", ….
	PRMProblem string
	// ResourceMatches is true when the document's resource identifies the
	// endpoint (ResourceMatches).
	ResourceMatches bool
	// NotFetched lists, in words, what the fetch rule or the time left
	// unfetched.
	NotFetched []string
	// Servers are the authorization servers checked, in the document's
	// order, at most MaxServers.
	Servers []Server
}

// Server is one authorization server as discovered.
type Server struct {
	Issuer string
	// MetadataURL is where its metadata was served, "" when nowhere.
	MetadataURL string
	Tried       []Attempt
	Metadata    *ServerMetadata
	// IssuerMatches is true when the metadata's issuer is, byte for byte,
	// Issuer (RFC 8414 §3.3).
	IssuerMatches bool
}

// MaxServers is how many of the listed authorization servers are checked.
const MaxServers = 2

// Usable returns the first authorization server a credential may be sent
// to — protected resource metadata well-formed and naming the endpoint,
// the server's metadata served with its own issuer and a token endpoint —
// or why there is none.
func (d *Discovery) Usable() (*Server, error) {
	switch {
	case d.PRMURL == "":
		return nil, fmt.Errorf("no protected resource metadata (RFC 9728) was served: tried %s", Tried(d.PRMTried))
	case d.PRMProblem != "":
		return nil, fmt.Errorf("the protected resource metadata at %s %s", redact(d.PRMURL), d.PRMProblem)
	case !d.ResourceMatches:
		return nil, fmt.Errorf("the protected resource metadata at %s names a resource other than the endpoint; no credential is sent to its authorization servers", redact(d.PRMURL))
	}
	var why []string
	for i := range d.Servers {
		s := &d.Servers[i]
		switch {
		case s.Metadata == nil:
			why = append(why, fmt.Sprintf("%s serves no metadata (tried %s)", redact(s.Issuer), Tried(s.Tried)))
		case !s.IssuerMatches:
			why = append(why, fmt.Sprintf("the metadata at %s names an issuer other than %s", redact(s.MetadataURL), redact(s.Issuer)))
		case s.Metadata.TokenEndpoint == "":
			why = append(why, fmt.Sprintf("%s has no token_endpoint", redact(s.Issuer)))
		default:
			return s, nil
		}
	}
	why = append(why, d.NotFetched...)
	if len(why) == 0 {
		why = append(why, "no authorization server was checked")
	}
	return nil, fmt.Errorf("no usable authorization server: %s", strings.Join(why, "; "))
}

// Discover looks for how to authenticate to endpoint, the way the
// 2026-07-28 spec orders it: protected resource metadata from the
// challenge's resource_metadata, else the well-known paths; then the
// metadata of each listed authorization server. A URL is fetched only when
// it is same-origin with the endpoint, or names an authorization server
// listed by protected resource metadata that was served from the
// endpoint's origin and whose resource matched the endpoint — or is the
// configured issuer (pinned, "" when none), which is then the only one
// fetched.
func Discover(ctx context.Context, fetch Fetch, endpoint *url.URL, resourceMetadata, pinned string) *Discovery {
	d := &Discovery{}
	var candidates []string
	if resourceMetadata != "" {
		u, err := url.Parse(resourceMetadata)
		if err != nil || !SameOrigin(u, endpoint) || u.User != nil {
			d.NotFetched = append(d.NotFetched, fmt.Sprintf("the challenge's resource_metadata %s is not same-origin with the endpoint, or carries user information", redact(resourceMetadata)))
			return d
		}
		candidates = []string{u.String()}
	} else {
		candidates = PRMWellKnown(endpoint)
	}
	for _, c := range candidates {
		body, outcome := fetch(ctx, c)
		d.PRMTried = append(d.PRMTried, Attempt{c, outcome})
		if body == nil {
			continue
		}
		d.PRMURL = c
		var doc ProtectedResource
		switch {
		case json.Unmarshal(body, &doc) != nil:
			d.PRMProblem = "is not a JSON object of the RFC 9728 members"
		case doc.Resource == nil:
			d.PRMProblem = "has no resource string"
		case len(doc.AuthorizationServers) == 0:
			d.PRMProblem = "lists no authorization_servers"
		default:
			for i, as := range doc.AuthorizationServers {
				if !IssuerURL(as) {
					d.PRMProblem = fmt.Sprintf("has authorization_servers[%d] that is not an http(s) URL without query or fragment", i)
					break
				}
			}
		}
		d.PRM = &doc
		d.ResourceMatches = doc.Resource != nil && ResourceMatches(*doc.Resource, endpoint)
		break
	}
	if d.PRMURL == "" {
		if ctx.Err() != nil {
			d.NotFetched = append(d.NotFetched, "the time ran out before protected resource metadata was found: tried "+Tried(d.PRMTried))
		}
		return d
	}
	if d.PRMProblem != "" || !d.ResourceMatches {
		return d
	}
	servers := d.PRM.AuthorizationServers
	if pinned != "" {
		servers = []string{pinned}
	} else if len(servers) > MaxServers {
		d.NotFetched = append(d.NotFetched, fmt.Sprintf("%d authorization servers are listed; the first %d are checked", len(servers), MaxServers))
		servers = servers[:MaxServers]
	}
	for _, issuer := range servers {
		if ctx.Err() != nil {
			break
		}
		d.Servers = append(d.Servers, server(ctx, fetch, issuer))
		if s := &d.Servers[len(d.Servers)-1]; s.Metadata == nil && ctx.Err() != nil {
			d.NotFetched = append(d.NotFetched, fmt.Sprintf("the time ran out before the metadata of authorization server %s was found: tried %s", redact(issuer), Tried(s.Tried)))
		}
	}
	return d
}

// server finds the metadata of one authorization server, trying the
// discovery paths in the spec's order.
func server(ctx context.Context, fetch Fetch, issuer string) Server {
	s := Server{Issuer: issuer}
	iu, err := url.Parse(issuer)
	if err != nil || !IssuerURL(issuer) {
		s.Tried = append(s.Tried, Attempt{issuer, "not an issuer URL"})
		return s
	}
	for _, c := range ASWellKnown(iu) {
		body, outcome := fetch(ctx, c)
		if body == nil {
			s.Tried = append(s.Tried, Attempt{c, outcome})
			continue
		}
		var md ServerMetadata
		if json.Unmarshal(body, &md) != nil || md.Issuer == nil {
			s.Tried = append(s.Tried, Attempt{c, "not a JSON object of RFC 8414 members with an issuer"})
			continue
		}
		s.Tried = append(s.Tried, Attempt{c, outcome})
		s.MetadataURL, s.Metadata = c, &md
		s.IssuerMatches = *md.Issuer == issuer
		return s
	}
	return s
}

// PRMWellKnown returns the protected resource metadata URLs of an endpoint
// in the spec's order: path-inserted, then root. The endpoint's query is
// never part of them.
func PRMWellKnown(endpoint *url.URL) []string {
	const wk = "/.well-known/oauth-protected-resource"
	root := endpoint.Scheme + "://" + endpoint.Host
	if p := strings.TrimSuffix(endpoint.EscapedPath(), "/"); p != "" {
		return []string{root + wk + p, root + wk}
	}
	return []string{root + wk}
}

// ASWellKnown returns an issuer's metadata URLs in the spec's order: for
// an issuer with a path, RFC 8414 path-inserted, OpenID path-inserted, then
// OpenID path-appended; without one, RFC 8414 then OpenID.
func ASWellKnown(issuer *url.URL) []string {
	root := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{root + "/.well-known/oauth-authorization-server", root + "/.well-known/openid-configuration"}
	}
	return []string{
		root + "/.well-known/oauth-authorization-server" + p,
		root + "/.well-known/openid-configuration" + p,
		root + p + "/.well-known/openid-configuration",
	}
}

// SameOrigin reports whether u has a's scheme, host and port (RFC 6454).
func SameOrigin(u, a *url.URL) bool {
	return strings.EqualFold(u.Scheme, a.Scheme) && strings.EqualFold(u.Hostname(), a.Hostname()) && port(u) == port(a)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// IssuerURL reports whether s can be an issuer (RFC 8414 §2): an http(s)
// URL with a host, no user information, query or fragment.
func IssuerURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.Contains(s, "#")
}

// ResourceMatches reports whether a protected resource metadata's resource
// identifies the endpoint: the same origin, and a path that is the
// endpoint's or a parent of it on a segment boundary (a trailing slash
// aside), as MCP clients accept it. Query and fragment do not count.
func ResourceMatches(resource string, endpoint *url.URL) bool {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || !SameOrigin(u, endpoint) || u.Fragment != "" {
		return false
	}
	rp := strings.TrimSuffix(u.EscapedPath(), "/")
	tp := strings.TrimSuffix(endpoint.EscapedPath(), "/")
	return rp == tp || strings.HasPrefix(tp, rp+"/")
}

// Tried lists attempts for a message, URLs redacted.
func Tried(as []Attempt) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = fmt.Sprintf("%s (%s)", redact(a.URL), a.Outcome)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
