package state

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

// TestAdopt: a state recorded under an old name moves to the new one with
// its history, snapshot and findings (keyed for the new name), once, and
// never over a state the new name already has.
func TestAdopt(t *testing.T) {
	dir, s, _ := savedState(t) // "orders": one active finding, one served tool
	moved, err := s.Adopt("orders-new", "orders")
	if err != nil || !moved {
		t.Fatalf("Adopt = %v, %v", moved, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders.json")); !os.IsNotExist(err) {
		t.Fatalf("the old state file is still there: %v", err)
	}
	st := mustLoad(t, s, "orders-new")
	want := catalogue.Fingerprint("orders-new", mkFinding("orders-new", catalogue.DriftToolMissing, "refund"))
	if _, ok := st.Findings[want]; !ok || len(st.Findings) != 1 {
		t.Fatalf("findings not keyed for the new name: %v", st.Findings)
	}
	if hist, err := s.History(st); err != nil || len(hist) == 0 {
		t.Fatalf("history not adopted: %v %v", hist, err)
	}
	if snap, err := s.LoadSnapshot("orders-new"); err != nil || len(snap) != 1 || snap[0].Name != "search" {
		t.Fatalf("snapshot not adopted: %v %v", snap, err)
	}
	// Nothing left to adopt, and never over an existing state.
	if moved, err := s.Adopt("orders-new", "orders"); moved || err != nil {
		t.Fatalf("second Adopt = %v, %v", moved, err)
	}
	_, s2, _ := savedState(t)
	mustSave(t, s2, NewState("taken"))
	if moved, err := s2.Adopt("taken", "orders"); moved || err != nil {
		t.Fatalf("Adopt over a state = %v, %v", moved, err)
	}
}

// TestLoadFIFO: a FIFO where a state file belongs is refused at once
// (moved aside as corrupt), never waited on.
func TestLoadFIFO(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := syscall.Mkfifo(filepath.Join(dir, "orders.json"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Load("orders"); done <- err }()
	select {
	case err := <-done:
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("Load = %v, want a CorruptError", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
