package state

import (
	"os"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

// A target's findings are initial until its state records a listing: on
// the first run in a new state dir, and on failed runs before it. After
// that, and after a restart on the saved file, an opening is news.
func TestOpenedInitialUntilFirstListing(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	missing := mkFinding("orders", catalogue.DriftToolMissing, "refund")
	undeclared := mkFinding("orders", catalogue.DriftToolUndeclared, "debug")
	unsup := mkFinding("orders", catalogue.DriftProtocolUnsupported, "")
	schema := mkFinding("orders", catalogue.DriftSchema, "search")
	served := []Tool{mkTool("search"), mkTool("debug")}

	// Down at first: the failed run's finding is what the target already had.
	st, tr := apply(testCaches, mustLoad(t, s, "orders"), t0, []catalogue.Finding{unsup}, nil, false, false, 0, nil)
	if !tr.Initial || len(tr.Opened) != 1 {
		t.Fatalf("failed first run: initial %v, opened %d; want initial, 1", tr.Initial, len(tr.Opened))
	}
	// The first listing: still the starting point, not news.
	st, tr = apply(testCaches, st, t0.Add(time.Minute), []catalogue.Finding{missing, undeclared}, served, true, true, 0, nil)
	if !tr.Initial || len(tr.Opened) != 2 || len(tr.Resolved) != 1 {
		t.Fatalf("first listing: initial %v, opened %d, resolved %d; want initial, 2, 1", tr.Initial, len(tr.Opened), len(tr.Resolved))
	}
	if st.NeverListed() {
		t.Fatal("the first listing was not recorded")
	}
	// The history keeps them as opened.
	if len(st.pending) != 4 || st.pending[0].Kind != KindOpened || st.pending[1].Kind != KindOpened {
		t.Fatalf("history %+v", st.pending)
	}
	mustSave(t, s, st)

	// A restart on the saved file: the same findings open nothing; one
	// more is news.
	st = mustLoad(t, openStore(t, dir), "orders")
	st2, tr := apply(testCaches, st, t0.Add(2*time.Minute), []catalogue.Finding{missing, undeclared}, served, true, true, 0, nil)
	if tr.Initial || len(tr.Opened) != 0 || st2 != st {
		t.Fatalf("restart: initial %v, opened %d, changed %v", tr.Initial, len(tr.Opened), st2 != st)
	}
	_, tr = apply(testCaches, st2, t0.Add(3*time.Minute), []catalogue.Finding{missing, undeclared, schema}, served, true, true, 0, nil)
	if tr.Initial || len(tr.Opened) != 1 || tr.Opened[0].Rule != catalogue.DriftSchema {
		t.Fatalf("a new finding after the restart: initial %v, opened %+v; want one, not initial", tr.Initial, tr.Opened)
	}
	// A failed run after a listing: its finding is news too.
	_, tr = apply(testCaches, st2, t0.Add(3*time.Minute), []catalogue.Finding{unsup}, nil, false, false, 0, nil)
	if tr.Initial || len(tr.Opened) != 1 {
		t.Fatalf("failed run after a listing: initial %v, opened %d", tr.Initial, len(tr.Opened))
	}
}

// A state file moved aside starts the target fresh: its findings are
// initial again (driftd_state_read_failures_total says why).
func TestOpenedInitialAfterCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	missing := mkFinding("orders", catalogue.DriftToolMissing, "refund")
	st, _ := apply(testCaches, mustLoad(t, s, "orders"), t0, []catalogue.Finding{missing}, []Tool{mkTool("a")}, true, true, 0, nil)
	mustSave(t, s, st)
	if err := os.WriteFile(s.statePath("orders"), []byte(`{"target":"orders","version":1,"findi`), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Load("orders")
	if err == nil {
		t.Fatal("a corrupt file loaded without an error")
	}
	_, tr := apply(testCaches, fresh, t0.Add(time.Minute), []catalogue.Finding{missing}, []Tool{mkTool("a")}, true, true, 0, nil)
	if !tr.Initial || len(tr.Opened) != 1 {
		t.Fatalf("after a corrupt file: initial %v, opened %d", tr.Initial, len(tr.Opened))
	}
}
