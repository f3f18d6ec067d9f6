package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
)

// The authorization surface (docs/security.md#the-authorization-surface):
// after a refusal, what a client would discover to authenticate, fetched
// the way a client must and checked against the 2026-07-28 authorization
// spec. No credential is ever sent: the fetches use an anonymous client,
// follow no redirect, read at most maxMetadataBytes each from the run's
// byte budget, under the run's deadline, and number at most
// maxSurfaceFetches, within maxSurfaceTime. A URL the server hands out is fetched only when it is
// same-origin with the endpoint (resource_metadata) or is an authorization
// server named by protected resource metadata that was served from the
// endpoint's origin and whose resource matched the endpoint.

const (
	// maxMetadataBytes bounds one metadata document (and max_response_bytes
	// bounds it further when smaller): metadata is a few KiB.
	maxMetadataBytes = 256 << 10
	// maxAuthorizationServers is how many of the listed authorization
	// servers are checked.
	maxAuthorizationServers = 2
	// maxSurfaceFetches bounds the GETs of one run's surface check: two
	// protected resource metadata paths and, for two authorization
	// servers, three discovery paths each.
	maxSurfaceFetches = 8
	// maxSurfaceTime bounds the whole check; it also takes at most half
	// of what is left of the run's deadline, so that a server whose
	// metadata hangs cannot fail a run that listed its tools.
	maxSurfaceTime = 10 * time.Second
)

// surface is the state of one run's check of the authorization surface.
type surface struct {
	r      *run
	ex     *mcp.Exchange // the refusal: the findings' evidence
	hc     *http.Client
	target *url.URL
	limit  int64
	left   int // fetches left
	found  *AuthSurface
}

