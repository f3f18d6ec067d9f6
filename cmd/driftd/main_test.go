package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

const marker = "MARKER-cli-5ecr3t"

func mockTools(names ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = json.RawMessage(`{"name":"` + n + `","inputSchema":{"type":"object"}}`)
	}
	return out
}

func writeManifest(t *testing.T, names ...string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"tools": mockTools(names...)})
	path := filepath.Join(t.TempDir(), "declared.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckExitCodes(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer srv.Close()
	authed := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), BearerToken: marker})
	defer authed.Close()
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\n  \"tools\": [,]\n}"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		{"clean", []string{"check", writeManifest(t, "a", "b"), "--base-url", srv.URL}, exitOK, "0 ERROR, 0 WARN, 1 INFO"},
		{"missing tool", []string{"check", writeManifest(t, "a", "b", "c"), "--base-url", srv.URL}, exitFindings, "MCP-DRIFT-TOOL-MISSING c:"},
		{"undeclared below fail-on", []string{"check", writeManifest(t, "a"), "--base-url", srv.URL}, exitOK, "MCP-DRIFT-TOOL-UNDECLARED b:"},
		{"undeclared at fail-on WARN", []string{"check", writeManifest(t, "a"), "--base-url", srv.URL, "--fail-on", "warn"}, exitFindings, "WARN (1)"},
		{"auth required, no credentials", []string{"check", writeManifest(t, "a", "zzz"), "--base-url", authed.URL}, exitNoProbe, "(reason: auth_required) — nothing was compared"},
		{"unreachable", []string{"check", writeManifest(t, "a"), "--base-url", "http://127.0.0.1:1/mcp", "--timeout", "2s"}, exitNoProbe, "(reason: connect) — nothing was compared"},
		{"bad manifest", []string{"check", bad, "--base-url", srv.URL}, exitUsage, "manifest: " + bad + ":2:13: not valid JSON: expected a value, found ','"},
		{"missing manifest", []string{"check", "/nonexistent.json", "--base-url", srv.URL}, exitUsage, "no such file"},
		{"bad fail-on", []string{"check", writeManifest(t, "a"), "--base-url", srv.URL, "--fail-on", "LOUD"}, exitUsage, "--fail-on"},
		{"bad url", []string{"check", writeManifest(t, "a"), "--base-url", "ftp://x/mcp"}, exitUsage, "http:// or https://"},
		{"bad header", []string{"check", writeManifest(t, "a"), "--base-url", srv.URL, "--header", "novalue"}, exitUsage, "NAME=VALUE"},
		{"unknown flag", []string{"check", "--nope"}, exitUsage, "unknown long flag"},
		{"no subcommand", nil, exitUsage, "command not specified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := driftd(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Fatalf("exit %d (want %d); want %q in output\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, stdout, stderr)
			}
			if strings.Contains(stdout, "zzz") {
				t.Fatal("a run that could not list tools reported a declared tool")
			}
		})
	}
}

// TestSecretsNeverPrinted runs check and capture with a marker secret in
// every credential flag and searches all output for it.
func TestSecretsNeverPrinted(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), BearerToken: marker, Challenge: `Bearer scope="x"`})
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(marker+"\n"), 0o600)
	headerFile := filepath.Join(t.TempDir(), "hdr")
	os.WriteFile(headerFile, []byte(marker), 0o600)
	m := writeManifest(t, "a")
	for _, args := range [][]string{
		{"check", m, "--base-url", srv.URL, "--bearer-token-file", tokenFile},
		{"check", m, "--base-url", srv.URL, "--bearer-token-file", tokenFile, "--json"},
		{"check", m, "--base-url", srv.URL, "--header", "Authorization=Bearer " + marker, "--json", "--environment", "production"},
		{"check", m, "--base-url", srv.URL, "--header", "X-Key=" + marker, "--header-file", "X-Other=" + headerFile, "--json"},
		{"check", m, "--base-url", srv.URL, "--header", "bad" + marker},
		{"capture", "--base-url", srv.URL, "--bearer-token-file", tokenFile},
	} {
		code, stdout, stderr := driftd(t, args...)
		if code == exitUsage && !strings.Contains(stderr, "NAME=VALUE") {
			t.Errorf("%v: exit 2: %s", args[:2], stderr)
		}
		if strings.Contains(stdout, marker) || strings.Contains(stderr, marker) {
			t.Fatalf("%v printed the secret:\nstdout:\n%s\nstderr:\n%s", args, stdout, stderr)
		}
	}
}

