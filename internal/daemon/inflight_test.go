package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// bigTools are n tools of about 100 KiB each (their descriptions).
func bigTools(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"name":"big%d","description":%q,"inputSchema":{"type":"object"}}`, i, strings.Repeat("x", 100<<10)))
	}
	return out
}

// TestInflightPool: three servers whose runs each read about 3 MiB (two
// listings of 1.5 MiB) fit a 4 MiB global.max_inflight_bytes one at a
// time, and not all at once: then the pool refuses the reads of the runs
// above their share, which fail as response_too_large (or, when the read
// was the second connection's, report that listing failed), while a server with
// small answers, probed at the same moment, is never refused. Every byte
// goes back to the pool when the runs end.
func TestInflightPool(t *testing.T) {
	e := newEnv(t)
	opts := mcptest.Options{Tools: bigTools(15), Delay: 200 * time.Millisecond}
	var bigs []*mcptest.Server
	for range 3 {
		s := mcptest.NewServer(opts)
		defer s.Close()
		bigs = append(bigs, s)
	}
	small := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), Delay: 200 * time.Millisecond})
	defer small.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf(`
global: {timeout: 20s, state_dir: state, concurrency: 4, max_inflight_bytes: 4MiB, schedule: "@every 1h"}
targets:
  - {name: big0, url: %q, manifest: a.json}
  - {name: big1, url: %q, manifest: a.json}
  - {name: big2, url: %q, manifest: a.json}
  - {name: small, url: %q, manifest: a.json}
`, bigs[0].URL, bigs[1].URL, bigs[2].URL, small.URL))
	d, base := e.start(false)
	value := func(series string) float64 {
		_, body := get(t, base+"/metrics")
		v, _ := metric(body, series)
		return v
	}
	// sum adds series (a format with the target's %q) over targets.
	sum := func(series string, targets ...string) float64 {
		total := 0.0
		for _, name := range targets {
			total += value(fmt.Sprintf(series, name))
		}
		return total
	}
	const failures = `driftd_probes_total{result="failure",target=%q}`
	runs := func(target string) float64 {
		return sum(`driftd_probes_total{result="success",target=%q}`, target) + sum(failures, target)
	}
	bigs3 := []string{"big0", "big1", "big2"}
	// The schedule's first runs, spread over the hour, may come at any
	// time; trigger counts from what ran before.
	probe := func(targets ...string) {
		t.Helper()
		before := map[string]float64{}
		for _, name := range targets {
			before[name] = runs(name)
			eventually(t, 10*time.Second, "a triggered run of "+name, func() bool { return d.Probe(name) == nil })
		}
		for _, name := range targets {
			eventually(t, 30*time.Second, "the triggered run of "+name, func() bool { return runs(name) > before[name] })
		}
	}
	if got := value("driftd_inflight_response_bytes_limit"); got != 4<<20 {
		t.Fatalf("driftd_inflight_response_bytes_limit = %v, want %d", got, 4<<20)
	}
	if !strings.Contains(e.log.String(), "max_inflight_bytes=4194304 per_run_share=1048576") {
		t.Errorf("the start log does not give the pool and the share:\n%s", e.log)
	}

	// One at a time, each fits.
	for _, name := range bigs3 {
		probe(name)
	}
	if f := sum(failures, bigs3...); f != 0 {
		t.Fatalf("%v runs failed one at a time, each within the pool:\n%s", f, e.log)
	}

	// All at once, they do not. The manifest changes first, so no run
	// recalls its last listing (probe.Recall): each reads and compares
	// its listings, holding them as a run that must does.
	e.manifest("a.json", "a", "b")
	probe("big0", "big1", "big2", "small")
	refused := value("driftd_inflight_refusals_total")
	if refused < 1 {
		t.Fatalf("no read was refused with 9 MiB wanted of a 4 MiB pool:\n%s", e.log)
	}
	// A refused read of the first listing fails its run as
	// response_too_large; one of the second connection's listing, which
	// runs beside the first, leaves the run standing and says so in the
	// report's tools.second_connection.
	secondRefused := 0
	for _, name := range bigs3 {
		if _, rep := get(t, base+"/api/v1/targets/"+name); strings.Contains(rep, `"second_connection": "failed: listing"`) {
			secondRefused++
		}
	}
	if tooLarge := sum(`driftd_probe_failures_total{reason="response_too_large",target=%q}`, bigs3...); tooLarge < 1 && secondRefused < 1 {
		t.Fatalf("%v reads refused, but no run failed as response_too_large and no second connection's listing failed:\n%s", refused, e.log)
	}
	if f := sum(failures, "small"); f != 0 {
		t.Fatalf("the server with small answers failed %v times; under its share it is never refused:\n%s", f, e.log)
	}
	if !strings.Contains(e.log.String(), "max_inflight_bytes") {
		t.Errorf("no log line names global.max_inflight_bytes:\n%s", e.log)
	}
	eventually(t, 10*time.Second, "every byte back in the pool", func() bool { return value("driftd_inflight_response_bytes") == 0 })
}
