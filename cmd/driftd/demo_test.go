package main

import (
	"strings"
	"testing"
)

// TestDemoDefaults: demo listens on loopback by default and prints URLs a
// browser opens; run keeps :9820 and logfmt like every exporter.
func TestDemoDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[::]:9820", "127.0.0.1:9820"},
		{"0.0.0.0:9820", "127.0.0.1:9820"},
		{":9820", "127.0.0.1:9820"},
		{"127.0.0.1:9820", "127.0.0.1:9820"},
		{"[::1]:9820", "[::1]:9820"},
		{"192.0.2.1:80", "192.0.2.1:80"},
	} {
		if got := browsable(tc.in); got != tc.want {
			t.Errorf("browsable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for cmd, want := range map[string][]string{
		"demo": {"--web.listen-address=127.0.0.1:9820", "--mock.listen-address=\"127.0.0.1:9821\"", "--log.format=text"},
		"run":  {"--web.listen-address=:9820", "--log.format=logfmt"},
	} {
		_, help, _ := driftd(t, cmd, "--help")
		for _, w := range want {
			if !strings.Contains(help, w) {
				t.Errorf("%s --help lacks %s:\n%s", cmd, w, help)
			}
		}
	}
}