// TestBadHeaderIsUsage: a --header net/http would refuse is a usage error
// naming the flag, before anything is sent, never a failure blamed on the
// server; and the message quotes no secret.
func TestBadHeaderIsUsage(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	m := writeManifest(t, "a")
	for _, tc := range []struct{ flag, value, want string }{
		{"--header", "X-Key=a\nb" + marker, "--header X-Key: the header value contains CR, LF or NUL"},
		{"--header", "X-Key=" + marker + "\r", "--header X-Key: the header value contains CR, LF or NUL"},
		{"--header", "X-Key=a\x00" + marker, "--header X-Key: the header value contains CR, LF or NUL"},
		{"--header", "Authorization=Bearer " + marker + "\r\nX-Evil: 1", "--header Authorization: the header value"},
		{"--header", "X Key=" + marker, "--header: the header name is not a valid token"},
		{"--header", "Authorization: Bearer " + marker + "==", "--header: the header name is not a valid token"},
		{"--header", "X-Ké=" + marker, "--header: the header name is not a valid token"},
		{"--header-file", "X:Key=/dev/null", "--header-file: the header name is not a valid token"},
	} {
		code, stdout, stderr := driftd(t, "check", m, "--base-url", srv.URL, tc.flag, tc.value)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s %q: exit %d (want %d), want %q in\n%s%s", tc.flag, tc.value, code, exitUsage, tc.want, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, marker) {
			t.Errorf("%s %q printed the secret:\n%s%s", tc.flag, tc.value, stdout, stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// TestURLQuerySecretNeverPrinted: a credential in --base-url's query is in
// no output of check, text or --json, whether the run succeeds or fails;
// the report keeps the key name.
func TestURLQuerySecretNeverPrinted(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	redirect := mcptest.NewServer(mcptest.Options{Fault: mcptest.FaultRedirect})
	defer redirect.Close()
	hangUp := mcptest.NewServer(mcptest.Options{Fault: mcptest.FaultHangUp})
	defer hangUp.Close()
	m := writeManifest(t, "a")
	q := "?api_key=" + marker + "&region=eu"
	for _, url := range []string{srv.URL + q, redirect.URL + q, hangUp.URL + q, "http://127.0.0.1:1/mcp" + q} {
		for _, format := range [][]string{nil, {"--json"}} {
			code, stdout, stderr := driftd(t, append([]string{"check", m, "--base-url", url, "--timeout", "5s"}, format...)...)
			if strings.Contains(stdout+stderr, marker) {
				t.Errorf("%s %v: exit %d printed the secret:\n%s%s", url, format, code, stdout, stderr)
			}
			if format != nil && !strings.Contains(stdout, `"base_url": "`+strings.TrimSuffix(url, q)+`?api_key=<redacted>&region=<redacted>"`) {
				t.Errorf("%s: base_url not redacted with its keys kept:\n%s", url, stdout)
			}
		}
	}
}

func TestCheckEnforcedAuthFindings(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), BearerToken: marker})
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(marker), 0o600)
	code, stdout, _ := driftd(t, "check", writeManifest(t, "a"), "--base-url", srv.URL, "--bearer-token-file", tokenFile, "--json")
	var rep struct {
		Findings []catalogue.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule)
	}
	// The mock serves no protected resource metadata: the authorization
	// surface check reports it (INFO on a loopback target).
	if strings.Join(rules, ",") != "MCP-AUTH-NO-CHALLENGE,MCP-AUTH-ENFORCED,MCP-AUTH-PRM-MISSING" {
		t.Fatalf("rules = %v", rules)
	}
}

