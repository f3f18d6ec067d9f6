package probe

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/driftd/driftd/internal/config"
)

var classWords = []struct {
	class string
	words []string
}{
	{"dev", []string{"dev", "development", "test", "sandbox"}},
	{"staging", []string{"staging", "stage", "stg", "preprod", "uat", "qa"}},
	{"production", []string{"prod", "production", "prd", "live"}},
}

// Classify decides the environment class of a target: the configured
// environment, then the configured host rules, then the built-in ones.
func Classify(t config.Target) Classification {
	if t.Environment != "" {
		return Classification{t.Environment, "environment set in config"}
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return Classification{"unknown", "URL does not parse"}
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	for _, r := range t.Classification {
		if r.Match.MatchString(host) {
			return Classification{r.Class, fmt.Sprintf("host matches classification rule %q", r.Match.String())}
		}
	}
	return builtinClass(host)
}

func builtinClass(host string) Classification {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return Classification{"local", fmt.Sprintf("host %q is localhost", host)}
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return Classification{"local", fmt.Sprintf("loopback address %s", host)}
		}
		return Classification{"unknown", fmt.Sprintf("IP address %s names no environment", host)}
	}
	for _, label := range strings.Split(host, ".") {
		for _, cw := range classWords {
			for _, w := range cw.words {
				if label == w || strings.HasPrefix(label, w+"-") || strings.HasSuffix(label, "-"+w) {
					return Classification{cw.class, fmt.Sprintf("label %q in host", w)}
				}
			}
		}
	}
	return Classification{"unknown", fmt.Sprintf("no rule matched host %q", host)}
}
