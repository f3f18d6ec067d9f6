package discovery

import (
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/config"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	for _, c := range []struct{ got, want string }{
		{Slug("io.github.Acme/CRM Server"), "io.github.acme-crm-server"},
		{Slug("--Ünïcode//name--"), "n-code-name"},
		{KubernetesName("shop", "crm", ""), "k8s-shop-crm"},
		{KubernetesName("shop", "crm", "HTTP"), "k8s-shop-crm-http"},
		{RegistryName("io.example/crm", 0, 1), "registry-io.example-crm"},
		{RegistryName("io.example/crm", 1, 2), "registry-io.example-crm-2"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// Over-long names are cut and given a hash of what they name: stable,
	// valid, and different for different sources.
	a, b := RegistryName(long+"/a", 0, 1), RegistryName(long+"/b", 0, 1)
	if a == b || !config.ValidTargetName(a) || !config.ValidTargetName(b) || a != RegistryName(long+"/a", 0, 1) {
		t.Errorf("long names: %q %q", a, b)
	}
	ts := []Target{{Origin: "registry:x#1", Target: config.Target{Name: "registry-a"}}, {Origin: "registry:x#2", Target: config.Target{Name: "registry-a"}}}
	Dedupe(ts)
	if ts[0].Target.Name != "registry-a" || ts[1].Target.Name == "registry-a" || !config.ValidTargetName(ts[1].Target.Name) {
		t.Errorf("dedupe: %q %q", ts[0].Target.Name, ts[1].Target.Name)
	}
}

func TestHasURLPrefix(t *testing.T) {
	for _, c := range []struct {
		u, prefix string
		want      bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com", true},
		{"https://mcp.example.com", "https://mcp.example.com", true},
		{"https://mcp.example.com.evil.net/mcp", "https://mcp.example.com", false},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com", false},
		{"https://mcp.example.com/team-a/mcp", "https://mcp.example.com/team-a/", true},
	} {
		if got := config.HasURLPrefix(c.u, c.prefix); got != c.want {
			t.Errorf("HasURLPrefix(%q, %q) = %v", c.u, c.prefix, got)
		}
	}
}