// TestHelpRunsNothing: --help prints usage and exits 0 without running the
// subcommand (demo would otherwise start listening).
func TestHelpRunsNothing(t *testing.T) {
	for _, args := range [][]string{{"demo", "--help"}, {"run", "--help"}, {"check", "--help"}, {"--help"}} {
		code, stdout, stderr := driftd(t, args...)
		if code != exitOK || !strings.Contains(stdout+stderr, "usage: driftd") || strings.Contains(stdout, "mock MCP server with drift:") {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
}

func TestRulesAndVersion(t *testing.T) {
	code, stdout, _ := driftd(t, "rules", "--json")
	var cat catalogue.Document
	if code != 0 || json.Unmarshal([]byte(stdout), &cat) != nil || len(cat.Rules) != len(catalogue.Rules) ||
		len(cat.Grades) != len(catalogue.Grades) || len(cat.Changes) != len(catalogue.Changes) {
		t.Fatalf("rules --json: exit %d, %d rules", code, len(cat.Rules))
	}
	code, stdout, _ = driftd(t, "rules")
	if code != 0 || !strings.Contains(stdout, "MCP-DRIFT-TOOL-MISSING") || !strings.Contains(stdout, "BRK-INPUT-REQUIRED-ADDED") || !strings.Contains(stdout, "CHG-ENUM-ADDED") {
		t.Fatalf("rules: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = driftd(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "driftd, version ") {
		t.Fatalf("version: exit %d %q", code, stdout)
	}
}

func TestCaptureWritesCanonicalManifest(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("zeta", "alpha", "alpha"), PageSize: 2})
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "out.json")
	code, _, stderr := driftd(t, "capture", "--base-url", srv.URL, "-o", path)
	if code != 0 || !strings.Contains(stderr, `tool "alpha" served more than once`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(path)
	if strings.Index(string(b), "alpha") > strings.Index(string(b), "zeta") || strings.Count(string(b), `"alpha"`) != 1 {
		t.Fatalf("manifest not sorted or not deduplicated:\n%s", b)
	}
	code, _, stderr = driftd(t, "capture", "--base-url", srv.URL, "--max-list-pages", "1")
	if code != exitNoProbe || !strings.Contains(stderr, "page cap") {
		t.Fatalf("capped capture: exit %d: %s", code, stderr)
	}
}

// TestSchemelessBaseURL: Go parses localhost:8080/mcp as scheme
// "localhost"; the user hears about the scheme once, and about nothing the
// misparse would imply (no host, so no default name).
func TestSchemelessBaseURL(t *testing.T) {
	for _, cmd := range []string{"check", "capture"} {
		args := []string{cmd, "--base-url", "localhost:8080/mcp"}
		if cmd == "check" {
			args = append(args, writeManifest(t, "a"))
		}
		code, stdout, stderr := driftd(t, args...)
		want := "driftd " + cmd + `: --base-url: "localhost:8080/mcp" has no scheme; write http://localhost:8080/mcp or https://localhost:8080/mcp` + "\n"
		if code != exitUsage || stdout != "" || stderr != want {
			t.Errorf("%s: exit %d\nstderr:\n%s\nwant:\n%s", cmd, code, stderr, want)
		}
	}
}

// TestManifestSyntaxErrors: check, diff and config check all say where a
// manifest stops being JSON or YAML, and what was expected there.
func TestManifestSyntaxErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"good.json": `{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}`,
		"bad.json":  "{\n  \"tools\": [\n    {\"name\": hello}\n  ]\n}\n",
		"bad.yaml":  "tools:\n  - name: a\n    inputSchema: {type: object\n  - name: b\n",
		"driftd.yml": "targets:\n  - name: one\n    url: https://one.example/mcp\n    manifest: bad.json\n" +
			"  - name: two\n    url: https://two.example/mcp\n    manifest: bad.yaml\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	badJSON, badYAML, good := filepath.Join(dir, "bad.json"), filepath.Join(dir, "bad.yaml"), filepath.Join(dir, "good.json")
	jsonErr := badJSON + `:3:14: not valid JSON: expected a value, found hello: a string needs "double quotes"`
	yamlErr := badYAML + ":3: not valid YAML: did not find expected ',' or '}'"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", badJSON, "--base-url", "http://127.0.0.1:1/mcp"}, "driftd check: manifest: " + jsonErr + "\n"},
		{[]string{"check", badYAML, "--base-url", "http://127.0.0.1:1/mcp"}, "driftd check: manifest: " + yamlErr + "\n"},
		{[]string{"diff", badJSON, good}, "driftd diff: old manifest: " + jsonErr + "\n"},
		{[]string{"diff", badJSON, badYAML}, "driftd diff:\nold manifest: " + jsonErr + "\nnew manifest: " + yamlErr + "\n"},
		{[]string{"config", "check", filepath.Join(dir, "driftd.yml")}, filepath.Join(dir, "driftd.yml") + ":4: targets[0].manifest: " + jsonErr + "\n" +
			filepath.Join(dir, "driftd.yml") + ":7: targets[1].manifest: " + yamlErr + "\n"},
	} {
		code, stdout, stderr := driftd(t, tc.args...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("driftd %v: exit %d\nstderr:\n%s\nwant:\n%s", tc.args, code, stderr, tc.want)
		}
	}
}

// TestNameOf: the default target name of a host is what the pattern
// [^a-z0-9_.-]+ → "-" on the lowercased host, trimmed of '-', '.' and '_',
// makes of it.
func TestNameOf(t *testing.T) {
	pattern := regexp.MustCompile(`[^a-z0-9_.-]+`)
	for _, host := range []string{"", "127.0.0.1", "::1", "MCP.Example.COM", "bücher.example", "İstanbul.example", "a b\tc", "..a..", "_a_", "-a-", "a\xffb", "ß", "x y z"} {
		want := strings.Trim(pattern.ReplaceAllString(strings.ToLower(host), "-"), "-._")
		if got := nameOf(host); got != want {
			t.Errorf("nameOf(%q) = %q, want %q", host, got, want)
		}
	}
}
