package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/oauth/oauthtest"
)

// TestDaemonOneTokenPerCredential: 50 targets on one MCP server behind
// one authorization server, each running every second, share one token:
// one token request per credential per token lifetime, not one per run
// (issue 37). The secret and the token reach no page, metric, log line or
// state file.
func TestDaemonOneTokenPerCredential(t *testing.T) {
	const secret = "MARKER-oauth-client-secret"
	as := oauthtest.New(t, oauthtest.Options{ClientID: "driftd", Secret: secret, Scopes: []string{"tools.read"}})
	var rs *httptest.Server
	rs = httptest.NewServer(as.Protect(func() string { return rs.URL }, mcptest.NewHandler(mcptest.Options{Tools: mockTools("a")})))
	defer rs.Close()
	e := newEnv(t)
	e.manifest("m.json", "a")
	if err := os.WriteFile(filepath.Join(e.dir, "secret"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	cfg.WriteString("global:\n  schedule: \"@every 1s\"\n  timeout: 5s\n  state_dir: state\ntargets:\n")
	const n = 50
	for i := range n {
		fmt.Fprintf(&cfg, "  - name: t%d\n    url: %s/mcp/t%d\n    manifest: m.json\n    oauth:\n      client_id: driftd\n      client_secret_file: secret\n", i, rs.URL, i)
	}
	e.config(cfg.String())
	d, base := e.start(false)
	for i := range n {
		waitMetricAtLeast(t, base, fmt.Sprintf(`driftd_probes_total{result="success",target="t%d"}`, i), 3)
	}
	reqs := as.Requests()
	if len(reqs) != 1 || reqs[0].Scope != "tools.read" || reqs[0].Resource != rs.URL {
		t.Fatalf("%d token requests for %d targets' runs, want 1: %+v", len(reqs), n, reqs)
	}
	_, body := get(t, base+"/metrics")
	total := 0.0
	for i := range n {
		v, ok := metric(body, fmt.Sprintf(`driftd_oauth_token_requests_total{outcome="success",target="t%d"}`, i))
		if !ok {
			t.Fatalf("t%d has no driftd_oauth_token_requests_total", i)
		}
		total += v
		if _, ok := metric(body, fmt.Sprintf(`driftd_oauth_token_expiry_timestamp_seconds{target="t%d"}`, i)); !ok {
			t.Errorf("t%d has no driftd_oauth_token_expiry_timestamp_seconds", i)
		}
		if v, ok := metric(body, fmt.Sprintf(`driftd_oauth_token_requests_total{outcome="invalid_client",target="t%d"}`, i)); !ok || v != 0 {
			t.Errorf("t%d: the invalid_client outcome is not a 0 counter: %v %v", i, v, ok)
		}
	}
	if total != 1 {
		t.Errorf("driftd_oauth_token_requests_total{outcome=\"success\"} sums to %v over the targets, want 1", total)
	}
	_, api := get(t, base+"/api/v1/targets/t7")
	var rep struct {
		AuthPosture struct {
			AnonymousList string `json:"anonymous_list"`
			OAuth         *struct {
				Scheme         string
				ClientAuth     string `json:"client_auth"`
				Grant          string
				TokenRequests  []string `json:"token_requests"`
				TokenExpiresAt string   `json:"token_expires_at"`
			} `json:"oauth"`
		} `json:"auth_posture"`
	}
	if err := json.Unmarshal(apiData(api), &rep); err != nil {
		t.Fatal(err)
	}
	if o := rep.AuthPosture.OAuth; o == nil || o.Scheme != "Bearer" || o.ClientAuth != "client_secret_basic" || o.Grant != "client_credentials" || o.TokenExpiresAt == "" {
		t.Errorf("the report does not say how the token was presented: %+v", o)
	}
	if rep.AuthPosture.AnonymousList != "refused" {
		t.Errorf("the anonymous probe: %q, want refused", rep.AuthPosture.AnonymousList)
	}
	tokens := as.Tokens()
	if len(tokens) != 1 {
		t.Fatalf("tokens %v", tokens)
	}
	paths := []string{"/", "/targets/t7", "/api/v1/targets", "/api/v1/targets/t7", "/api/v1/targets/t7/history", "/metrics"}
	for _, path := range paths {
		if _, out := get(t, base+path); strings.Contains(out, tokens[0]) {
			t.Errorf("GET %s shows the access token", path)
		}
	}
	e.nowhere(d, base, paths, secret, "the client secret")
	if strings.Contains(e.log.String(), tokens[0]) {
		t.Error("a log line shows the access token")
	}
	files, _ := filepath.Glob(filepath.Join(e.dir, "state", "*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), tokens[0]) {
			t.Errorf("state file %s contains the access token", f)
		}
	}
}
