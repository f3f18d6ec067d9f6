package discovery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFilesRefresh: each file keeps its own last good targets; a file that
// breaks keeps them and is reported with file:line, one that goes takes
// its targets with it.
func TestFilesRefresh(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(f *Files) string {
		var out []string
		for _, tg := range f.Targets() {
			out = append(out, tg.Target.Name)
		}
		return strings.Join(out, ",")
	}
	f := NewFiles(filepath.Join(dir, "*.yml"))
	write("a.yml", "- {name: a, url: 'http://127.0.0.1:1/mcp', baseline: first_seen}\n")
	write("b.yml", "- {name: b, url: 'http://127.0.0.1:2/mcp', baseline: first_seen}\n")
	if err := f.Refresh(context.Background()); err != nil || names(f) != "a,b" {
		t.Fatalf("targets %q, %v", names(f), err)
	}
	write("b.yml", "- {name: b, url: [\n")
	write("a.yml", "- {name: a2, url: 'http://127.0.0.1:1/mcp', baseline: first_seen}\n")
	err := f.Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.yml")+":1") {
		t.Fatalf("a broken file: %v", err)
	}
	if names(f) != "a2,b" {
		t.Fatalf("a broken file beside a changed one: targets %q, want a2 (changed) and b (kept)", names(f))
	}
	if err := os.Remove(filepath.Join(dir, "b.yml")); err != nil {
		t.Fatal(err)
	}
	if err := f.Refresh(context.Background()); err != nil || names(f) != "a2" {
		t.Fatalf("a removed file: targets %q, %v", names(f), err)
	}
}

// TestFilesWatchSettles: a burst of writes is gathered into fewer
// refreshes than writes (an editor's save is several events).
func TestFilesWatchSettles(t *testing.T) {
	dir := t.TempDir()
	f := NewFiles(filepath.Join(dir, "*.yml"))
	f.rescan = time.Hour
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Watch(ctx, func() { calls.Add(1) }) }()
	defer func() { cancel(); <-done }()
	time.Sleep(100 * time.Millisecond) // the watcher is set up
	const writes = 20
	for i := range writes {
		if err := os.WriteFile(filepath.Join(dir, "t.yml"), []byte(fmt.Sprintf("# %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(3 * fileSettle)
	if n := calls.Load(); n == 0 || n >= writes {
		t.Fatalf("%d writes gave %d refreshes; want at least one and fewer than the writes", writes, n)
	}
}
