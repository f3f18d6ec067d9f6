package faults_test

import (
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// oauthIdentity is a machine identity of the OAuth rows: its files hold
// the markers.
type oauthIdentity struct {
	// method forces the token endpoint authentication ("" picks).
	method string
	// key authenticates with the private key (private_key_jwt) instead
	// of the client secret.
	key bool
	// short uses the short client secret, whose Basic credential fits
	// in what passes for an OAuth error code.
	short bool
	// exchange gets the JWT-bearer grant's assertion from the peers'
	// identity provider (enterprise-managed authorization, RFC 8693)
	// instead of the assertion file.
	exchange bool
}

var (
	idSecret     = oauthIdentity{}                                     // client_secret_basic + JWT-bearer assertion
	idSecretPost = oauthIdentity{method: "client_secret_post"}         // the secret in the form
	idKey        = oauthIdentity{key: true}                            // private_key_jwt + JWT-bearer assertion
	idKeyOnly    = oauthIdentity{key: true, method: "private_key_jwt"} // same, forced
	idShort      = oauthIdentity{short: true}                          // a short client secret, Basic
	idExchange   = oauthIdentity{exchange: true}                       // client_secret_basic + an ID-JAG from the identity provider
)

// oauthFiles are an identity's secret files, written once per test.
type oauthFiles struct{ secret, short, key, assertion, idpSecret, subject string }

func writeOAuthFiles(t *testing.T, dir string) oauthFiles {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	// The marker rides in a PEM header, which the key's parser skips.
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Comment": oauthKeyNote}, Bytes: der})
	return oauthFiles{
		secret:    writeFile(t, dir, "client-secret", []byte(oauthSecret+"\n")),
		short:     writeFile(t, dir, "client-secret-short", []byte(oauthShortSecret+"\n")),
		key:       writeFile(t, dir, "client-key.pem", keyPEM),
		assertion: writeFile(t, dir, "assertion.jwt", []byte(oauthAssertion+"\n")),
		idpSecret: writeFile(t, dir, "idp-secret", []byte(oauthIdPSecret+"\n")),
		subject:   writeFile(t, dir, "id-token.jwt", []byte(oauthSubject+"\n")),
	}
}

// flags are the identity as `driftd check` flags, its identity provider
// p's.
func (id oauthIdentity) flags(f oauthFiles, p *oauthPeers) []string {
	out := []string{"--oauth.client-id", oauthClient}
	if id.exchange {
		out = append(out, "--oauth.token-exchange.token-url", p.as.URL+"/idp/token", "--oauth.token-exchange.client-id", "faults-idp-client",
			"--oauth.token-exchange.client-secret-file", f.idpSecret, "--oauth.token-exchange.subject-token-file", f.subject)
	} else {
		out = append(out, "--oauth.assertion-file", f.assertion)
	}
	if id.key {
		out = append(out, "--oauth.private-key-file", f.key)
	} else {
		out = append(out, "--oauth.client-secret-file", id.secretFile(f))
	}
	if id.method != "" {
		out = append(out, "--oauth.auth-method", id.method)
	}
	return out
}

func (id oauthIdentity) secretFile(f oauthFiles) string {
	if id.short {
		return f.short
	}
	return f.secret
}

// yaml is the identity as a target's oauth block (indented for a
// target), its identity provider p's.
func (id oauthIdentity) yaml(f oauthFiles, p *oauthPeers) string {
	s := fmt.Sprintf("    oauth:\n      client_id: %s\n", oauthClient)
	if id.exchange {
		s += fmt.Sprintf("      token_exchange:\n        token_url: %q\n        client_id: faults-idp-client\n        client_secret_file: %q\n        subject_token_file: %q\n",
			p.as.URL+"/idp/token", f.idpSecret, f.subject)
	} else {
		s += fmt.Sprintf("      assertion_file: %q\n", f.assertion)
	}
	if id.key {
		s += fmt.Sprintf("      private_key_file: %q\n", f.key)
	} else {
		s += fmt.Sprintf("      client_secret_file: %q\n", id.secretFile(f))
	}
	if id.method != "" {
		s += "      token_endpoint_auth_method: " + id.method + "\n"
	}
	return s
}

// forbidden is what no artifact may carry: the markers (the secret,
// assertion and key files' and every issued token's prefix), every
// base64 line of the key, the Basic credential as sent, and every client
// assertion and DPoP proof the peers received.
func (f oauthFiles) forbidden(t *testing.T, peers ...*oauthPeers) []string {
	out := []string{oauthMark}
	for _, s := range []string{oauthSecret, oauthShortSecret} {
		out = append(out, base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(oauthClient)+":"+url.QueryEscape(s))))
	}
	b, err := os.ReadFile(f.key)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if len(line) >= 16 && !strings.Contains(line, ":") && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	for _, p := range peers {
		out = append(out, p.received()...)
	}
	return out
}

