package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/driftd/driftd/internal/config"
)

// Slug lowercases s and turns every run of characters a target name may
// not hold into one '-', trimming them from the ends: "io.github.Acme/CRM
// Server" is "io.github.acme-crm-server".
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '_' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return strings.Trim(b.String(), "-._")
}

// hashLen is the length of the suffix that makes a name unique.
const hashLen = 6

func suffix(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// fit returns name if it is a valid target name, else name cut to leave
// room for "-" and a hash of key, with that suffix.
func fit(name, key string) string {
	if config.ValidTargetName(name) {
		return name
	}
	cut := min(len(name), config.MaxTargetNameLen-hashLen-1)
	return strings.TrimRight(name[:cut], "-._") + "-" + suffix(key)
}

// KubernetesName is the name of the target for port (empty when the
// Service has one port) of Service svc in namespace ns:
// k8s-NS-SVC[-PORT].
func KubernetesName(ns, svc, port string) string {
	name := "k8s-" + ns + "-" + svc
	if port != "" {
		name += "-" + Slug(port)
	}
	return fit(name, ns+"/"+svc+":"+port)
}

// registryDigestLen is the length of the digest in a registry target's
// name: 48 bits, so that 300,000 targets collide with odds of about one
// in six thousand, and a collision is refused, never merged (Registry.build).
const registryDigestLen = 12

// RegistryName is the name of the target for the remote at rawURL of the
// registry server named server: registry-SLUG-DIGEST, the slug for
// people, the digest (of the exact server name and URL) so that the name
// is injective in what it names. Folding alone is not: io.github.acme-crm/x
// and io.github.acme/crm-x have one slug. The name depends on nothing
// else, so it does not change when the server lists more or fewer remotes.
func RegistryName(server, rawURL string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + rawURL))
	digest := hex.EncodeToString(sum[:])[:registryDigestLen]
	slug := Slug(server)
	room := config.MaxTargetNameLen - len("registry-") - 1 - registryDigestLen
	slug = strings.TrimRight(slug[:min(len(slug), room)], "-._")
	if slug == "" {
		return "registry-" + digest
	}
	return "registry-" + slug + "-" + digest
}

// LegacyRegistryName is the name releases before 0.2 gave the i-th (of n)
// streamable-http remote of server: registry-SLUG, registry-SLUG-I when
// it had several. A target takes over the state recorded under it once.
func LegacyRegistryName(server string, i, n int) string {
	name := "registry-" + Slug(server)
	key := server
	if n > 1 {
		name += "-" + strconv.Itoa(i+1)
		key += "#" + strconv.Itoa(i+1)
	}
	return fit(name, key)
}

// Dedupe gives the second and later targets of a source that share a
// generated name the suffix -HASH of their origin, so two names never
// collide within a source and a name does not change while its target
// stays.
func Dedupe(ts []Target) {
	seen := map[string]bool{}
	for i := range ts {
		name := ts[i].Target.Name
		if seen[name] {
			cut := min(len(name), config.MaxTargetNameLen-hashLen-1)
			name = name[:cut] + "-" + suffix(ts[i].Origin)
			ts[i].Target.Name = name
		}
		seen[name] = true
	}
}
