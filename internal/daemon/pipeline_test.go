package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/metrics"
)

// TestReadersWhileRunsFinish hammers every read surface (the API, the
// status pages, /metrics) while runs finish with served changes and
// reloads swap the configuration. Under -race it proves that nothing is
// written into a value after it was published to readers.
func TestReadersWhileRunsFinish(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer srv.Close()
	e.manifest("ab.json", "a", "b")
	cfg := func(extra string) {
		e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - {name: flip, url: %q, manifest: ab.json%s}
`, srv.URL, extra))
	}
	cfg("")
	_, base := e.start(false)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	for _, path := range []string{"/api/v1/targets/flip", "/api/v1/targets", "/api/v1/targets/flip/history", "/metrics", "/", "/targets/flip"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// The report is 404 until the first run has finished.
				if code, _ := get(t, base+path); code != 200 && code != 404 {
					t.Errorf("GET %s: %d", path, code)
					return
				}
				reads.Add(1)
			}
		}()
	}
	// Every run changes the served set, so every run carries served
	// changes; every other round reloads a changed configuration.
	for i := range 6 {
		if i%2 == 0 {
			srv.SetTools(mockTools("a"))
		} else {
			srv.SetTools(mockTools("a", "b"))
		}
		code, _ := post(t, base+"/api/v1/targets/flip/probe")
		if code != 202 && code != 409 {
			t.Errorf("probe: %d", code)
		}
		cfg(fmt.Sprintf(", labels: {round: r%d}", i))
		post(t, base+"/-/reload")
		time.Sleep(300 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if reads.Load() == 0 {
		t.Fatal("no reads happened")
	}
}

// TestNewSendsNothing: New builds the daemon without side effects; no
// request reaches a target, and no state is written, until Start.
func TestNewSendsNothing(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - {name: a, url: %q, manifest: a.json}
  - {name: b, url: %q, manifest: a.json}
`, srv.URL, srv.URL))
	d, err := daemon.New(daemon.Options{
		ConfigFile:      filepath.Join(e.dir, "driftd.yml"),
		ListenAddresses: []string{"127.0.0.1:0"},
		Logger:          slog.New(slog.NewTextHandler(e.log, nil)),
		Build:           metrics.BuildInfo{Version: "test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("New sent %d request(s) before Start", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Errorf("Stop of a daemon never started: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("a daemon stopped before Start sent %d request(s)", n)
	}
}

// TestReloadRequestsCoalesce: a burst of SIGHUP-style requests is one
// reload. Made before Start, the requests are all pending at once, so the
// count is exact.
func TestReloadRequestsCoalesce(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1h\", state_dir: state}\ntargets:\n  - {name: a, url: %q, manifest: a.json}\n", srv.URL))
	d, err := daemon.New(daemon.Options{
		ConfigFile:      filepath.Join(e.dir, "driftd.yml"),
		ListenAddresses: []string{"127.0.0.1:0"},
		Logger:          slog.New(slog.NewTextHandler(e.log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		d.RequestReload()
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer stop(t, d)
	eventually(t, 10*time.Second, "the pending reload", func() bool {
		return strings.Count(e.log.String(), "configuration reloaded") >= 1
	})
	time.Sleep(500 * time.Millisecond)
	if n := strings.Count(e.log.String(), "configuration reloaded"); n != 1 {
		t.Errorf("%d reloads for a burst of 100 requests, want 1", n)
	}
}

// TestReloadChangesTraceEndpoint: traces start off; the deprecated
// otlp_endpoint set by a reload turns them on, with a warning; a reload
// that moves tracing.endpoint sends the next runs' spans to the new
// collector, with the block's header.
func TestReloadChangesTraceEndpoint(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	type collector struct {
		*httptest.Server
		exports, withKey atomic.Int64
	}
	newCollector := func() *collector {
		c := &collector{}
		c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/traces" {
				c.exports.Add(1)
				if r.Header.Get("X-Api-Key") == "MARKER-9d2b-key" {
					c.withKey.Add(1)
				}
			}
			w.WriteHeader(http.StatusOK)
		}))
		return c
	}
	first, second := newCollector(), newCollector()
	defer first.Close()
	defer second.Close()
	e.manifest("a.json", "a")
	base := fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state%%s}\ntargets:\n  - {name: a, url: %q, manifest: a.json}\n%%s", srv.URL)
	e.config(fmt.Sprintf(base, "", ""))
	_, web := e.start(false)
	waitMetric(t, web, `driftd_probe_success{target="a"}`, 1)
	if first.exports.Load() != 0 {
		t.Fatal("spans exported with no endpoint")
	}
	reload := func() {
		t.Helper()
		if code, out := post(t, web+"/-/reload"); code != 200 {
			t.Fatalf("reload: %d %s", code, out)
		}
	}
	e.config(fmt.Sprintf(base, fmt.Sprintf(", otlp_endpoint: %q", first.URL), ""))
	reload()
	eventually(t, 20*time.Second, "spans at the collector named by otlp_endpoint", func() bool { return first.exports.Load() > 0 })
	if !strings.Contains(e.log.String(), "global.otlp_endpoint: deprecated") {
		t.Errorf("no deprecation warning logged:\n%s", e.log)
	}
	e.config(fmt.Sprintf(base, "", fmt.Sprintf("tracing: {endpoint: %q, headers: {X-Api-Key: MARKER-9d2b-key}}\n", second.URL)))
	reload()
	eventually(t, 20*time.Second, "spans at the collector named by the reload", func() bool { return second.withKey.Load() > 0 })
	if strings.Contains(e.log.String(), "MARKER-9d2b") {
		t.Errorf("a header value in the log:\n%s", e.log)
	}
}