// sweep fails when body carries any of the forbidden strings.
func sweep(t *testing.T, what, body string, forbidden []string) {
	t.Helper()
	for _, s := range forbidden {
		if i := strings.Index(body, s); i >= 0 {
			t.Errorf("a secret is in %s: …%q…", what, body[max(0, i-120):min(len(body), i+len(s)+40)])
			return
		}
	}
}

// oauthRow is a hostile peer and what driftd must make of it.
type oauthRow struct {
	name  string
	id    oauthIdentity
	peers func() *oauthPeers
	// codes are the exit codes accepted; reason the failure_reason ("" a
	// successful run).
	codes  []int
	reason string
	// after checks what the peers saw once the run is over.
	after func(t *testing.T, p *oauthPeers)
	// formats runs the row in every output format (the rows whose peers
	// echo secrets); the others run --json only.
	formats bool
	// redacts: the echo reaches the JSON report, which must show it
	// redacted.
	redacts bool
}

// oauthRows are the OAuth rows: hostile MCP servers, authorization
// servers and metadata, each with what driftd must make of it.
func oauthRows() []oauthRow {
	ok := []int{exitOK, exitFindings}
	noProbe := []int{exitNoProbe}
	tokenAsked := func(t *testing.T, p *oauthPeers) {
		if p.tokenRequests.Load() == 0 {
			t.Error("no token request reached the authorization server: the row tested nothing")
		}
	}
	nothingElsewhere := func(t *testing.T, p *oauthPeers) {
		if n := p.otherHits.Load(); n != 0 {
			t.Errorf("the other host received %d requests", n)
		}
	}
	return []oauthRow{
		// The MCP server echoes what it was presented.
		{name: "MCP echoes Authorization and DPoP in the listing", redacts: true, id: idSecret, formats: true, codes: ok, after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{dpop: true, mcp: echoListing} }},
		{name: "MCP echoes the key's token in the listing", redacts: true, id: idKey, formats: true, codes: ok, after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{mcp: echoListing} }},
		{name: "MCP echoes Authorization and DPoP in a JSON-RPC error", id: idSecret, formats: true, codes: noProbe, reason: "jsonrpc_error", after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{dpop: true, mcp: echoRPCError} }},
		{name: "MCP echoes Authorization and DPoP in a 401 and its challenges", redacts: true, id: idSecret, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{dpop: true, mcp: echoRefusal} }},
		{name: "MCP asks for the token as a scope in a 403", redacts: true, id: idKeyOnly, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{mcp: echoForbidden} }},
		{name: "metadata documents echo the request headers", redacts: true, id: idSecret, formats: true, codes: ok, after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{mcp: echoListing,
					prm: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
						h := headerDump(r)
						p.servePRM(w, r, map[string]any{"resource_name": h, "resource_documentation": "http://x/" + url.PathEscape(h), "scopes_supported": []string{url.QueryEscape(h)}})
					},
					asMeta: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
						h := headerDump(r)
						p.serveASMeta(w, r, map[string]any{"service_documentation": h, "op_policy_uri": "http://x/" + url.PathEscape(h)})
					}}
			}},

		// The authorization server echoes what it was sent.
		{name: "token endpoint echoes the client secret as error and description", redacts: true, id: idSecret, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: oauthRefuse(http.StatusUnauthorized, func(r *http.Request) map[string]string {
					_, s, _ := r.BasicAuth()
					return map[string]string{"error": s, "error_description": formSecrets(r), "error_uri": "http://x/" + s}
				})}
			}},
		{name: "token endpoint echoes the posted secret", redacts: true, id: idSecretPost, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("client_secret"), "error_description": formSecrets(r)}
				})}
			}},
		{name: "token endpoint echoes the Basic credential as the error", redacts: true, id: idShort, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: oauthRefuse(http.StatusUnauthorized, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.Header.Get("Authorization")}
				})}
			}},
		{name: "token endpoint echoes the assertion", redacts: true, id: idSecret, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("assertion"), "error_description": formSecrets(r)}
				})}
			}},
		{name: "token endpoint echoes the client assertion", id: idKey, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{dpop: true, token: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("client_assertion"), "error_description": formSecrets(r)}
				})}
			}},
		{name: "token endpoint echoes in a form-encoded error", redacts: true, id: idSecret, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: oauthRefuseForm(func(r *http.Request) string {
					_, s, _ := r.BasicAuth()
					return url.Values{"error": {s}, "error_description": {formSecrets(r)}}.Encode()
				})}
			}},
		{name: "token endpoint puts the access token in other fields", redacts: true, id: idSecret, formats: true, codes: ok, after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{mcp: echoListing, token: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any {
						return map[string]any{"scope": tok, "refresh_token": tok, "id_token": tok, "issued_token_type": tok, "error_description": tok, "error_uri": tok}
					})
				}}
			}},
		{name: "token endpoint puts the access token in expires_in", id: idSecret, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any { return map[string]any{"expires_in": tok} })
				}}
			}},

		// Enterprise-managed authorization: the identity provider, and the
		// authorization server given its ID-JAG.
		{name: "MCP echoes what an enterprise identity presents", id: idExchange, redacts: true, formats: true, codes: ok, after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{dpop: true, mcp: echoListing} }},
		{name: "identity provider echoes the subject token and its client secret", id: idExchange, redacts: true, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{idp: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("subject_token"), "error_description": formSecrets(r), "error_uri": "http://x/" + r.PostFormValue("client_secret")}
				})}
			}},
		{name: "identity provider puts the ID-JAG in expires_in", id: idExchange, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{idp: func(p *oauthPeers, w http.ResponseWriter, _ *http.Request) {
					p.issueIDJAG(w, func(jag string) map[string]any { return map[string]any{"expires_in": jag} })
				}}
			}},
		{name: "token endpoint echoes the ID-JAG", id: idExchange, redacts: true, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{token: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("assertion"), "error_description": formSecrets(r)}
				})}
			}},
		{name: "identity provider hangs", id: idExchange, codes: noProbe, reason: "timeout", after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{idp: hang} }},

		// Hostile authorization servers end as classified failures in time.
		{name: "token endpoint hangs", id: idSecret, codes: noProbe, reason: "timeout", after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{token: hang} }},
		{name: "token endpoint answers 10 MiB", id: idSecret, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers { return &oauthPeers{token: tenMiB} }},
		{name: "token endpoint redirects to another host", id: idSecret, codes: noProbe, reason: "auth_required",
			after: func(t *testing.T, p *oauthPeers) { tokenAsked(t, p); nothingElsewhere(t, p) },
			peers: func() *oauthPeers { return &oauthPeers{token: redirectOther} }},
		{name: "token endpoint answers a garbage token_type", id: idSecret, formats: true, codes: noProbe, reason: "auth_required", after: tokenAsked,
			peers: func() *oauthPeers {
				return &oauthPeers{mcp: echoListing, token: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any {
						return map[string]any{"token_type": "\x1b]8;;garbage\u202e " + tok + "\r\n"}
					})
				}}
			}},
		{name: "token endpoint answers an access token with CR LF", id: idSecret, codes: []int{exitNoProbe}, reason: "auth_required",
			after: func(t *testing.T, p *oauthPeers) {
				tokenAsked(t, p)
				if p.injected.Load() {
					t.Error("a header smuggled in the access token reached a server")
				}
			},
			peers: func() *oauthPeers {
				return &oauthPeers{token: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any { return map[string]any{"access_token": tok + "\r\nX-Injected: 1"} })
				}}
			}},
		{name: "authorization server metadata redirects to another host", id: idSecret, codes: noProbe, reason: "auth_required", after: nothingElsewhere,
			peers: func() *oauthPeers { return &oauthPeers{asMeta: redirectOther} }},
		{name: "protected resource metadata lists 1000 authorization servers", id: idSecret, codes: noProbe, reason: "auth_required",
			after: func(t *testing.T, p *oauthPeers) {
				// Only the first two listed servers are ever asked.
				p.mu.Lock()
				defer p.mu.Unlock()
				if len(p.otherPaths) == 0 {
					t.Error("no listed server was asked for its metadata: the row tested nothing")
				}
				for _, path := range p.otherPaths {
					if !strings.HasSuffix(path, "/as0") && !strings.HasSuffix(path, "/as1") && !strings.Contains(path, "/as0/") && !strings.Contains(path, "/as1/") {
						t.Errorf("a server past the first two was asked: %s", path)
						return
					}
				}
			},
			peers: func() *oauthPeers {
				return &oauthPeers{prm: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					servers := make([]string, 1000)
					for i := range servers {
						servers[i] = fmt.Sprintf("%s/as%d", p.other.URL, i)
					}
					p.servePRM(w, r, map[string]any{"authorization_servers": servers})
				}}
			}},
	}
}

