package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestCheckOutcomes: the text output of check ends with its outcome (the
// counts, or that nothing was compared), and stderr carries a next: hint
// fitting it; nothing is coloured off a terminal.
func TestCheckOutcomes(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer srv.Close()
	authed := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), BearerToken: marker})
	defer authed.Close()
	slow := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), Delay: 5 * time.Second})
	defer slow.Close()
	drifted := writeManifest(t, "a", "b", "c")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		last     string // stdout's last line starts with it
		hint     string // stderr, "" for none
		notInOut string
	}{
		{"clean", []string{writeManifest(t, "a", "b"), "--base-url", srv.URL}, exitOK, "0 ERROR, 0 WARN, 1 INFO", "", "next:"},
		{"below fail-on", []string{writeManifest(t, "a"), "--base-url", srv.URL}, exitOK, "0 ERROR, 1 WARN, 1 INFO", "", "next:"},
		{"drift", []string{drifted, "--base-url", srv.URL}, exitFindings, "1 ERROR, 0 WARN, 1 INFO",
			"next: driftd capture --base-url " + srv.URL + " -o " + drifted + " to accept the served tools, or --json for CI\n", ""},
		{"no drift at fail-on", []string{writeManifest(t, "a", "b"), "--base-url", srv.URL, "--fail-on", "INFO"}, exitFindings, "0 ERROR, 0 WARN, 1 INFO",
			"next: driftd rules explains each rule", ""},
		{"dead", []string{writeManifest(t, "a"), "--base-url", "http://127.0.0.1:1/mcp"}, exitNoProbe,
			"not probed: server/discover: dial tcp 127.0.0.1:1: connect: connection refused (reason: connect) — nothing was compared",
			"next: is the server running", "0 ERROR, 0 WARN, 0 INFO"},
		{"auth required", []string{writeManifest(t, "a"), "--base-url", authed.URL}, exitNoProbe,
			"not probed: server/discover: HTTP 401 (reason: auth_required) — nothing was compared", "next: the server wants credentials", "INFO, "},
		{"timeout", []string{writeManifest(t, "a"), "--base-url", slow.URL, "--timeout", "300ms"}, exitNoProbe,
			"not probed: ", "next: the server did not answer within --timeout", "0 ERROR, 0 WARN, 0 INFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := driftd(t, append([]string{"check"}, tc.args...)...)
			if code != tc.code || !strings.HasPrefix(lastLine(stdout), tc.last) {
				t.Fatalf("exit %d (want %d), last line %q, want it to start with %q\n%s", code, tc.code, lastLine(stdout), tc.last, stdout)
			}
			if tc.hint == "" && stderr != "" || !strings.HasPrefix(stderr, tc.hint) {
				t.Errorf("stderr %q, want it to start with %q", stderr, tc.hint)
			}
			if tc.notInOut != "" && strings.Contains(stdout, tc.notInOut) {
				t.Errorf("stdout has %q:\n%s", tc.notInOut, stdout)
			}
			if strings.Contains(stdout+stderr, "\x1b[") {
				t.Errorf("colour off a terminal:\n%q", stdout+stderr)
			}
			if code == exitNoProbe && strings.Count(stdout, "probe failed") != 0 {
				t.Errorf("the failure is said twice:\n%s", stdout)
			}
		})
	}
}

// TestCheckJSONHasNoHint: --json output is the report alone, with nothing
// on stderr, whatever the outcome.
func TestCheckJSONHasNoHint(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	for _, url := range []string{srv.URL, "http://127.0.0.1:1/mcp"} {
		code, stdout, stderr := driftd(t, "check", writeManifest(t, "a", "b"), "--base-url", url, "--json")
		var rep map[string]any
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || stderr != "" || code == exitOK {
			t.Errorf("%s: exit %d, %v, stderr %q", url, code, err, stderr)
		}
	}
}

func TestCheckTextColour(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer srv.Close()
	m, err := manifest.Load(writeManifest(t, "a", "c"))
	if err != nil {
		t.Fatal(err)
	}
	rep := probe.Run(t.Context(), probe.Prepare(config.NewTarget("colour", srv.URL), m), probe.Options{})
	var plain, painted bytes.Buffer
	writeCheckText(&plain, rep, false)
	writeCheckText(&painted, rep, true)
	for _, want := range []string{ansiRed + "ERROR" + ansiReset + " (1)\n", "1 " + ansiRed + "ERROR" + ansiReset + ", 1 " + ansiYellow + "WARN" + ansiReset + ", 1 " + ansiBlue + "INFO" + ansiReset + "\n"} {
		if !strings.Contains(painted.String(), want) {
			t.Errorf("painted output lacks %q:\n%q", want, painted.String())
		}
	}
	// Rule ids, messages and server text stay as they were.
	stripped := strings.NewReplacer(ansiRed, "", ansiYellow, "", ansiBlue, "", ansiReset, "").Replace(painted.String())
	if stripped != plain.String() {
		t.Errorf("colour changed the text:\n%s\nvs\n%s", stripped, plain.String())
	}
}
