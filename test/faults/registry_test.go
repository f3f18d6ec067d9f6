package faults_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/discovery"
	"github.com/driftd/driftd/internal/discovery/registrytest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestDaemonRegistryLookalikes: a registry lists io.github.acme/crm-x and
// its look-alike io.github.acme-crm/x, whose names fold to one slug. Each
// gets a target of its own, the credentials given to the real one by
// server: reach only the real one (12 times they reached the look-alike
// before), and the real server going from two remotes to one keeps its
// target, and with it its baseline.
func TestDaemonRegistryLookalikes(t *testing.T) {
	needBinary(t)
	real := mcptest.NewServer(mcptest.Options{Tools: tools("a"), BearerToken: marker, Challenge: challenge})
	realEU := mcptest.NewServer(mcptest.Options{Tools: tools("a"), BearerToken: marker, Challenge: challenge})
	fake := mcptest.NewServer(mcptest.Options{Tools: tools("a")})
	for _, s := range []*mcptest.Server{real, realEU, fake} {
		t.Cleanup(s.Close)
	}
	reg := registrytest.New()
	t.Cleanup(reg.Close)
	sh := func(u string) registrytest.Remote { return registrytest.Remote{Type: "streamable-http", URL: u} }
	reg.Put("io.github.acme/crm-x", "1", sh(real.URL), sh(realEU.URL))
	reg.Put("io.github.acme-crm/x", "1", sh(fake.URL))

	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	config := writeFile(t, dir, "driftd.yml", fmt.Appendf(nil, `global: {schedule: "@every 1s", timeout: 2s, state_dir: state}
registry_sd:
  - {url: %q, refresh_interval: 1s}
sd_credentials:
  - server: io.github.acme/crm-x
    http_client: {authorization: {type: Bearer, credentials_file: token}}
`, reg.URL))
	p := startDaemon(t, config)
	base, log := p.base, p.log
	realName := discovery.RegistryName("io.github.acme/crm-x", real.URL)
	euName := discovery.RegistryName("io.github.acme/crm-x", realEU.URL)
	fakeName := discovery.RegistryName("io.github.acme-crm/x", fake.URL)
	waitFor := func(what string, cond func(body string) bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if cond(get(base + "/metrics").body) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%.4000s", what, log.String())
			}
		}
	}
	success := func(body, name string) bool {
		v, ok := seriesValue(body, `driftd_probe_success{target="`+name+`"}`)
		return ok && v == 1
	}
	waitFor("success of all three", func(b string) bool {
		return success(b, realName) && success(b, euName) && success(b, fakeName)
	})
	for _, q := range fake.Requests() {
		if strings.Contains(q.Header.Get("Authorization"), marker) {
			t.Fatal("the look-alike server received the real server's credential")
		}
	}

	// Two remotes to one: the remaining target keeps its name, so its
	// baseline is recorded once, never again.
	recorded := func() int {
		n := 0
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, "baseline recorded") && strings.Contains(line, "target="+realName) {
				n++
			}
		}
		return n
	}
	reg.Put("io.github.acme/crm-x", "2", sh(real.URL))
	waitFor("the second remote's target gone", func(b string) bool {
		return !strings.Contains(b, `target="`+euName+`"`) && success(b, realName)
	})
	time.Sleep(2 * time.Second) // runs of the remaining target after the change
	if n := recorded(); n != 1 {
		t.Errorf("the remaining target's baseline was recorded %d times, want once:\n%.4000s", n, log.String())
	}
}
