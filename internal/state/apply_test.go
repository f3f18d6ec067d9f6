package state

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/schema"
)

func TestOpenedResolvedAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	missing := mkFinding("orders", catalogue.DriftToolMissing, "refund")
	schema := mkFinding("orders", catalogue.DriftSchema, "search")
	served := []Tool{mkTool("search")}

	st, tr := apply(testCaches, mustLoad(t, s, "orders"), t0, []catalogue.Finding{missing, schema}, served, true, true, 0, nil)
	if len(tr.Opened) != 2 || len(tr.Resolved) != 0 || !tr.Changed {
		t.Fatalf("first run: %+v", tr)
	}
	if len(tr.ServedChanges) != 0 {
		t.Fatalf("first run must record the served set silently, got %v", changes(tr.ServedChanges))
	}
	mustSave(t, s, st)

	// A restart: a new Store on the same directory, the same findings.
	s2 := openStore(t, dir)
	st2 := mustLoad(t, s2, "orders")
	if got := st2.Findings[missing.Fingerprint].FirstSeen; !got.Equal(t0) {
		t.Fatalf("first_seen after restart = %v", got)
	}
	st3, tr := apply(testCaches, st2, t0.Add(time.Minute), []catalogue.Finding{missing, schema}, served, true, true, 0, nil)
	if tr.Changed || len(tr.Opened)+len(tr.Resolved)+len(tr.ServedChanges) != 0 || st3 != st2 {
		t.Fatalf("restart re-opened or changed: %+v", tr)
	}

	// The missing tool comes back: resolved, the other stays with its first_seen.
	st4, tr := apply(testCaches, st3, t0.Add(2*time.Minute), []catalogue.Finding{schema}, served, true, true, 0, nil)
	if len(tr.Resolved) != 1 || tr.Resolved[0].Fingerprint != missing.Fingerprint || len(tr.Opened) != 0 || !tr.Changed {
		t.Fatalf("resolve: %+v", tr)
	}
	if !st4.Findings[schema.Fingerprint].FirstSeen.Equal(t0) {
		t.Fatal("first_seen of a still-active finding moved")
	}
	// The history: two events in the file, one not yet written.
	if len(st4.pending) != 1 {
		t.Fatalf("%d events pending, want the resolved one", len(st4.pending))
	}
	for _, when := range []string{"before the save", "after the save", "after a restart"} {
		switch when {
		case "after the save":
			mustSave(t, s2, st4)
			if len(st4.pending) != 0 {
				t.Fatalf("Save left %d events pending", len(st4.pending))
			}
		case "after a restart":
			st4 = mustLoad(t, openStore(t, dir), "orders")
		}
		hist, err := s2.History(st4)
		if err != nil || len(hist) != 3 || hist[0].Kind != KindOpened || hist[2].Kind != KindResolved {
			t.Fatalf("history %s: %+v, %v; want 2 opened, then 1 resolved", when, hist, err)
		}
	}
	if len(st3.Findings) != 2 {
		t.Fatal("Apply modified prev")
	}
}

func TestSeverityChangeIsStoredNotReopened(t *testing.T) {
	f := mkFinding("t", catalogue.DriftToolUndeclared, "x")
	st, _ := apply(testCaches, NewState("t"), t0, []catalogue.Finding{f}, nil, false, false, 0, nil)
	f.Severity = catalogue.Error
	st2, tr := apply(testCaches, st, t0.Add(time.Minute), []catalogue.Finding{f}, nil, false, false, 0, nil)
	if !tr.Changed || len(tr.Opened)+len(tr.Resolved) != 0 {
		t.Fatalf("override change: %+v", tr)
	}
	if got := st2.Findings[f.Fingerprint]; got.Severity != catalogue.Error || !got.FirstSeen.Equal(t0) {
		t.Fatalf("stored %+v", got)
	}
}

