package daemon_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestReloadScale measures a reload from 10,000 targets down to 2 (it
// took 23 s while removing a target scanned every series; make bench).
// It prints figures and asserts no timing.
func TestReloadScale(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("a measurement: DRIFTD_BENCH=1 (make bench)")
	}
	e := newEnv(t)
	e.manifest("a.json", "a")
	var b strings.Builder
	b.WriteString("global: {schedule: \"@every 1h\", timeout: 1s, state_dir: state}\ntargets:\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "  - {name: t%05d, url: \"http://127.0.0.1:1/mcp\", manifest: a.json}\n", i)
	}
	e.config(b.String())
	start := time.Now()
	_, base := e.start(false)
	t.Logf("start %v", time.Since(start))
	time.Sleep(2 * time.Second)
	e.config("global: {schedule: \"@every 1h\", timeout: 1s, state_dir: state}\ntargets:\n  - {name: t00001, url: \"http://127.0.0.1:1/mcp\", manifest: a.json}\n  - {name: t00002, url: \"http://127.0.0.1:1/mcp\", manifest: a.json}\n")
	start = time.Now()
	code, out := post(t, base+"/-/reload")
	if code != 200 {
		t.Fatalf("reload: %d %s", code, out)
	}
	t.Logf("reload 10000→2: %v", time.Since(start))
	start = time.Now()
	_, body := get(t, base+"/metrics")
	t.Logf("scrape after: %v, %d bytes", time.Since(start), len(body))
}
