// Command benchserver is the benchmarks' MCP server, run in its own
// process so that its CPU is never counted as the client's. It serves
// strict mcptest handlers on 127.0.0.1 and prints its base URLs (one per
// -ports listener, space-separated) on the first line of stdout:
//
//	/t/<i>/mcp   target i: tool set i mod len(-sets); with -fleet DIR, target
//	             i of benchgen's fleet: the tools of DIR/<i>.json (its
//	             manifest, benchgen.FleetManifest), served as
//	             benchgen.FleetServed (a drifting target's first tool changed)
//	/mcp         tool set 0
//	/ok          200 "ok" (a trivial endpoint for blackbox_exporter)
//
// It exits on SIGTERM, SIGINT or when its stdin closes (the harness died).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/test/bench/rlimit"
	"github.com/driftd/driftd/test/bench/toolset"
)

func main() {
	sets := flag.String("sets", "50", "tools per set, comma-separated; set s serves toolset.Tools(s, n)")
	legacy := flag.Bool("legacy", false, "serve initialize-based (2025-11-25) only")
	ports := flag.Int("ports", 1, "listeners, each on its own loopback port, all serving the same")
	fleet := flag.String("fleet", "", "serve /t/<i>/mcp as benchgen's fleet target i, its manifest read from DIR/<i>.json")
	flag.Parse()
	if err := run(*sets, *legacy, *ports, *fleet); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}

func run(sets string, legacy bool, ports int, fleet string) error {
	rlimit.RaiseNoFile()
	var handlers []http.Handler
	recent := &fleetCache{m: map[int]*mcptest.Handler{}, max: fleetCacheSize}
	for s, f := range strings.Split(sets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 999 {
			return fmt.Errorf("-sets: %q is not a tool count in 1..999", f)
		}
		handlers = append(handlers, mcptest.NewHandler(mcptest.Options{Tools: toolset.Tools(s, n), Legacy: legacy, NoLog: true}))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handlers[0])
	mux.HandleFunc("/t/{i}/mcp", func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.PathValue("i"))
		if err != nil || i < 0 {
			http.NotFound(w, r)
			return
		}
		if fleet == "" {
			handlers[i%len(handlers)].ServeHTTP(w, r)
			return
		}
		h, err := recent.get(fleet, i, legacy)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })

	// Several ports spread a fleet's connections over more address pairs,
	// as distinct servers would: thousands of short connections a second
	// to one port recycle the kernel's TIME_WAIT pairs within seconds.
	var lns []net.Listener
	var urls []string
	for range max(ports, 1) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		urls = append(urls, "http://"+ln.Addr().String())
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Println(strings.Join(urls, " "))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // EOF: the harness is gone
		stop()
	}()
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- srv.Serve(ln) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// fleetCacheSize bounds the fleet targets whose handlers are kept.
const fleetCacheSize = 2048

// fleetCache keeps the handlers of the fleet targets asked last, a
// bounded number, dropped at random: a run's two connections ask at the
// same moment, and share one manifest read and one handler. The harness
// shares the machine with the daemon it measures, and every CPU second
// it spends reading a manifest twice is taken from the daemon's runs.
type fleetCache struct {
	mu  sync.Mutex
	m   map[int]*mcptest.Handler
	max int
}

func (c *fleetCache) get(dir string, i int, legacy bool) (*mcptest.Handler, error) {
	c.mu.Lock()
	h, ok := c.m[i]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := fleetHandler(dir, i, legacy)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if len(c.m) < c.max {
			break
		}
		delete(c.m, k)
	}
	c.m[i] = h
	return h, nil
}

// fleetHandler is the handler of fleet target i, built from its
// manifest (fleetCache keeps the last few thousand): a fleet of 100,000
// servers' tools would not fit this process, and generating them again
// costs more than reading the manifest the harness wrote (from the page
// cache). The modern handler is stateless, so a handler built anew
// serves as one kept per target would.
func fleetHandler(dir string, i int, legacy bool) (*mcptest.Handler, error) {
	tools, err := fleetTools(dir, i)
	if err != nil {
		return nil, err
	}
	return mcptest.NewHandler(mcptest.Options{Tools: tools, Legacy: legacy, NoLog: true}), nil
}

// fleetTools is what fleet target i serves: its manifest's tools, read
// from dir, as benchgen.FleetServed changes them.
func fleetTools(dir string, i int) ([]json.RawMessage, error) {
	b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".json"))
	if err != nil {
		return nil, fmt.Errorf("fleet target %d: no manifest", i)
	}
	var m struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("fleet target %d: %v", i, err)
	}
	return benchgen.FleetServed(i, m.Tools), nil
}