func TestServedChanges(t *testing.T) {
	st := NewState("t")
	v1 := []Tool{mkTool("keep"), mkTool("search"), mkTool("gone")}
	st, _ = apply(testCaches, st, t0, nil, v1, true, true, 0, nil)
	saved(st)

	calls := 0
	// unchanged: nothing to write, and the snapshot is not read.
	same, tr := apply(testCaches, st, t0.Add(time.Minute), nil, slices.Clone(v1), true, true, 0, loaderCount(v1, &calls))
	if tr.Changed || same != st || calls != 0 {
		t.Fatalf("unchanged run: changed=%v calls=%d", tr.Changed, calls)
	}
	// served order is not a change
	rev := []Tool{v1[2], v1[0], v1[1]}
	if _, tr = apply(testCaches, st, t0.Add(time.Minute), nil, rev, true, true, 0, loaderCount(v1, &calls)); tr.Changed || calls != 0 {
		t.Fatalf("reordered run: changed=%v calls=%d", tr.Changed, calls)
	}
	// added + removed only: no hash of a kept tool moved, so no read.
	v2 := []Tool{mkTool("keep"), mkTool("search"), mkTool("new")}
	_, tr = apply(testCaches, st, t0.Add(time.Minute), nil, v2, true, true, 0, loaderCount(v1, &calls))
	want := []string{"new:" + catalogue.ChgToolAdded, "gone:" + catalogue.ChgToolRemoved}
	if !slices.Equal(changes(tr.ServedChanges), want) || !tr.Changed || calls != 0 {
		t.Fatalf("add/remove: %v calls=%d", changes(tr.ServedChanges), calls)
	}
	// search's inputSchema gains a required property: one read, CHG-REQUIRED-ADDED.
	v3 := []Tool{mkTool("keep"), mkTool("search", "b"), mkTool("gone")}
	next, tr := apply(testCaches, st, t0.Add(time.Minute), nil, v3, true, true, 0, loaderCount(v1, &calls))
	if calls != 1 || tr.SnapshotErr != nil {
		t.Fatalf("loader calls = %d, err %v", calls, tr.SnapshotErr)
	}
	if len(tr.ServedChanges) != 1 || tr.ServedChanges[0].Change != schema.ChgRequiredAdded ||
		tr.ServedChanges[0].Tool != "search" || tr.ServedChanges[0].Direction != "input" {
		t.Fatalf("schema change: %+v", tr.ServedChanges)
	}
	if !next.ServedLastChange.Equal(t0.Add(time.Minute)) || next.pending[len(next.pending)-1].Kind != KindServedChange {
		t.Fatal("served change not recorded")
	}
	// the manifest is silent (no findings) and still the change is seen: done above.
}

func TestServedChangeSnapshotProblems(t *testing.T) {
	v1 := []Tool{mkTool("search")}
	st, _ := apply(testCaches, NewState("t"), t0, nil, v1, true, true, 0, nil)
	saved(st)
	v2 := []Tool{mkTool("search", "a")}

	fail := errors.New("disk gone")
	next, tr := apply(testCaches, st, t0, nil, v2, true, true, 0, func() ([]Tool, error) { return nil, fail })
	if !errors.Is(tr.SnapshotErr, fail) || !tr.Changed || func() bool { a, _ := next.ToolHashes.Get("search"); b, _ := st.ToolHashes.Get("search"); return a == b }() {
		t.Fatalf("loader error: %v changed=%v", tr.SnapshotErr, tr.Changed)
	}
	// A snapshot that does not match the stored hash is not diffed.
	_, tr = apply(testCaches, st, t0, nil, v2, true, true, 0, func() ([]Tool, error) { return []Tool{mkTool("search", "b")}, nil })
	if !errors.Is(tr.SnapshotErr, ErrSnapshotStale) || len(tr.ServedChanges) != 0 {
		t.Fatalf("stale snapshot: %v %v", tr.SnapshotErr, changes(tr.ServedChanges))
	}
	if _, tr = apply(testCaches, st, t0, nil, v2, true, true, 0, nil); !errors.Is(tr.SnapshotErr, ErrNoSnapshot) {
		t.Fatalf("nil loader: %v", tr.SnapshotErr)
	}
}

