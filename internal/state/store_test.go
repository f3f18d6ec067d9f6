package state

import (
	"github.com/driftd/driftd/internal/atomicfile"

	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// savedState returns a store in a temp dir holding one saved state for "orders".
func savedState(t *testing.T) (string, *Store, *State) {
	dir := t.TempDir()
	s := openStore(t, dir)
	f := mkFinding("orders", catalogue.DriftToolMissing, "refund")
	st, _ := apply(testCaches, mustLoad(t, s, "orders"), t0, []catalogue.Finding{f}, []Tool{mkTool("search")}, true, true, 0, nil)
	mustSave(t, s, st)
	return dir, s, st
}

func TestSnapshotRoundTripKeepsBytes(t *testing.T) {
	s := openStore(t, t.TempDir())
	spaced := Tool{Name: "x", Raw: json.RawMessage("{\n  \"name\": \"x\",  \"b\" : [1, 2.50]\n}")}
	bad := Tool{Name: "y", Raw: json.RawMessage(`{"name":`)}
	st, _ := apply(testCaches, NewState("t"), t0, nil, []Tool{spaced, mkTool("a<b>"), bad}, true, true, 0, nil)
	mustSave(t, s, st)
	got, err := s.LoadSnapshot("t")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "a<b>" || !bytes.Equal(got[1].Raw, spaced.Raw) || string(got[2].Raw) != "null" {
		t.Fatalf("snapshot round trip: %q", got)
	}
	// The definitions come back parsed, as a listing's are: the status
	// pages' schema view shows the served side from them.
	want, _ := mcp.ParseTool(mkTool("a<b>").Raw)
	if a := got[0]; !bytes.Equal(a.InputSchema, want.InputSchema) || a.InputSum != want.InputSum || a.Description != "does a<b>" {
		t.Fatalf("snapshot tool not parsed: schema %s, description %q", a.InputSchema, a.Description)
	}
	if _, err := s.LoadSnapshot("other"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing snapshot: %v", err)
	}
	// After the round trip the file's bytes still hash as stored, so a change diffs.
	st2 := mustLoad(t, openStore(t, s.dir), "t")
	changed := Tool{Name: "x", Raw: json.RawMessage(`{"name":"x","description":"new"}`)}
	_, tr := apply(testCaches, st2, t0, nil, []Tool{changed, mkTool("a<b>"), bad}, true, true, 0, func() ([]Tool, error) { return s.LoadSnapshot("t") })
	if tr.SnapshotErr != nil || !slices.Equal(changes(tr.ServedChanges), []string{"x:" + catalogue.ChgToolDescription}) {
		t.Fatalf("diff after reload: %v %v", changes(tr.ServedChanges), tr.SnapshotErr)
	}
	// A run-to-run change names its sides before and now: neither is the
	// manifest's.
	if msg := tr.ServedChanges[0].Message; !strings.HasPrefix(msg, "description changed: before 0 bytes") || !strings.Contains(msg, ", now 3 bytes") {
		t.Fatalf("served change message: %q", msg)
	}
}

func TestInterruptedWriteLeavesOldState(t *testing.T) {
	dir, _, st := savedState(t)
	// A kill -9 after writing part of a temp file, before the rename.
	torn := filepath.Join(dir, ".orders.json.tmp-123456")
	if err := os.WriteFile(torn, []byte(`{"target":"orders","version":1,"findi`), 0o600); err != nil {
		t.Fatal(err)
	}
	snapTorn := filepath.Join(dir, "snapshots", ".orders.json.tmp-99")
	if err := os.WriteFile(snapTorn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, ".orders.json.tmp-777")
	if err := os.WriteFile(fresh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{torn, snapTorn} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s2 := openStore(t, dir) // a restart
	got := mustLoad(t, s2, "orders")
	if len(got.Findings) != 1 || !got.ServedLastChange.Equal(st.ServedLastChange) {
		t.Fatalf("previous state lost: %+v", got)
	}
	for _, p := range []string{torn, snapTorn} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("abandoned temp %s not cleaned", p)
		}
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a young temp file (maybe another process's) was removed")
	}
}

func TestDiskFullKeepsOldFile(t *testing.T) {
	dir, s, st := savedState(t)
	before, _ := os.ReadFile(filepath.Join(dir, "orders.json"))
	s.write = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	next, tr := apply(testCaches, st, t0.Add(time.Minute), nil, []Tool{mkTool("search"), mkTool("more")}, true, true, 0, nil)
	if !tr.Changed {
		t.Fatal("no change")
	}
	if err := s.Save(next); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("save on a full disk: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "orders.json"))
	if !bytes.Equal(before, after) {
		t.Fatal("a failed save changed the state file")
	}
	if leftovers(t, dir) != 0 {
		t.Fatal("a failed save left a temp file")
	}
	// The disk frees up: the next run, unchanged, writes what was lost.
	s.write = nil
	again, tr := apply(testCaches, next, t0.Add(2*time.Minute), nil, []Tool{mkTool("search"), mkTool("more")}, true, true, 0, nil)
	if !tr.Changed {
		t.Fatal("the failed write is not retried")
	}
	mustSave(t, s, again)
	if got := mustLoad(t, s, "orders"); got.ToolHashes.Len() != 2 || len(got.Findings) != 0 {
		t.Fatalf("retried save: %+v", got)
	}
}

func leftovers(t *testing.T, dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name(), "") {
			n++
		}
		return nil
	})
	return n
}

