package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// floorRun sends what a probe of a credential-free modern server sends —
// server/discover, tools/list, and tools/list again on a fresh connection —
// with plain net/http and encoding/json, and decodes the tools: the bare
// minimum the probe engine is compared with (DESIGN §14).
func floorRun(url string, shared *http.Client) error {
	send := func(c *http.Client, id int, method string) (map[string]any, error) {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{"_meta": map[string]any{
			mcp.MetaProtocolVersion: mcp.ModernVersion, mcp.MetaClientCapabilities: map[string]any{}, mcp.MetaClientInfo: map[string]any{"name": "floor", "version": "0"}}}})
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ModernVersion)
		req.Header.Set(mcp.HeaderMethod, method)
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		return out, json.Unmarshal(b, &out)
	}
	if _, err := send(shared, 1, "server/discover"); err != nil {
		return err
	}
	if _, err := send(shared, 2, "tools/list"); err != nil {
		return err
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err := send(fresh, 3, "tools/list")
	return err
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestProbeVsFloor prints the probe engine's CPU cost per run against a
// 50-tool local server divided by the floor's, measured side by side in one
// run (budget ≤ 1.5). It asserts nothing about time; DRIFTD_BENCH=1.
func TestProbeVsFloor(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("set DRIFTD_BENCH=1 (make bench)")
	}
	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%02d", i)
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: tools(names...)})
	defer srv.Close()
	declared := declare(t, names...)
	target := config.NewTarget("bench", srv.URL)
	const n = 400
	measure := func(f func()) time.Duration {
		for i := 0; i < 20; i++ {
			f() // warm up connections and caches
		}
		start := cpuTime()
		for i := 0; i < n; i++ {
			f()
		}
		return (cpuTime() - start) / n
	}
	shared := &http.Client{}
	var floor, engine time.Duration
	for round := 0; round < 3; round++ { // interleaved, so drift on the machine hits both
		floor += measure(func() {
			if err := floorRun(srv.URL, shared); err != nil {
				t.Fatal(err)
			}
		})
		engine += measure(func() {
			if rep := probe.Run(context.Background(), probe.Prepare(target, declared), probe.Options{Version: "bench"}); !rep.Success {
				t.Fatal(rep.FailureMessage)
			}
		})
		srv.Reset()
	}
	fmt.Printf("probe engine vs floor, 50 tools, CPU per run (process, mock server included): engine %v, floor %v; ratio %.2f (budget ≤ 1.5)\n",
		(engine / 3).Round(time.Microsecond), (floor / 3).Round(time.Microsecond), float64(engine)/float64(floor))
}
