package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// TestDaemonsOwnTheirCaches: two daemons in one process (as tests run
// them) each build their own caches in New, of the size asked for, and
// one's runs fill only its own.
func TestDaemonsOwnTheirCaches(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"integer"}}}}`),
	}})
	defer srv.Close()
	dir := t.TempDir()
	write := func(file, body string) string {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Declared and served differ, so a run diffs schemas as well as
	// checking them and hashing the served definition.
	write("a.json", `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}]}`)
	cfg := write("driftd.yml", fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state}\ntargets:\n  - {name: a, url: %q, manifest: a.json}\n", srv.URL))

	one, err := New(Options{ConfigFile: cfg, ListenAddresses: []string{"127.0.0.1:0"}, CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	two, err := New(Options{ConfigFile: cfg, ListenAddresses: []string{"127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	if one.caches == two.caches {
		t.Fatal("two daemons share one Caches")
	}
	if b := one.caches.Budget(); b > 8<<20 || b < 8<<20-64 {
		t.Errorf("CacheBytes 8 MiB built caches of %d bytes", b)
	}
	if b := two.caches.Budget(); b > probe.DefaultCacheBytes || b < probe.DefaultCacheBytes-64 {
		t.Errorf("CacheBytes 0 built caches of %d bytes, want the default %d", b, probe.DefaultCacheBytes)
	}

	if err := one.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := one.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); one.caches.Schema().Len() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first run left %d schema answers in its daemon's caches, want a check and a diff", one.caches.Schema().Len())
		}
	}
	if two.caches.Used() != 0 {
		t.Errorf("a daemon that never ran holds %d bytes of the other's answers", two.caches.Used())
	}
}
