package probe_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// surfaceMarker is server text a finding must never quote.
const surfaceMarker = "MARKER-surface-text"

// authSurface is an in-process authorization surface served in front of
// the mock: it refuses requests to the endpoint that carry no
// Authorization header with a 401 challenge, and serves protected
// resource metadata and authorization server metadata on the same origin.
// The zero value is well-formed; each field breaks one item.
type authSurface struct {
	// prmAt is where the protected resource metadata is served:
	// "challenge" (default: a path the challenge names), "inserted" or
	// "root" (the well-known paths; the challenge then names none), or
	// "none".
	prmAt string
	// noScope drops the challenge's scope hint.
	noScope bool
	// resource, if set, is the PRM's resource instead of the endpoint.
	resource string
	// prm, if set, is the PRM document, raw.
	prm string
	// issuerPath is the issuer's path ("" for none; default "/tenant").
	issuerPath *string
	// asAt is which discovery path of the issuer serves its metadata (0
	// the first in the spec's order); -1 serves none.
	asAt int
	// issuer, if set, is the metadata's issuer instead of the right one.
	issuer string
	// noS256, noIss and noRegistration break those members.
	noS256, noIss, noRegistration bool
	// foreignAS, if set, is the authorization server URL listed (another
	// origin).
	foreignAS string
	// challengeURL, if set, is the challenge's resource_metadata.
	challengeURL string
	// hang, if set, holds every metadata request until the client goes
	// away.
	hang bool

	mu   sync.Mutex
	seen []string // paths requested other than the endpoint
	auth atomic.Int32
}

func (a *authSurface) issuerPathOr() string {
	if a.issuerPath == nil {
		return "/tenant"
	}
	return *a.issuerPath
}

func (a *authSurface) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := "http://" + r.Host
		issuer := origin + a.issuerPathOr()
		if r.URL.Path == mcptest.EndpointPath {
			if r.Header.Get("Authorization") != "" {
				next.ServeHTTP(w, r)
				return
			}
			params := []string{}
			switch {
			case strings.HasPrefix(a.challengeURL, "/"):
				params = append(params, fmt.Sprintf(`resource_metadata=%q`, origin+a.challengeURL))
			case a.challengeURL != "":
				params = append(params, fmt.Sprintf(`resource_metadata=%q`, a.challengeURL))
			case a.prmAt == "" || a.prmAt == "challenge":
				params = append(params, fmt.Sprintf(`resource_metadata=%q`, origin+"/meta/prm.json"))
			}
			if !a.noScope {
				params = append(params, `scope="tools:read"`)
			}
			w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		a.mu.Lock()
		a.seen = append(a.seen, r.URL.Path)
		a.mu.Unlock()
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			a.auth.Add(1)
		}
		if a.hang {
			<-r.Context().Done()
			return
		}
		prmPath := map[string]string{
			"": "/meta/prm.json", "challenge": "/meta/prm.json",
			"inserted": "/.well-known/oauth-protected-resource" + mcptest.EndpointPath,
			"root":     "/.well-known/oauth-protected-resource",
		}[a.prmAt]
		var asPaths []string
		if p := a.issuerPathOr(); p != "" {
			asPaths = []string{"/.well-known/oauth-authorization-server" + p, "/.well-known/openid-configuration" + p, p + "/.well-known/openid-configuration"}
		} else {
			asPaths = []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}
		}
		switch {
		case prmPath != "" && r.URL.Path == prmPath:
			if a.prm != "" {
				writeJSON(w, a.prm)
				return
			}
			resource := origin + mcptest.EndpointPath
			if a.resource != "" {
				resource = a.resource
			}
			as := issuer
			if a.foreignAS != "" {
				as = a.foreignAS
			}
			writeJSON(w, map[string]any{"resource": resource, "authorization_servers": []string{as},
				"resource_name": surfaceMarker, "scopes_supported": []string{"tools:read"}})
		case a.asAt >= 0 && a.asAt < len(asPaths) && r.URL.Path == asPaths[a.asAt]:
			md := map[string]any{
				"issuer":                                         issuer,
				"authorization_endpoint":                         issuer + "/authorize",
				"token_endpoint":                                 issuer + "/token",
				"registration_endpoint":                          issuer + "/register",
				"response_types_supported":                       []string{"code"},
				"code_challenge_methods_supported":               []string{"S256"},
				"authorization_response_iss_parameter_supported": true,
				"service_documentation":                          surfaceMarker,
			}
			if a.issuer != "" {
				md["issuer"] = a.issuer
			}
			if a.noS256 {
				md["code_challenge_methods_supported"] = []string{"plain"}
			}
			if a.noIss {
				delete(md, "authorization_response_iss_parameter_supported")
			}
			if a.noRegistration {
				delete(md, "registration_endpoint")
			}
			writeJSON(w, md)
		default:
			http.NotFound(w, r)
		}
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if s, ok := v.(string); ok {
		_, _ = w.Write([]byte(s))
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// paths returns the paths the surface was asked for.
func (a *authSurface) paths() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// surfaceScenario serves tool a behind surface a, for the rule table.
func surfaceScenario(a *authSurface) scenario {
	return scenario{opts: mcptest.Options{Tools: tools("a")}, declared: []string{"a"}, wrap: a.wrap}
}

// probeSurface runs a probe with a bearer token against the mock behind a.
func probeSurface(t *testing.T, a *authSurface, tweak func(*config.Target)) *probe.Report {
	t.Helper()
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a")})
	defer srv.Close()
	front := httptest.NewServer(a.wrap(srv.Handler))
	defer front.Close()
	return probeOnce(t, srv, declare(t, "a"), all(withBearer(t, token), func(tg *config.Target) {
		tg.URL = front.URL + mcptest.EndpointPath
	}, tweak))
}

// surfaceRules returns the MCP-AUTH rules of a report beyond the
// refusal's own.
func surfaceRules(rep *probe.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if catalogue.FamilyOf(f.Rule) == catalogue.FamilyAuth && f.Rule != catalogue.AuthEnforced {
			out = append(out, f.Rule)
		}
	}
	return out
}

