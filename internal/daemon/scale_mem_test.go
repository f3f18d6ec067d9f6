package daemon_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/metrics"
)

// TestScaleMemory is a quick in-process look at the daemon's per-target
// heap and scrape cost (make bench-scale is the measurement of record).
// DRIFTD_BENCH=1; DRIFTD_BENCH_TARGETS sets the count (default 2000).
func TestScaleMemory(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("a measurement: DRIFTD_BENCH=1")
	}
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("DRIFTD_BENCH_TARGETS")); err == nil {
		n = v
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: benchgen.Tools(50, false)})
	defer srv.Close()
	e := newEnv(t)
	e.write("m.json", string(benchgen.Manifest(50)))
	var b strings.Builder
	b.WriteString("global: {schedule: \"@every 10s\", timeout: 5s, state_dir: state}\ntargets:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: t%05d, url: %q, manifest: m.json}\n", i, srv.URL)
	}
	e.config(b.String())
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	d, err := daemon.New(daemon.Options{
		ConfigFile:      e.dir + "/driftd.yml",
		ListenAddresses: []string{"127.0.0.1:0"},
		Logger:          slog.New(slog.DiscardHandler),
		Build:           metrics.BuildInfo{Version: "test", Revision: "abc", GoVersion: "go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer stop(t, d)
	base := "http://" + d.Addrs()[0]
	waitMetric(t, base, "driftd_targets", float64(n))
	time.Sleep(25 * time.Second)
	after := heap()
	if f := os.Getenv("DRIFTD_BENCH_HEAP"); f != "" {
		out, _ := os.Create(f)
		_ = pprof.WriteHeapProfile(out)
		out.Close()
	}
	start := time.Now()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var sz, series int
	buf := make([]byte, 1<<16)
	for {
		k, err := resp.Body.Read(buf)
		sz += k
		for _, c := range buf[:k] {
			if c == '\n' {
				series++
			}
		}
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	_, body := get(t, base+"/metrics")
	probes := 0.0
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, `target="t00000"`) {
			t.Log(l)
		}
	}
	t.Logf("%d targets: live heap %d B/target; scrape %v, %d bytes, %d lines (%.1f/target); t00000 probes %v",
		n, (after-before)/uint64(n), time.Since(start), sz, series, float64(series)/float64(n), probes)
}
