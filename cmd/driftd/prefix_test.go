package main

import "testing"

// --web.route-prefix defaults to the path of --web.external-url, as in
// Prometheus; "" is the root.
func TestRoutePrefix(t *testing.T) {
	for _, tc := range []struct{ prefix, external, want string }{
		{"", "", ""},
		{"/", "", ""},
		{"/driftd/", "", "/driftd"},
		{"driftd", "", "/driftd"},
		{"", "https://ops.example.com/driftd/", "/driftd"},
		{"", "https://ops.example.com", ""},
		{"/a", "https://ops.example.com/b/", "/a"},
	} {
		w := &webFlags{routePrefix: &tc.prefix, externalURL: &tc.external}
		if got, err := w.prefix(); err != nil || got != tc.want {
			t.Errorf("prefix %q external %q = %q, %v; want %q", tc.prefix, tc.external, got, err, tc.want)
		}
	}
	bad, empty := "ops.example.com/driftd", ""
	if _, err := (&webFlags{routePrefix: &empty, externalURL: &bad}).prefix(); err == nil {
		t.Error("a relative --web.external-url was accepted")
	}
}