func TestFailedRunSkipsServed(t *testing.T) {
	miss := mkFinding("t", catalogue.DriftToolMissing, "x")
	st, _ := apply(testCaches, NewState("t"), t0, []catalogue.Finding{miss}, []Tool{mkTool("a"), mkTool("b")}, true, true, 0, nil)
	saved(st)

	unsup := mkFinding("t", catalogue.DriftProtocolUnsupported, "")
	calls := 0
	next, tr := apply(testCaches, st, t0.Add(time.Minute), []catalogue.Finding{unsup}, nil, false, false, 0, loaderCount(nil, &calls))
	if len(tr.ServedChanges) != 0 || calls != 0 {
		t.Fatalf("failed run produced served changes %v", changes(tr.ServedChanges))
	}
	if next.ToolHashes.Len() != 2 || !next.ServedLastChange.Equal(st.ServedLastChange) {
		t.Fatal("failed run touched the hashes")
	}
	// The failed run's findings open; it compared nothing, so the earlier
	// finding stays active instead of resolving.
	if len(tr.Opened) != 1 || tr.Opened[0].Rule != catalogue.DriftProtocolUnsupported || len(tr.Resolved) != 0 || len(next.Findings) != 2 {
		t.Fatalf("failed run findings: %+v", tr)
	}
	// Recovery compares against the last good listing: nothing changed.
	_, tr = apply(testCaches, next, t0.Add(2*time.Minute), nil, []Tool{mkTool("a"), mkTool("b")}, true, true, 0, nil)
	if len(tr.ServedChanges) != 0 {
		t.Fatalf("recovery: %v", changes(tr.ServedChanges))
	}
}

// A run served the last run's listing (probe.Report.ServedAsBefore)
// compared, but listed nothing new: its findings replace the active set,
// resolving what it no longer found, and the hashes stay.
func TestServedAsBeforeKeepsHashes(t *testing.T) {
	miss := mkFinding("t", catalogue.DriftToolMissing, "x")
	st, _ := apply(testCaches, NewState("t"), t0, []catalogue.Finding{miss}, []Tool{mkTool("a"), mkTool("b")}, true, true, 0, nil)
	saved(st)
	calls := 0
	next, tr := apply(testCaches, st, t0.Add(time.Minute), nil, nil, true, false, 0, loaderCount(nil, &calls))
	if len(tr.ServedChanges) != 0 || calls != 0 || next.ToolHashes.Len() != 2 || !next.ServedLastChange.Equal(st.ServedLastChange) {
		t.Fatalf("served changes %v, %d snapshot reads, %d hashes", changes(tr.ServedChanges), calls, next.ToolHashes.Len())
	}
	if len(tr.Resolved) != 1 || tr.Resolved[0].Rule != catalogue.DriftToolMissing || len(next.Findings) != 0 {
		t.Fatalf("resolved %+v, %d active", tr.Resolved, len(next.Findings))
	}
}

func TestFirstListingAfterFailedRuns(t *testing.T) {
	st, _ := apply(testCaches, NewState("t"), t0, nil, nil, false, false, 0, nil)
	if !st.ServedLastChange.IsZero() {
		t.Fatal("failed run recorded a listing")
	}
	st, tr := apply(testCaches, st, t0, nil, []Tool{mkTool("a")}, true, true, 0, nil)
	if len(tr.ServedChanges) != 0 || st.ToolHashes.Len() != 1 {
		t.Fatalf("first listing: %v", changes(tr.ServedChanges))
	}
	// A server that first served nothing and then a tool: that is an addition.
	empty, _ := apply(testCaches, NewState("t"), t0, nil, nil, true, true, 0, nil)
	_, tr = apply(testCaches, empty, t0, nil, []Tool{mkTool("a")}, true, true, 0, nil)
	if !slices.Equal(changes(tr.ServedChanges), []string{"a:" + catalogue.ChgToolAdded}) {
		t.Fatalf("after an empty listing: %v", changes(tr.ServedChanges))
	}
}

