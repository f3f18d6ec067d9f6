package discovery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
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
	f := NewFiles(filepath.Join(dir, "*.yml"), "")
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
	f := NewFiles(filepath.Join(dir, "*.yml"), "")
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

// TestFilesWatchConverges: a file rewritten more often than fileSettle,
// without pause, is still refreshed, at least every fileMaxWait.
func TestFilesWatchConverges(t *testing.T) {
	dir := t.TempDir()
	f := NewFiles(filepath.Join(dir, "*.yml"), "")
	f.rescan = time.Hour
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Watch(ctx, func() { calls.Add(1) }) }()
	defer func() { cancel(); <-done }()
	time.Sleep(100 * time.Millisecond) // the watcher is set up
	// Writes every fileSettle/4 for 3 × fileMaxWait: the settle timer
	// alone would never fire.
	stop := time.Now().Add(3 * fileMaxWait)
	for i := 0; time.Now().Before(stop); i++ {
		if err := os.WriteFile(filepath.Join(dir, "t.yml"), []byte(fmt.Sprintf("# %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(fileSettle / 4)
	}
	if n := calls.Load(); n < 2 {
		t.Fatalf("constant writes for %v gave %d refreshes while they went on; want one at least every %v", 3*fileMaxWait, n, fileMaxWait)
	}
}

// TestFilesFIFO: a FIFO matching the glob is refused at once, named as
// what it is, and the regular files beside it still give their targets.
func TestFilesFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yml"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yml"), []byte("- {name: a, url: 'http://127.0.0.1:1/mcp', baseline: first_seen}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := NewFiles(filepath.Join(dir, "*.yml"), "")
	done := make(chan error, 1)
	go func() { done <- f.Refresh(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Refresh = %v, want the FIFO refused", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Refresh blocked on a FIFO")
	}
	if ts := f.Targets(); len(ts) != 1 || ts[0].Target.Name != "a" {
		t.Fatalf("targets beside the FIFO: %v", ts)
	}
}

// TestFilesManifestConfined: a target file names manifests under the
// main config's directory, never any file driftd can read (the error
// names the field and quotes none of the file).
func TestFilesManifestConfined(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "targets")
	if err := os.MkdirAll(filepath.Join(sub, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string) error {
		if err := os.WriteFile(filepath.Join(sub, "t.yml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return NewFiles(filepath.Join(sub, "*.yml"), dir).Refresh(context.Background())
	}
	for _, m := range []string{"manifests/a.json", "../crm.json"} {
		if err := write("- {name: a, url: 'http://127.0.0.1:1/mcp', manifest: " + m + "}\n"); err != nil {
			t.Fatalf("manifest %s, under the root: %v", m, err)
		}
	}
	for _, m := range []string{"../../secret.json", "/etc/passwd", "manifests/../../../x.json"} {
		err := write("- {name: a, url: 'http://127.0.0.1:1/mcp', manifest: " + m + "}\n")
		if err == nil || !strings.Contains(err.Error(), "[0].manifest: must be under "+dir) {
			t.Errorf("manifest %s: %v", m, err)
		}
	}
}