// prm is protected resource metadata (RFC 9728 §2) as driftd reads it.
type prm struct {
	Resource             *string  `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
}

// asMetadata is authorization server metadata (RFC 8414 §2, OpenID
// Discovery) as driftd reads it.
type asMetadata struct {
	Issuer                   *string  `json:"issuer"`
	AuthorizationEndpoint    string   `json:"authorization_endpoint"`
	TokenEndpoint            string   `json:"token_endpoint"`
	RegistrationEndpoint     string   `json:"registration_endpoint"`
	CodeChallengeMethods     []string `json:"code_challenge_methods_supported"`
	IssParameterSupported    bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocument bool     `json:"client_id_metadata_document_supported"`
}

// authSurface checks the authorization surface of a server that refused
// the request of ex with ch, through anon, the anonymous listing's HTTP
// client (its connection to the endpoint's origin reused), or when nil a
// fresh anonymous client. It runs once per run.
func (r *run) authSurface(ctx context.Context, ch *mcp.Challenge, ex *mcp.Exchange, anon *http.Client) {
	if r.surfaceChecked || ctx.Err() != nil {
		return
	}
	r.surfaceChecked = true
	limit := maxSurfaceTime
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(dl)/2)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	target, err := url.Parse(r.t.URL)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") {
		return
	}
	if ch != nil && ch.Status == http.StatusUnauthorized {
		r.emitFrom(ex, r.checkChallengeHints(ch)...)
	}
	hc := anon
	if hc == nil {
		var err error
		if hc, err = NewHTTPClient(config.Anonymous(r.t.HTTPClient.HTTPClientConfig), r.opts.Version, 0); err != nil {
			return // the anonymous probe reports a client that cannot be built
		}
		defer hc.CloseIdleConnections()
	}
	s := &surface{r: r, ex: ex, hc: hc, target: target, limit: maxMetadataBytes, left: maxSurfaceFetches,
		found: &AuthSurface{AuthorizationServers: []AuthServerSurface{}}}
	r.rep.AuthPosture.Surface = s.found
	defer func() { s.found.Fetches = maxSurfaceFetches - s.left }()
	if m := r.t.MaxResponseBytes.Bytes(); m > 0 && m < s.limit {
		s.limit = m
	}
	doc, ok := s.protectedResource(ctx, ch)
	if !ok {
		return
	}
	servers := doc.AuthorizationServers
	if len(servers) > maxAuthorizationServers {
		r.emitFrom(ex, r.checkNotFetched(fmt.Sprintf("%d authorization servers are listed; the first %d are checked", len(servers), maxAuthorizationServers))...)
		servers = servers[:maxAuthorizationServers]
	}
	for _, issuer := range servers {
		if ctx.Err() != nil {
			return
		}
		s.authorizationServer(ctx, issuer)
	}
}

// protectedResource finds and checks the protected resource metadata, and
// reports whether its authorization servers may be fetched.
func (s *surface) protectedResource(ctx context.Context, ch *mcp.Challenge) (*prm, bool) {
	r := s.r
	var candidates []string
	if ch != nil && ch.ResourceMetadata != "" {
		u, err := url.Parse(ch.ResourceMetadata)
		if err != nil || !sameOrigin(u, s.target) || u.User != nil {
			r.emitFrom(s.ex, r.checkNotFetched(fmt.Sprintf("the challenge's resource_metadata %s is not same-origin with the endpoint, or carries user information", config.RedactedURL(ch.ResourceMetadata)))...)
			return nil, false
		}
		candidates = []string{u.String()}
	} else {
		candidates = prmWellKnown(s.target)
	}
	var tried []string
	for _, c := range candidates {
		body, outcome := s.get(ctx, c)
		tried = append(tried, fmt.Sprintf("%s (%s)", config.RedactedURL(c), outcome))
		if body == nil {
			continue
		}
		s.found.ProtectedResourceMetadata = config.RedactedURL(c)
		var doc prm
		problem := ""
		switch {
		case json.Unmarshal(body, &doc) != nil:
			problem = "is not a JSON object of the RFC 9728 members"
		case doc.Resource == nil:
			problem = "has no resource string"
		case len(doc.AuthorizationServers) == 0:
			problem = "lists no authorization_servers"
		default:
			for i, as := range doc.AuthorizationServers {
				if !issuerURL(as) {
					problem = fmt.Sprintf("has authorization_servers[%d] that is not an http(s) URL without query or fragment", i)
					break
				}
			}
		}
		r.emitFrom(s.ex, r.checkPRM(config.RedactedURL(c), problem, doc.Resource != nil && !resourceMatches(*doc.Resource, s.target))...)
		return &doc, problem == "" && resourceMatches(*doc.Resource, s.target)
	}
	if ctx.Err() != nil {
		r.emitFrom(s.ex, r.checkNotFetched("the check's time ran out before protected resource metadata was found: tried "+strings.Join(tried, ", "))...)
		return nil, false
	}
	r.emitFrom(s.ex, r.checkPRM("", "tried "+strings.Join(tried, ", "), false)...)
	return nil, false
}

// authorizationServer finds and checks the metadata of one authorization
// server, trying the discovery paths in the spec's order.
func (s *surface) authorizationServer(ctx context.Context, issuer string) {
	r := s.r
	iu, _ := url.Parse(issuer) // issuerURL held
	endpoints := map[string]string{"issuer": issuer}
	s.found.AuthorizationServers = append(s.found.AuthorizationServers, AuthServerSurface{Issuer: config.RedactedURL(issuer)})
	found := &s.found.AuthorizationServers[len(s.found.AuthorizationServers)-1]
	defer func() { r.emitFrom(s.ex, r.checkASEndpoints(config.RedactedURL(issuer), endpoints)...) }()
	var tried []string
	for _, c := range asWellKnown(iu) {
		body, outcome := s.get(ctx, c)
		tried = append(tried, fmt.Sprintf("%s (%s)", config.RedactedURL(c), outcome))
		if body == nil {
			continue
		}
		var md asMetadata
		if json.Unmarshal(body, &md) != nil || md.Issuer == nil {
			tried[len(tried)-1] = config.RedactedURL(c) + " (not a JSON object of RFC 8414 members with an issuer)"
			continue
		}
		found.Metadata = config.RedactedURL(c)
		matched := *md.Issuer == issuer
		r.emitFrom(s.ex, r.checkASMetadata(config.RedactedURL(issuer), config.RedactedURL(c), &md, matched)...)
		if matched {
			endpoints["authorization_endpoint"], endpoints["token_endpoint"] = md.AuthorizationEndpoint, md.TokenEndpoint
			endpoints["registration_endpoint"] = md.RegistrationEndpoint
		}
		return
	}
	if ctx.Err() != nil {
		r.emitFrom(s.ex, r.checkNotFetched(fmt.Sprintf("the check's time ran out before the metadata of authorization server %s was found: tried %s",
			config.RedactedURL(issuer), strings.Join(tried, ", ")))...)
		return
	}
	r.emitFrom(s.ex, r.checkASMetadata(config.RedactedURL(issuer), "tried "+strings.Join(tried, ", "), nil, false)...)
}

// get fetches one metadata URL and returns the body of a 200 answer, or
// nil and what came instead.
func (s *surface) get(ctx context.Context, u string) ([]byte, string) {
	if s.left == 0 {
		s.r.emitFrom(s.ex, s.r.checkNotFetched(fmt.Sprintf("%s: over the limit of %d metadata fetches a run", config.RedactedURL(u), maxSurfaceFetches))...)
		return nil, "not fetched"
	}
	s.left--
	doc, err := mcp.GetDocument(ctx, s.hc, u, s.limit, s.r.budget)
	switch {
	case err != nil:
		return nil, string(mcp.Classify(err))
	case doc.Status >= 300 && doc.Status < 400:
		return nil, fmt.Sprintf("HTTP %d, redirect not followed", doc.Status)
	case doc.Status != http.StatusOK:
		return nil, fmt.Sprintf("HTTP %d", doc.Status)
	}
	return doc.Body, "HTTP 200"
}

// prmWellKnown returns the protected resource metadata URLs of an endpoint
// in the spec's order: path-inserted, then root.
func prmWellKnown(target *url.URL) []string {
	const wk = "/.well-known/oauth-protected-resource"
	root := target.Scheme + "://" + target.Host
	if p := strings.TrimSuffix(target.EscapedPath(), "/"); p != "" {
		return []string{root + wk + p, root + wk}
	}
	return []string{root + wk}
}

// asWellKnown returns an issuer's metadata URLs in the spec's order: for
// an issuer with a path, RFC 8414 path-inserted, OpenID path-inserted, then
// OpenID path-appended; without one, RFC 8414 then OpenID.
func asWellKnown(issuer *url.URL) []string {
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

// sameOrigin reports whether u has a's scheme, host and port (RFC 6454).
func sameOrigin(u, a *url.URL) bool {
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

// issuerURL reports whether s can be an issuer (RFC 8414 §2): an http(s)
// URL with a host, no user information, query or fragment.
func issuerURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.Contains(s, "#")
}

// resourceMatches reports whether a protected resource metadata's resource
// identifies the endpoint: the same origin, and a path that is the
// endpoint's or a parent of it on a segment boundary (a trailing slash
// aside), as MCP clients accept it. Query and fragment do not count.
func resourceMatches(resource string, target *url.URL) bool {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || !sameOrigin(u, target) || u.Fragment != "" {
		return false
	}
	rp := strings.TrimSuffix(u.EscapedPath(), "/")
	tp := strings.TrimSuffix(target.EscapedPath(), "/")
	return rp == tp || strings.HasPrefix(tp, rp+"/")
}

// checkChallengeHints reports MCP-AUTH-CHALLENGE-INCOMPLETE for a 401
// whose challenge lacks resource_metadata or scope. A refusal with no
// challenge at all is MCP-AUTH-NO-CHALLENGE's.
func (r *run) checkChallengeHints(ch *mcp.Challenge) []catalogue.Finding {
	if !ch.WWWAuthenticate {
		return nil
	}
	var missing []string
	if ch.ResourceMetadata == "" {
		missing = append(missing, "resource_metadata (clients fall back to the well-known paths)")
	}
	if ch.Scope == "" {
		missing = append(missing, "scope (clients cannot tell which scopes to request)")
	}
	if len(missing) == 0 {
		return nil
	}
	f := catalogue.New(catalogue.AuthChallengeIncomplete, "", "the HTTP 401 challenge has no "+strings.Join(missing, " and no "))
	return r.gradeSurface(f, false)
}

// checkPRM reports the protected resource metadata fetched from where:
// MCP-AUTH-PRM-MISSING when where is empty (problem says what was tried),
// MCP-AUTH-PRM-INVALID for a problem, MCP-AUTH-RESOURCE-MISMATCH when its
// resource does not identify the endpoint.
func (r *run) checkPRM(where, problem string, mismatch bool) []catalogue.Finding {
	var out []catalogue.Finding
	switch {
	case where == "":
		return r.gradeSurface(catalogue.New(catalogue.AuthPRMMissing, "",
			"no protected resource metadata (RFC 9728) was served: "+problem), true)
	case problem != "":
		out = r.gradeSurface(catalogue.New(catalogue.AuthPRMInvalid, "",
			fmt.Sprintf("the protected resource metadata at %s %s", where, problem)), true)
	}
	if mismatch {
		out = append(out, r.gradeSurface(catalogue.New(catalogue.AuthResourceMismatch, "",
			fmt.Sprintf("the protected resource metadata at %s names a resource that is not the endpoint %s; its authorization servers were not fetched",
				where, config.RedactedURL(r.t.URL))), true)...)
	}
	return out
}

// checkNotFetched reports MCP-AUTH-SURFACE-NOT-FETCHED: a part of the
// surface the fetch rule left unchecked.
func (r *run) checkNotFetched(what string) []catalogue.Finding {
	return r.classified(one(catalogue.New(catalogue.AuthSurfaceNotFetched, "", what)))
}

// checkASMetadata reports the metadata of the authorization server issuer
// found at where (md nil: none was; where then says what was tried).
func (r *run) checkASMetadata(issuer, where string, md *asMetadata, issuerOK bool) []catalogue.Finding {
	if md == nil {
		return r.gradeSurface(catalogue.New(catalogue.AuthASMetadataMissing, "",
			fmt.Sprintf("authorization server %s serves no metadata: %s", issuer, where)), true)
	}
	if !issuerOK {
		return r.gradeSurface(catalogue.New(catalogue.AuthIssuerMismatch, "",
			fmt.Sprintf("the metadata at %s names an issuer other than %s; a client must reject the document", where, issuer)), true)
	}
	var out []catalogue.Finding
	if !slices.Contains(md.CodeChallengeMethods, "S256") {
		out = append(out, r.gradeSurface(catalogue.New(catalogue.AuthPKCES256Missing, "",
			fmt.Sprintf("authorization server %s: code_challenge_methods_supported does not list S256", issuer)), true)...)
	}
	if !md.IssParameterSupported {
		out = append(out, r.gradeSurface(catalogue.New(catalogue.AuthIssParameterMissing, "",
			fmt.Sprintf("authorization server %s: authorization_response_iss_parameter_supported is not true", issuer)), false)...)
	}
	if md.RegistrationEndpoint == "" && !md.ClientIDMetadataDocument {
		out = append(out, r.classified(one(catalogue.New(catalogue.AuthRegistrationMissing, "",
			fmt.Sprintf("authorization server %s has neither registration_endpoint nor client_id_metadata_document_supported: clients must be pre-registered, and how must be documented", issuer))))...)
	}
	return out
}

// checkASEndpoints reports MCP-AUTH-PLAINTEXT-ENDPOINT for each named
// endpoint of authorization server issuer that is plain http:// outside
// local classification.
func (r *run) checkASEndpoints(issuer string, endpoints map[string]string) []catalogue.Finding {
	cl := r.rep.Classification
	if cl.Class == "local" {
		return nil
	}
	var plain []string
	for name, v := range endpoints {
		if u, err := url.Parse(v); err == nil && strings.EqualFold(u.Scheme, "http") {
			plain = append(plain, name)
		}
	}
	if len(plain) == 0 {
		return nil
	}
	slices.Sort(plain)
	f := catalogue.New(catalogue.AuthPlaintextEndpoint, "",
		fmt.Sprintf("authorization server %s: plain http:// in %s (classification %s: %s)", issuer, strings.Join(plain, ", "), cl.Class, cl.Reason))
	if cl.Class == "production" {
		f.Severity = catalogue.Error
	}
	return r.classified(one(f))
}

// gradeSurface grades an authorization surface finding by classification:
// INFO local; a broken MUST is ERROR in production; WARN otherwise.
func (r *run) gradeSurface(f catalogue.Finding, must bool) []catalogue.Finding {
	switch cl := r.rep.Classification.Class; {
	case cl == "local":
		f.Severity = catalogue.Info
	case cl == "production" && must:
		f.Severity = catalogue.Error
	default:
		f.Severity = catalogue.Warn
	}
	return r.classified(one(f))
}