// spanSink is an OTLP/HTTP receiver on loopback: it keeps every export
// decoded to bytes (gunzipped) and counts the spans.
type spanSink struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	spans  int
}

func newSpanSink(t *testing.T) *spanSink {
	s := &spanSink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, "bad gzip", http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(io.LimitReader(body, 64<<20))
		var req coltracepb.ExportTraceServiceRequest
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		n := 0
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, b)
		s.spans += n
		s.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(s.Close)
	return s
}

// all is every export received, the span count, and one text of them (the
// protobuf carries strings as their bytes).
func (s *spanSink) all() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, body := range s.bodies {
		b.Write(body)
	}
	return s.spans, b.String()
}

// TestCheckOAuth runs `driftd check` with an oauth identity whose files
// hold markers against every OAuth row — in every output format written
// with -o for the rows whose peers echo secrets, --json otherwise — and
// its spans to an OTLP/HTTP receiver; it asserts the exit code, the
// failure reason, the bounds of every check (deadline + 1 s, memory,
// output), and that no secret is in stdout, stderr, the report file or a
// span: the files' contents, the key's lines, the Basic credential, the
// client assertions and DPoP proofs sent, and every access token issued.
func TestCheckOAuth(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	files := writeOAuthFiles(t, dir)
	manifest := writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	sem := make(chan struct{}, parallelChecks)
	for _, row := range oauthRows() {
		formats := []string{"json"}
		if row.formats {
			formats = append(formats, "text", "sarif", "junit", "markdown")
		}
		for _, format := range formats {
			t.Run(row.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				p := row.peers().start(t)
				sink := newSpanSink(t)
				out := filepath.Join(t.TempDir(), "report."+format)
				args := append([]string{"check", manifest, "--base-url", p.endpoint(), "--target", "faults-oauth",
					"--timeout", probeTimeout.String(), "--format", format, "-o", out, "--otlp-endpoint", sink.URL}, row.id.flags(files, p)...)
				res := runDriftd(t, args...)
				written, err := os.ReadFile(out)
				if err != nil {
					t.Fatalf("no report written: %v\nstderr:\n%.2000s", err, res.stderr.String())
				}
				var rep report
				if format == "json" {
					if err := json.Unmarshal(written, &rep); err != nil {
						t.Errorf("the report is not JSON: %v\n%.2000s", err, written)
					}
				}
				nspans, spans := sink.all()
				t.Logf("exit %d, %v, peak RSS %d MiB, report %d B, stderr %d B, reason %q, %d token requests, %d spans: %.300s",
					res.code, res.wall.Round(10e6), res.maxRSSKiB>>10, len(written), res.stderr.Total(), rep.FailureReason, p.tokenRequests.Load(), nspans, rep.FailureMessage)
				if !slices.Contains(row.codes, res.code) {
					t.Errorf("exit %d, want one of %v (reason %q: %.400s)\nstderr:\n%.1000s", res.code, row.codes, rep.FailureReason, rep.FailureMessage, res.stderr.String())
				}
				if format == "json" && rep.FailureReason != row.reason {
					t.Errorf("failure_reason %q, want %q (%.400s)", rep.FailureReason, row.reason, rep.FailureMessage)
				}
				checkBounded(t, res, probeTimeout)
				if len(written) > maxReportBytes {
					t.Errorf("the report is %d bytes, bound %d", len(written), maxReportBytes)
				}
				if nspans == 0 {
					t.Error("no span reached the receiver: the sweep of spans tested nothing")
				}
				forbidden := files.forbidden(t, p)
				sweep(t, "stdout", res.stdout.String(), forbidden)
				sweep(t, "stderr", res.stderr.String(), forbidden)
				sweep(t, "the "+format+" report", string(written), forbidden)
				sweep(t, "the spans", spans, forbidden)
				if bad := unsafeText(string(written)); bad != "" {
					t.Errorf("the report carries a raw %s", bad)
				}
				if format == "json" && row.redacts && !strings.Contains(string(written), `\u003credacted\u003e`) && !strings.Contains(string(written), "<redacted>") {
					t.Error("the report shows no <redacted>: the echo did not reach it, and the sweep tested nothing")
				}
				if row.after != nil {
					row.after(t, p)
				}
			})
		}
	}
}