func strptr(s string) *string { return &s }

func TestAuthSurface(t *testing.T) {
	cases := []struct {
		name string
		a    *authSurface
		want []string // the surface's findings, in the report's order
		// paths, if set, are the surface's paths requested, in order.
		paths []string
	}{
		{name: "well-formed", a: &authSurface{}, paths: []string{"/meta/prm.json", "/.well-known/oauth-authorization-server/tenant"}},
		{name: "prm at the path-inserted well-known", a: &authSurface{prmAt: "inserted"},
			want:  []string{catalogue.AuthChallengeIncomplete},
			paths: []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server/tenant"}},
		{name: "prm at the root well-known", a: &authSurface{prmAt: "root"},
			want:  []string{catalogue.AuthChallengeIncomplete},
			paths: []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server/tenant"}},
		{name: "prm unreachable", a: &authSurface{prmAt: "none"},
			want:  []string{catalogue.AuthChallengeIncomplete, catalogue.AuthPRMMissing},
			paths: []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
		{name: "challenge's prm unreachable", a: &authSurface{challengeURL: "/elsewhere"}, want: []string{catalogue.AuthPRMMissing},
			paths: []string{"/elsewhere"}},
		{name: "prm not json", a: &authSurface{prm: `<html>` + surfaceMarker}, want: []string{catalogue.AuthPRMInvalid}},
		{name: "prm without authorization servers", a: &authSurface{prm: `{"resource":"x","authorization_servers":[]}`},
			want: []string{catalogue.AuthPRMInvalid, catalogue.AuthResourceMismatch}},
		{name: "resource mismatch", a: &authSurface{resource: "https://other.example/mcp?" + surfaceMarker},
			want: []string{catalogue.AuthResourceMismatch}, paths: []string{"/meta/prm.json"}},
		{name: "resource on another port", a: &authSurface{resource: "http://127.0.0.1/"}, want: []string{catalogue.AuthResourceMismatch}},
		{name: "issuer mismatch", a: &authSurface{issuer: "https://evil.example/" + surfaceMarker}, want: []string{catalogue.AuthIssuerMismatch}},
		{name: "no S256", a: &authSurface{noS256: true}, want: []string{catalogue.AuthPKCES256Missing}},
		{name: "no iss parameter", a: &authSurface{noIss: true}, want: []string{catalogue.AuthIssParameterMissing}},
		{name: "no registration path", a: &authSurface{noRegistration: true}, want: []string{catalogue.AuthRegistrationMissing}},
		{name: "no scope hint", a: &authSurface{noScope: true}, want: []string{catalogue.AuthChallengeIncomplete}},
		{name: "as metadata at openid path-inserted", a: &authSurface{asAt: 1},
			paths: []string{"/meta/prm.json", "/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant"}},
		{name: "as metadata at openid path-appended", a: &authSurface{asAt: 2},
			paths: []string{"/meta/prm.json", "/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant", "/tenant/.well-known/openid-configuration"}},
		{name: "issuer without a path, openid", a: &authSurface{issuerPath: strptr(""), asAt: 1},
			paths: []string{"/meta/prm.json", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{name: "as metadata unreachable", a: &authSurface{asAt: -1}, want: []string{catalogue.AuthASMetadataMissing}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := probeSurface(t, c.a, nil)
			if !rep.Success {
				t.Fatalf("run failed: %s", rep.FailureMessage)
			}
			got := surfaceRules(rep)
			slices.Sort(got)
			slices.Sort(c.want)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			if c.paths != nil && strings.Join(c.a.paths(), " ") != strings.Join(c.paths, " ") {
				t.Errorf("fetched %v, want %v", c.a.paths(), c.paths)
			}
			if n := c.a.auth.Load(); n != 0 {
				t.Errorf("%d metadata fetches carried a credential", n)
			}
			js := reportJSON(rep)
			mustNotContain(t, "the report", js, surfaceMarker)
			mustNotContain(t, "the report", js, token)
			for _, f := range rep.Findings {
				if f.Rule != catalogue.AuthEnforced && catalogue.FamilyOf(f.Rule) == catalogue.FamilyAuth && f.Severity != catalogue.Info {
					t.Errorf("%s on a loopback target is %s, want INFO", f.Rule, f.Severity)
				}
			}
		})
	}
}

// A resource_metadata on another origin is not fetched, and neither is an
// authorization server on another origin when the resource did not match;
// one whose resource matched is.
func TestAuthSurfaceOtherOrigins(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer other.Close()

	rep := probeSurface(t, &authSurface{challengeURL: other.URL + "/prm"}, nil)
	if !has(rep, catalogue.AuthSurfaceNotFetched) || hits.Load() != 0 {
		t.Errorf("a cross-origin resource_metadata: findings %v, %d requests to the other origin", surfaceRules(rep), hits.Load())
	}

	rep = probeSurface(t, &authSurface{resource: other.URL + "/mcp", foreignAS: other.URL + "/as"}, nil)
	if !has(rep, catalogue.AuthResourceMismatch) || hits.Load() != 0 {
		t.Errorf("an authorization server behind a mismatched resource: findings %v, %d requests to it", surfaceRules(rep), hits.Load())
	}

	rep = probeSurface(t, &authSurface{foreignAS: other.URL + "/as"}, nil)
	if !has(rep, catalogue.AuthASMetadataMissing) || hits.Load() != 3 {
		t.Errorf("a listed authorization server: findings %v, %d requests to it, want its 3 discovery paths", surfaceRules(rep), hits.Load())
	}
}

// A metadata URL that redirects, even to a document on another origin, is
// not followed.
func TestAuthSurfaceRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		writeJSON(w, `{"resource":"x","authorization_servers":["https://as.example"]}`)
	}))
	defer other.Close()
	a := &authSurface{prmAt: "none"}
	redirect := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/") {
				http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
				return
			}
			a.wrap(next).ServeHTTP(w, r)
		})
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a")})
	defer srv.Close()
	front := httptest.NewServer(redirect(srv.Handler))
	defer front.Close()
	rep := probeOnce(t, srv, declare(t, "a"), all(withBearer(t, token), func(tg *config.Target) { tg.URL = front.URL + mcptest.EndpointPath }))
	f := find(rep, catalogue.AuthPRMMissing)
	if f == nil || !strings.Contains(f.Message, "HTTP 302, redirect not followed") || hits.Load() != 0 {
		t.Errorf("finding %+v, %d requests to the redirect's target", f, hits.Load())
	}
}

