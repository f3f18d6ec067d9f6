package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestKeptConnection: a target that runs at least every 30 s keeps its
// main connection from run to run, while the second connection and the
// anonymous list stay fresh; a reload that replaces its configuration
// closes it, and so does Stop. A target that runs every minute keeps
// nothing open between runs.
func TestKeptConnection(t *testing.T) {
	e := newEnv(t)
	fast := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer fast.Close()
	slow := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer slow.Close()
	e.manifest("a.json", "a")
	config := func(label string) {
		e.config(fmt.Sprintf(`
global: {timeout: 5s, state_dir: state}
targets:
  - {name: fast, url: %q, manifest: a.json, schedule: "@every 30s", labels: {team: %s}}
  - {name: slow, url: %q, manifest: a.json, schedule: "@every 1m"}
`, fast.URL, label, slow.URL))
	}
	config("one")
	d, base := e.start(false)
	runs := func() float64 {
		_, body := get(t, base+"/metrics")
		v, _ := metric(body, `driftd_probes_total{result="success",target="fast"}`)
		return v
	}
	run := func() { // one more run of fast, started now
		t.Helper()
		n := runs()
		eventually(t, 10*time.Second, "a triggered run", func() bool { return d.Probe("fast") == nil })
		eventually(t, 10*time.Second, "the triggered run", func() bool { return runs() > n })
	}
	// discovers is the TCP connection (the mock's index) of each run's
	// server/discover, the main connection's first request. A run the
	// schedule starts meanwhile is one more; the checks allow for it.
	discovers := func() []int {
		var conns []int
		for _, r := range fast.Requests() {
			if r.Method == "server/discover" {
				conns = append(conns, r.Conn)
			}
		}
		return conns
	}

	for range 3 {
		run()
	}
	c := discovers()
	kept := c[0]
	for _, conn := range c {
		if conn != kept {
			t.Fatalf("server/discover of each run came over connections %v, want one kept connection", c)
		}
	}
	lists := map[int]int{}
	for _, r := range fast.Requests() {
		if r.Method == "tools/list" {
			lists[r.Conn]++
		}
	}
	for conn, n := range lists {
		if conn == kept && n != len(c) || conn != kept && n != 1 {
			t.Errorf("tools/list by connection %v: want one a run on the kept connection %d and each second connection's on its own", lists, kept)
		}
	}
	eventually(t, 5*time.Second, "only the kept connection open between runs", func() bool { return fast.OpenConns() == 1 })
	eventually(t, 10*time.Second, "a triggered run", func() bool { return d.Probe("slow") == nil })
	waitMetric(t, base, `driftd_probes_total{result="success",target="slow"}`, 1)
	if n := slow.WaitConnsClosed(5 * time.Second); n != 0 {
		t.Errorf("a target that runs every minute left %d connections open after its run", n)
	}

	config("two")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	if !fast.WaitConnClosed(kept, 5*time.Second) {
		t.Error("a reload that replaced the target's configuration left its kept connection open")
	}
	run()
	if c := discovers(); c[len(c)-1] == kept {
		t.Errorf("server/discover after the reload came over connections %v, want a new one", c)
	}

	stop(t, d)
	if n := fast.WaitConnsClosed(5 * time.Second); n != 0 {
		t.Errorf("Stop left %d connections open", n)
	}
}