// TestDaemonOAuth runs `driftd run` with every OAuth row as a target at
// @every 1s, timeout 2s, its spans to an OTLP/HTTP receiver, until each
// target finished runs; then it asserts each last run's reason and
// duration, and sweeps every page and API answer, /metrics (labels
// included), the log, the state files and the spans for the secrets.
func TestDaemonOAuth(t *testing.T) {
	needBinary(t)
	if raceEnabled {
		t.Skip("the race detector slows the hostile servers too much for the daemon's bounds; make faults runs it")
	}
	dir := t.TempDir()
	files := writeOAuthFiles(t, dir)
	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	sink := newSpanSink(t)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state}\ntracing: {endpoint: %q, compression: none}\ntargets:\n", sink.URL)
	rows := oauthRows()
	var peers []*oauthPeers
	byName := map[string]oauthRow{}
	var names []string
	for i, row := range rows {
		p := row.peers().start(t)
		peers = append(peers, p)
		name := fmt.Sprintf("o%02d", i)
		names = append(names, name)
		byName[name] = row
		t.Logf("target %s: %s", name, row.name)
		fmt.Fprintf(&cfg, "  - name: %s\n    url: %q\n    manifest: declared.json\n%s", name, p.endpoint(), row.id.yaml(files, p))
	}
	config := writeFile(t, dir, "driftd.yml", []byte(cfg.String()))
	d := startDaemon(t, config, "--log.format=json", "--log.level=debug")

	// Every target has run at least twice: the second run presents a
	// cached token, or asks again.
	var targets []struct {
		Name    string `json:"name"`
		LastRun *struct {
			FailureReason   string  `json:"failure_reason"`
			DurationSeconds float64 `json:"duration_seconds"`
		} `json:"last_run"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		targets = nil
		r := get(d.base + "/api/v1/targets")
		done := 0
		if r.err == nil && json.Unmarshal(apiData(r.body), &targets) == nil {
			for _, tg := range targets {
				if tg.LastRun != nil {
					done++
				}
			}
		}
		if done == len(rows) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d targets finished a run after 30 s:\n%.4000s", done, len(rows), d.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := json.Unmarshal(apiData(get(d.base+"/api/v1/targets").body), &targets); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		row := byName[tg.Name]
		if tg.LastRun == nil {
			t.Errorf("%s (%s): no run", tg.Name, row.name)
			continue
		}
		if tg.LastRun.FailureReason != row.reason {
			t.Errorf("%s (%s): failure_reason %q, want %q", tg.Name, row.name, tg.LastRun.FailureReason, row.reason)
		}
		if tg.LastRun.DurationSeconds > 3 {
			t.Errorf("%s (%s): last run took %.2fs, more than the 2 s deadline plus one second", tg.Name, row.name, tg.LastRun.DurationSeconds)
		}
	}

	pages := []string{"/metrics", "/api/v1/targets", "/config", "/"}
	for _, n := range names {
		// The schema view shows tool "a"'s schema as served, which the
		// echoing servers fill with what they were presented.
		pages = append(pages, "/api/v1/targets/"+n, "/api/v1/targets/"+n+"/history", "/targets/"+n,
			"/targets/"+n+"/schema?tool=a&direction=input")
	}
	forbidden := files.forbidden(t, peers...)
	for _, pg := range pages {
		r := get(d.base + pg)
		if r.err != nil {
			t.Errorf("%s: %v", pg, r.err)
			continue
		}
		checkArtifact(t, pg, r.body, maxPageBytes)
		sweep(t, pg, r.body, forbidden)
	}
	if m := get(d.base + "/metrics").body; !strings.Contains(m, `driftd_oauth_token_requests_total{outcome="success"`) {
		t.Error("/metrics has no successful token request: the daemon's rows tested nothing")
	}

	d.stop(syscall.SIGTERM)
	forbidden = files.forbidden(t, peers...) // what came since
	checkArtifact(t, "the log", d.log.String(), int(d.log.Total())+1)
	sweep(t, "the log", d.log.String(), forbidden)
	nfiles := 0
	filepath.WalkDir(filepath.Join(dir, "state"), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		nfiles++
		rel, _ := filepath.Rel(dir, path)
		sweep(t, rel, string(b), forbidden)
		return nil
	})
	if nfiles == 0 {
		t.Error("no state written")
	}
	nspans, spans := sink.all()
	t.Logf("%d pages, %d state files, %d spans, log %d bytes swept", len(pages), nfiles, nspans, d.log.Total())
	if nspans == 0 {
		t.Error("no span reached the receiver: the sweep of spans tested nothing")
	}
	sweep(t, "the spans", spans, forbidden)
	for i, p := range peers {
		if row := rows[i]; row.after != nil {
			t.Run(names[i]+" "+row.name, func(t *testing.T) { row.after(t, p) })
		}
	}
}