// Outside local classification the surface's findings are graded up and
// plain http:// authorization endpoints are reported.
func TestAuthSurfaceGradedByClassification(t *testing.T) {
	rep := probeSurface(t, &authSurface{issuer: "https://evil.example/"}, func(tg *config.Target) { tg.Environment = "production" })
	if f := find(rep, catalogue.AuthIssuerMismatch); f == nil || f.Severity != catalogue.Error || f.Classification != "production" {
		t.Errorf("issuer mismatch in production: %+v", f)
	}
	rep = probeSurface(t, &authSurface{noIss: true}, func(tg *config.Target) { tg.Environment = "staging" })
	if f := find(rep, catalogue.AuthIssParameterMissing); f == nil || f.Severity != catalogue.Warn {
		t.Errorf("iss parameter in staging: %+v", f)
	}
	f := find(rep, catalogue.AuthPlaintextEndpoint)
	if f == nil || !strings.Contains(f.Message, "authorization_endpoint, issuer, registration_endpoint, token_endpoint") {
		t.Errorf("plain http endpoints in staging: %+v", f)
	}
}

// A server that refuses every request without credentials, probed with
// none (driftd check), still gets its surface checked.
func TestAuthSurfaceWithoutCredentials(t *testing.T) {
	a := &authSurface{noS256: true}
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a")})
	defer srv.Close()
	front := httptest.NewServer(a.wrap(srv.Handler))
	defer front.Close()
	rep := probeOnce(t, srv, declare(t, "a"), func(tg *config.Target) { tg.URL = front.URL + mcptest.EndpointPath })
	if rep.Success || !has(rep, catalogue.AuthPKCES256Missing) {
		t.Errorf("success %v, findings %v", rep.Success, surfaceRules(rep))
	}
}

