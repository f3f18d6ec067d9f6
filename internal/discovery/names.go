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

// RegistryName is the name of the target for the i-th streamable-http
// remote (of n) of the registry server named server:
// registry-SLUG, and registry-SLUG-I (from 1) when the server has several.
func RegistryName(server string, i, n int) string {
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