func TestSaveToUnwritableDir(t *testing.T) {
	dir, s, st := savedState(t)
	before, _ := os.ReadFile(filepath.Join(dir, "orders.json"))
	next, _ := apply(testCaches, st, t0, nil, []Tool{mkTool("other")}, true, true, 0, nil)
	if os.Geteuid() == 0 {
		// chmod does not stop root: point the store at a "directory" that is a file.
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(filepath.Join(file, "state")); err == nil {
			t.Fatal("Open under a file succeeded")
		}
		bad := &Store{dir: filepath.Join(file, "state"), snapDir: filepath.Join(file, "state", "snapshots")}
		if err := bad.Save(next); err == nil {
			t.Fatal("save under a file succeeded")
		}
	} else {
		if err := os.Chmod(filepath.Join(dir, "snapshots"), 0o500); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o750); _ = os.Chmod(filepath.Join(dir, "snapshots"), 0o750) })
		if err := s.Save(next); err == nil {
			t.Fatal("save to a read-only dir succeeded")
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "orders.json"))
	if !bytes.Equal(before, after) || !next.Dirty() {
		t.Fatal("old file changed or failed save marked clean")
	}
}

func TestCorruptFileMovedAside(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":   "\x00\xffnot json at all",
		"truncated": `{"target":"orders","version":1,"findings":{"ab`,
		"trailing":  `{"target":"orders","version":1}{}`,
		"version":   `{"target":"orders","version":0}`,
		"target":    `{"target":"billing","version":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			path := filepath.Join(dir, "orders.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := s.Load("orders")
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.MovedTo == "" {
				t.Fatalf("want *CorruptError with MovedTo, got %v", err)
			}
			if st == nil || st.Target != "orders" || len(st.Findings) != 0 {
				t.Fatalf("no fresh state: %+v", st)
			}
			if b, err := os.ReadFile(ce.MovedTo); err != nil || string(b) != content ||
				!strings.HasPrefix(filepath.Base(ce.MovedTo), "orders.json.corrupt-") {
				t.Fatalf("moved-aside file %s: %v", ce.MovedTo, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatal("corrupt file still in place")
			}
			mustSave(t, s, st) // and the target carries on
		})
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	_ = os.WriteFile(filepath.Join(dir, "snapshots", "t.json"), []byte("{"), 0o600)
	var ce *CorruptError
	if _, err := s.LoadSnapshot("t"); !errors.As(err, &ce) {
		t.Fatalf("corrupt snapshot: %v", err)
	}
}

// TestNewerFileLeftInPlace: a rollback reading a newer driftd's file
// neither moves nor overwrites it.
func TestNewerFileLeftInPlace(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	path := filepath.Join(dir, "orders.json")
	content := `{"target":"orders","version":2,"baseline":{"future":true}}`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load("orders")
	var ne *NewerError
	if !errors.As(err, &ne) || ne.Version != 2 {
		t.Fatalf("want *NewerError, got %v", err)
	}
	next, _ := apply(nil, st, t0, []catalogue.Finding{mkFinding("orders", catalogue.DriftToolMissing, "a")}, nil, true, true, 0, nil)
	if err := s.Save(next); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Save over a newer file: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != content {
		t.Fatalf("newer file changed: %q, %v", b, err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
		t.Fatalf("newer file moved aside: %v", m)
	}
}

func TestStateFileHoldsOnlyStateFields(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	const marker = "SECRET-MARKER-7f3a"
	f := mkFinding("orders", catalogue.DriftSchema, "search")
	f.TraceID, f.SpanID, f.IgnoreReason, f.Classification = marker, marker, marker, marker
	st, _ := apply(testCaches, mustLoad(t, s, "orders"), t0, []catalogue.Finding{f}, []Tool{mkTool("search")}, true, true, 0, nil)
	mustSave(t, s, st)
	b, _ := os.ReadFile(filepath.Join(dir, "orders.json"))
	if bytes.Contains(b, []byte(marker)) {
		t.Fatalf("state file carries report-only data:\n%s", b)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	keys := sortedKeys(top)
	if want := []string{"findings", "served_last_change", "target", "tool_hashes", "version"}; !slices.Equal(keys, want) {
		t.Fatalf("top-level keys %v", keys)
	}
	// The history is in a file of its own, and carries no report-only data either.
	h, err := os.ReadFile(filepath.Join(dir, "history", "orders.json"))
	if err != nil || bytes.Contains(h, []byte(marker)) || !bytes.Contains(h, []byte(`"history"`)) {
		t.Fatalf("history file: %v\n%s", err, h)
	}
}

// TestHistoryFile: the history is read from a file of its own, so a view
// does not read a state file's baseline; a state file of an older release,
// with the history inside, is read as before and moved out by the next
// Save; Remove and Adopt take the history along.
func TestHistoryFile(t *testing.T) {
	dir, s, st := savedState(t)
	hist, err := s.History(st)
	if err != nil || len(hist) == 0 {
		t.Fatalf("history: %v %v", hist, err)
	}
	// As an older release wrote it: the history inside the state file.
	b, _ := os.ReadFile(filepath.Join(dir, "orders.json"))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	top["history"], _ = json.Marshal(hist)
	old, _ := json.Marshal(top)
	if err := os.WriteFile(filepath.Join(dir, "orders.json"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "history", "orders.json")); err != nil {
		t.Fatal(err)
	}
	st2 := mustLoad(t, s, "orders")
	if got, err := s.History(st2); err != nil || len(got) != len(hist) {
		t.Fatalf("an older state file's history: %d events, %v; want %d", len(got), err, len(hist))
	}
	st2.dirty = true
	mustSave(t, s, st2)
	b, _ = os.ReadFile(filepath.Join(dir, "orders.json"))
	if bytes.Contains(b, []byte(`"history"`)) {
		t.Fatal("the next Save left the history in the state file")
	}
	if got, err := s.History(st2); err != nil || len(got) != len(hist) {
		t.Fatalf("after the move: %d events, %v; want %d", len(got), err, len(hist))
	}
	if moved, err := s.Adopt("orders-2", "orders"); !moved || err != nil {
		t.Fatalf("Adopt: %v %v", moved, err)
	}
	if got, err := s.History(mustLoad(t, s, "orders-2")); err != nil || len(got) != len(hist) {
		t.Fatalf("adopted history: %d events, %v", len(got), err)
	}
	if err := s.Remove("orders-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "history", "orders-2.json")); !os.IsNotExist(err) {
		t.Fatalf("Remove left the history file: %v", err)
	}
}

func TestRemoveAndNames(t *testing.T) {
	dir, s, _ := savedState(t)
	os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
	os.WriteFile(filepath.Join(dir, "sessions", "orders.json"), []byte("{}"), 0o600)
	if err := s.Remove("orders"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"orders.json", "snapshots/orders.json", "sessions/orders.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived Remove", p)
		}
	}
	if err := s.Remove("never-existed"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "../x", ".hidden", "a/b"} {
		if _, err := s.Load(bad); err == nil {
			t.Errorf("Load(%q) accepted", bad)
		}
	}
	if !atomicfile.IsTemp(".a.json.tmp-123", "a.json") || atomicfile.IsTemp(".a.json.tmp-x.json.tmp-1", "a.json") || atomicfile.IsTemp("a.json", "") {
		t.Error("isTemp")
	}
}
