package main

import (
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
	} {
		code, stdout, stderr := driftd(t, tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %q in stderr\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
}
