package config

import (
	"strings"
	"testing"
)

func TestRedactedURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"https://h.example/mcp?api_key=SECRET1&region=SECRET2", "https://h.example/mcp?api_key=<redacted>&region=<redacted>"},
		{"https://h.example/mcp?a=SECRET1;b=SECRET2", "https://h.example/mcp?a=<redacted>&b=<redacted>"},
		{"https://h.example/mcp?SECRET1", "https://h.example/mcp?<redacted>"},
		{"https://h.example/mcp?key=", "https://h.example/mcp?key=<redacted>"},
		{"https://h.example/mcp?", "https://h.example/mcp?"},
		{"https://user:SECRET1@h.example/mcp", "https://<redacted>@h.example/mcp"},
		{"https://SECRET1@h.example/mcp", "https://<redacted>@h.example/mcp"},
		{"https://h.example/mcp#access_token=SECRET1", "https://h.example/mcp#access_token=<redacted>"},
		{"https://h.example/a%20b/mcp?t=SECRET1", "https://h.example/a%20b/mcp?t=<redacted>"},
		{"https://[::1]:9/mcp?t=SECRET1", "https://[::1]:9/mcp?t=<redacted>"},
		// Unparseable: a bad port, a bad escape, no scheme.
		{"http://u:SECRET1@h:port/mcp?k=SECRET2", "http://<redacted>@h:port/mcp?<redacted>"},
		{"http://h/%zz?k=SECRET1#SECRET2", "http://h/%zz?<redacted>"},
		{"::u:SECRET1@h", "<redacted>"},
	} {
		got := RedactedURL(tc.in)
		if got != tc.want {
			t.Errorf("RedactedURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("RedactedURL(%q) = %q keeps a secret", tc.in, got)
		}
	}
}
