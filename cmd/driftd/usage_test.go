package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpAndUsageErrors: asked-for help goes to stdout with exit 0; a
// usage error goes to stderr with exit 2 and nothing on stdout.
func TestHelpAndUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "check"}, {"check", "--help"}, {"config", "check", "--help"}} {
		code, stdout, stderr := driftd(t, args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "usage: driftd") {
			t.Errorf("%v: exit %d, stderr %q\n%s", args, code, stderr, stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "driftd: command not specified, try --help"},
		{[]string{"--nope"}, "unknown long flag '--nope', try --help"},
		{[]string{"check"}, "required flag(s) '--base-url' not provided"},
		{[]string{"run"}, "driftd run: required flag --config.file not provided"},
		{[]string{"run", "--config.file", "x.yml", "--log.format", "xml"}, "enum value must be one of logfmt,json,text"},
		{[]string{"run", "--config.file", "x.yml", "--log.level", "loud"}, "unrecognized log level loud"},
	} {
		code, stdout, stderr := driftd(t, tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %q in stderr\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
}

// TestConfigFileFlag: --config.file on run and config check; the old
// --config still works and is not advertised.
func TestConfigFileFlag(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`), 0o644)
	cfg := filepath.Join(dir, "driftd.yml")
	os.WriteFile(cfg, []byte("targets:\n  - {name: one, url: \"https://one.example/mcp\", manifest: a.json}\n"), 0o644)
	for _, args := range [][]string{
		{"config", "check", "--config.file", cfg},
		{"config", "check", "--config.file=" + cfg},
		{"config", "check", "--config", cfg},
		{"config", "check", cfg},
	} {
		if code, stdout, stderr := driftd(t, args...); code != exitOK || !strings.Contains(stdout, "one.example") {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := driftd(t, "config", "check", "--config.file", cfg, cfg); code != exitUsage || !strings.Contains(stderr, "not both") {
		t.Errorf("both: exit %d %s", code, stderr)
	}
	if code, _, stderr := driftd(t, "config", "check"); code != exitUsage || !strings.Contains(stderr, "--config.file") {
		t.Errorf("neither: exit %d %s", code, stderr)
	}
	// run with a config that does not load exits 2 before listening, by
	// either name.
	for _, flag := range []string{"--config.file", "--config"} {
		if code, _, stderr := driftd(t, "run", flag, filepath.Join(dir, "nope.yml")); code != exitUsage || !strings.Contains(stderr, "nope.yml") {
			t.Errorf("run %s: exit %d %s", flag, code, stderr)
		}
	}
	_, help, _ := driftd(t, "run", "--help")
	if !strings.Contains(help, "--config.file=FILE") || strings.Contains(help, "--config=") || strings.Contains(help, "--config ") {
		t.Errorf("run --help:\n%s", help)
	}
}