// A metadata document larger than max_response_bytes is not read past it.
func TestAuthSurfaceBounded(t *testing.T) {
	big := `{"resource":"x","pad":"` + strings.Repeat("a", 64<<10) + `"}`
	rep := probeSurface(t, &authSurface{prm: big}, func(tg *config.Target) { tg.MaxResponseBytes = config.NewByteSize(16 << 10) })
	f := find(rep, catalogue.AuthPRMMissing)
	if f == nil || !strings.Contains(f.Message, "response_too_large") {
		t.Errorf("an oversized document: %+v", f)
	}
}

// Metadata that never answers takes at most half of what is left of the
// run's deadline: the run that listed its tools still succeeds, and says
// the surface went unchecked.
func TestAuthSurfaceHangs(t *testing.T) {
	rep := probeSurface(t, &authSurface{hang: true}, func(tg *config.Target) { tg.Timeout = 2 * time.Second })
	if !rep.Success {
		t.Fatalf("run failed: %s %s", rep.FailureReason, rep.FailureMessage)
	}
	if !has(rep, catalogue.AuthSurfaceNotFetched) || has(rep, catalogue.AuthPRMMissing) {
		t.Errorf("findings %v", surfaceRules(rep))
	}
}

// The report says where each document was found, in redacted form.
func TestAuthSurfaceReported(t *testing.T) {
	rep := probeSurface(t, &authSurface{prmAt: "root", asAt: 2}, nil)
	s := rep.AuthPosture.Surface
	if s == nil {
		t.Fatal("no auth_posture.surface")
	}
	origin := strings.TrimSuffix(rep.BaseURL, mcptest.EndpointPath)
	want := probe.AuthSurface{ProtectedResourceMetadata: origin + "/.well-known/oauth-protected-resource",
		AuthorizationServers: []probe.AuthServerSurface{{Issuer: origin + "/tenant", Metadata: origin + "/tenant/.well-known/openid-configuration"}},
		Fetches:              5}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("surface %+v, want %+v", *s, want)
	}
	if rep := probeSurface(t, &authSurface{}, func(tg *config.Target) { tg.URL += "?api_key=" + token }); rep.AuthPosture.Surface == nil ||
		strings.Contains(reportJSON(rep), token) {
		t.Errorf("a URL with a key in its query: %+v", rep.AuthPosture.Surface)
	}
}
