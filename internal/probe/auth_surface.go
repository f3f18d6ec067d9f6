package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/oauth"
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
	// maxSurfaceFetches bounds the GETs of one run's surface check: two
	// protected resource metadata paths and, for two authorization
	// servers, three discovery paths each.
	maxSurfaceFetches = 8
	// maxSurfaceTime bounds the whole check; it also takes at most half
	// of what is left of the run's deadline, so that a server whose
	// metadata hangs cannot fail a run that listed its tools.
	maxSurfaceTime = 10 * time.Second
)

// authSurface checks the authorization surface of a server that refused
// the request of ex with ch, through anon, the anonymous listing's HTTP
// client (its connection to the endpoint's origin reused), or when nil a
// fresh anonymous client. It runs once per run. What it fetches, and from
// where, is oauth.Discover's: the same discovery a machine identity uses.
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
	found := &AuthSurface{AuthorizationServers: []AuthServerSurface{}}
	r.rep.AuthPosture.Surface = found
	max := int64(maxMetadataBytes)
	if m := r.t.MaxResponseBytes.Bytes(); m > 0 && m < max {
		max = m
	}
	left := maxSurfaceFetches
	fetch := func(ctx context.Context, u string) ([]byte, string) {
		if left == 0 {
			r.emitFrom(ex, r.checkNotFetched(fmt.Sprintf("%s: over the limit of %d metadata fetches a run", config.RedactedURL(u), maxSurfaceFetches))...)
			return nil, "not fetched"
		}
		left--
		return oauth.Get(ctx, hc, u, max, r.budget)
	}
	resourceMetadata := ""
	if ch != nil {
		resourceMetadata = ch.ResourceMetadata
	}
	d := oauth.Discover(ctx, fetch, target, resourceMetadata, "")
	found.Fetches = maxSurfaceFetches - left
	for _, what := range d.NotFetched {
		r.emitFrom(ex, r.checkNotFetched(what)...)
	}
	switch {
	case d.PRMURL == "" && len(d.NotFetched) == 0:
		r.emitFrom(ex, r.checkPRM("", "tried "+oauth.Tried(d.PRMTried), false)...)
		return
	case d.PRMURL == "":
		return
	}
	where := config.RedactedURL(d.PRMURL)
	found.ProtectedResourceMetadata = where
	r.emitFrom(ex, r.checkPRM(where, d.PRMProblem, d.PRM.Resource != nil && !d.ResourceMatches)...)
	for _, s := range d.Servers {
		issuer := config.RedactedURL(s.Issuer)
		found.AuthorizationServers = append(found.AuthorizationServers, AuthServerSurface{Issuer: issuer, Metadata: config.RedactedURL(s.MetadataURL)})
		endpoints := map[string]string{"issuer": s.Issuer}
		switch {
		case s.Metadata != nil:
			r.emitFrom(ex, r.checkASMetadata(issuer, config.RedactedURL(s.MetadataURL), s.Metadata, s.IssuerMatches)...)
			if s.IssuerMatches {
				md := s.Metadata
				endpoints["authorization_endpoint"], endpoints["token_endpoint"] = md.AuthorizationEndpoint, md.TokenEndpoint
				endpoints["registration_endpoint"] = md.RegistrationEndpoint
			}
		case ctx.Err() == nil:
			r.emitFrom(ex, r.checkASMetadata(issuer, "tried "+oauth.Tried(s.Tried), nil, false)...)
		}
		r.emitFrom(ex, r.checkASEndpoints(issuer, endpoints)...)
	}
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
func (r *run) checkASMetadata(issuer, where string, md *oauth.ServerMetadata, issuerOK bool) []catalogue.Finding {
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
