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
		{LegacyRegistryName("io.example/crm", 0, 1), "registry-io.example-crm"},
		{LegacyRegistryName("io.example/crm", 1, 2), "registry-io.example-crm-2"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// Over-long names are cut and given a hash of what they name: stable,
	// valid, and different for different sources.
	a, b := RegistryName(long+"/a", "https://a.example/mcp"), RegistryName(long+"/b", "https://a.example/mcp")
	if a == b || !config.ValidTargetName(a) || !config.ValidTargetName(b) || a != RegistryName(long+"/a", "https://a.example/mcp") {
		t.Errorf("long names: %q %q", a, b)
	}
	ts := []Target{{Origin: "registry:x#1", Target: config.Target{Name: "registry-a"}}, {Origin: "registry:x#2", Target: config.Target{Name: "registry-a"}}}
	Dedupe(ts)
	if ts[0].Target.Name != "registry-a" || ts[1].Target.Name == "registry-a" || !config.ValidTargetName(ts[1].Target.Name) {
		t.Errorf("dedupe: %q %q", ts[0].Target.Name, ts[1].Target.Name)
	}
}

// TestRegistryNamesInjective: servers whose names fold to one slug, a
// server with one URL or two, and a URL on another server each get a name
// of their own, valid, stable, readable before its digest.
func TestRegistryNamesInjective(t *testing.T) {
	const u = "https://mcp.example/mcp"
	pairs := [][2]string{
		{"io.github.acme-crm/x", "io.github.acme/crm-x"},
		{"io.github.Acme/crm", "io.github.acme/crm"},
		{"io.example/a b", "io.example/a-b"},
		{"io.example/a\x00b", "io.example/a\x01b"},
		{"io.example/x", "io.example/x\u200b"},
	}
	for _, p := range pairs {
		a, b := RegistryName(p[0], u), RegistryName(p[1], u)
		if a == b || !config.ValidTargetName(a) || !config.ValidTargetName(b) {
			t.Errorf("%q and %q: names %q and %q", p[0], p[1], a, b)
		}
	}
	if a, b := RegistryName("io.example/crm", u), RegistryName("io.example/crm", u+"2"); a == b {
		t.Errorf("two remotes of one server share the name %q", a)
	}
	if got := RegistryName("io.example/crm", u); !strings.HasPrefix(got, "registry-io.example-crm-") || got != RegistryName("io.example/crm", u) {
		t.Errorf("RegistryName = %q: not readable or not stable", got)
	}
	if got := RegistryName("", u); !config.ValidTargetName(got) {
		t.Errorf("a server without a slug: %q", got)
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