func TestDuplicatesCountOnce(t *testing.T) {
	f := mkFinding("t", catalogue.ConfDuplicateTool, "a")
	served := []Tool{mkTool("a"), mkTool("a", "b"), mkTool("c")}
	st, tr := apply(testCaches, NewState("t"), t0, []catalogue.Finding{f, f}, served, true, true, 0, nil)
	if len(tr.Opened) != 1 || len(st.Findings) != 1 || st.ToolHashes.Len() != 2 {
		t.Fatalf("dups: %+v %v", tr, st.ToolHashes)
	}
	saved(st)
	// a, a against {a, c}: c is gone even though the count matches.
	_, tr = apply(testCaches, st, t0, []catalogue.Finding{f}, []Tool{mkTool("a"), mkTool("a")}, true, true, 0, nil)
	if !slices.Equal(changes(tr.ServedChanges), []string{"c:" + catalogue.ChgToolRemoved}) {
		t.Fatalf("dup hides a removal: %v", changes(tr.ServedChanges))
	}
}

func TestHistoryBounded(t *testing.T) {
	st := NewState("t")
	for i := range 50 {
		f := mkFinding("t", catalogue.DriftToolMissing, string(rune('a'+i%26))+string(rune('a'+i/26)))
		st, _ = apply(testCaches, st, t0.Add(time.Duration(i)*time.Second), []catalogue.Finding{f}, nil, true, true, 7, nil)
	}
	if len(st.pending) != 7 {
		t.Fatalf("history len %d, want 7", len(st.pending))
	}
	last := st.pending[len(st.pending)-1]
	if !last.Time.Equal(t0.Add(49*time.Second)) || last.Kind != KindResolved {
		t.Fatalf("newest event is not last: %+v", last)
	}
	if got := appendHistory(nil, DefaultHistoryLimit, make([]Event, 600)); len(got) != DefaultHistoryLimit {
		t.Fatalf("default limit: %d", len(got))
	}
}

func TestFailedSaveIsRetried(t *testing.T) {
	st, tr := apply(testCaches, NewState("t"), t0, nil, []Tool{mkTool("a")}, true, true, 0, nil)
	if !tr.Changed || !st.Dirty() {
		t.Fatal("first run not dirty")
	}
	// Save failed (st left dirty): the next, unchanged run must still ask for a write.
	st2, tr := apply(testCaches, st, t0, nil, []Tool{mkTool("a")}, true, true, 0, nil)
	if !tr.Changed || !st2.Dirty() {
		t.Fatal("a failed save is forgotten")
	}
	// The unsaved snapshot is used rather than the (older) file.
	calls := 0
	_, tr = apply(testCaches, st2, t0, nil, []Tool{mkTool("a", "a")}, true, true, 0, loaderCount(nil, &calls))
	if calls != 0 || len(tr.ServedChanges) != 1 || tr.ServedChanges[0].Change != schema.ChgRequiredAdded {
		t.Fatalf("pending snapshot: calls=%d %v %v", calls, changes(tr.ServedChanges), tr.SnapshotErr)
	}
}

// TestSnapshotOutlivesTheBodies: the served definitions a run hands to
// Apply live in response buffers the daemon takes back after the run
// (mcp.Bodies); the snapshot Save writes later, or after a failed write,
// must be the definitions as served, not what the buffers hold by then.
func TestSnapshotOutlivesTheBodies(t *testing.T) {
	s := openStore(t, t.TempDir())
	want := []Tool{mkTool("a"), mkTool("b", "x")}
	var body []byte
	for _, tl := range want {
		body = append(body, tl.Raw...)
	}
	served, off := make([]Tool, len(want)), 0
	for i, tl := range want {
		served[i] = Tool{Name: tl.Name, Raw: body[off : off+len(tl.Raw)]}
		off += len(tl.Raw)
	}
	st, _ := apply(testCaches, mustLoad(t, s, "t"), t0, nil, served, true, true, 0, nil)
	for i := range body { // the run is over: its buffers are overwritten
		body[i] = 0xFF
	}
	mustSave(t, s, st)
	got, err := s.LoadSnapshot("t")
	if err != nil || len(got) != 2 {
		t.Fatalf("snapshot: %v, %v", got, err)
	}
	for i := range want {
		if got[i].Name != want[i].Name || string(got[i].Raw) != string(want[i].Raw) {
			t.Errorf("snapshot has %s %s, served %s %s", got[i].Name, got[i].Raw, want[i].Name, want[i].Raw)
		}
	}
}
