package mcp

import (
	"errors"
	"testing"
)

// TestPool holds the daemon's pool of bytes in flight to its rule: a run
// under its share is never refused, one above it is refused only when the
// pool is spent, a refused read draws nothing, and Release gives back what
// the run drew.
func TestPool(t *testing.T) {
	pool := NewPool(100, 4) // share 25
	a, b, c := NewBudget(1000, pool), NewBudget(1000, pool), NewBudget(1000, pool)
	must := func(err error, want error, what string) {
		t.Helper()
		if !errors.Is(err, want) && (err != nil || want != nil) {
			t.Fatalf("%s: got %v, want %v", what, err, want)
		}
	}
	must(a.take(60), nil, "a takes 60 of 100")
	must(b.take(30), nil, "b takes 30: 90 of 100")
	must(b.take(20), errDaemonBudget, "b, holding 50 > its share 25, would make 110")
	if got := pool.InUse(); got != 90 {
		t.Fatalf("after a refused read the pool holds %d, want 90", got)
	}
	must(c.take(20), nil, "c holds 20, under its share: never refused, the pool goes to 110")
	must(c.take(10), errDaemonBudget, "c would hold 30 > 25 with the pool spent")
	a.Release()
	a.Release() // twice is once
	if got := pool.InUse(); got != 50 {
		t.Fatalf("after a's release the pool holds %d, want 50", got)
	}
	must(b.take(20), nil, "b takes 20 once a gave back")
	b.Release()
	c.Release()
	if got, refused := pool.InUse(), pool.Refused(); got != 0 || refused != 2 {
		t.Fatalf("pool holds %d after every release with %d refusals, want 0 and 2", got, refused)
	}
	if r := Classify(errDaemonBudget); r != ReasonResponseTooLarge {
		t.Fatalf("a refused read classifies as %q, want %q", r, ReasonResponseTooLarge)
	}
	// The run's own allowance is checked first, and a nil pool or budget
	// draws nothing.
	must(NewBudget(10, pool).take(11), errRunBudget, "max_run_bytes")
	must(NewBudget(10, nil).take(5), nil, "no pool")
	var none *Budget
	must(none.take(1<<40), nil, "no budget")
	none.Release()
	if NewPool(0, 4) != nil {
		t.Fatal("a pool of 0 bytes must be no pool")
	}
}
