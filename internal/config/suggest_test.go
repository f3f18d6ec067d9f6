package config

import (
	"reflect"
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	keys := []string{"schedule", "timeout", "max_list_pages", "url", "name", "labels"}
	for _, tc := range []struct{ in, want string }{
		{"schedual", "; did you mean schedule?"},
		{"timout", "; did you mean timeout?"},
		{"tiemout", "; did you mean timeout?"}, // a swap is one edit
		{"TIMEOUT", "; did you mean timeout?"},
		{"ulr", "; did you mean url?"},
		{"max_pages", ""}, // five edits away: no guess
		{"interval", ""},
		{"nme", "; did you mean name?"},
		{"x", ""},
	} {
		if got := didYouMean(closest(tc.in, keys)); got != tc.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := didYouMean(closest("MCP-DRIFT-TOOL-MISING", ruleIDs)); got != "; did you mean MCP-DRIFT-TOOL-MISSING?" {
		t.Errorf("rule id: %q", got)
	}
	if got := didYouMean(closest("abcd", []string{"abce", "abcf"})); got != "; did you mean abce or abcf?" {
		t.Errorf("tie: %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"abc", "abc", 0}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"schedual", "schedule", 2}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestKeysAt: every place a config has mappings knows its keys, so a typo
// anywhere gets a suggestion.
func TestKeysAt(t *testing.T) {
	for _, tc := range []struct{ at, has string }{
		{"", "targets"},
		{"global", "per_tool_series_limit"},
		{"global.classification[3]", "match"},
		{"targets[0]", "max_run_bytes"},
		{"targets[12].invoke", "i_know_this_is_production"},
		{"targets[0].ignore[1]", "fingerprint"},
		{"targets[0].http_client", "follow_redirects"},
		{"targets[0].http_client", "proxy_url"}, // inline in prometheus' HTTPClientConfig
		{"targets[0].http_client.tls_config", "insecure_skip_verify"},
		{"targets[0].http_client.oauth2", "client_secret_file"},
		{"targets[0].http_client.authorization", "credentials_file"},
		{"targets[0].http_client.http_headers.X-Tenant", "files"},
	} {
		if keys := keysAt(reflect.TypeFor[Config](), tc.at); !slices.Contains(keys, tc.has) {
			t.Errorf("keysAt(%q) = %v, lacks %q", tc.at, keys, tc.has)
		}
	}
	for _, at := range []string{"targets[0].labels", "targets[0].severity", "targets[0].http_client.http_headers", "nope", "targets.x"} {
		if keys := keysAt(reflect.TypeFor[Config](), at); keys != nil {
			t.Errorf("keysAt(%q) = %v, want nil: any key goes, or no such place", at, keys)
		}
	}
}
