package memo

import (
	"sync"
	"testing"
)

func TestMemo(t *testing.T) {
	const budget = 3200 // a sixteenth: 200
	c := New[int, string](budget, func(v string) int { return 100 + len(v) })
	c.Put(1, "a")
	if v, ok := c.Get(1); !ok || v != "a" {
		t.Fatalf("Get(1) = %q %v", v, ok)
	}
	c.Put(1, "b") // the first answer stays
	if v, _ := c.Get(1); v != "a" {
		t.Errorf("Get(1) after a second Put = %q", v)
	}
	if _, ok := c.Get(2); ok {
		t.Error("Get(2) found a value never put")
	}
	for k := range 1000 { // far more than fit
		c.Put(k, "x")
		if c.Used() > budget {
			t.Fatalf("after %d puts %d weight kept, budget %d", k, c.Used(), budget)
		}
	}
	if n := c.Len(); n < 20 || n > budget/101 {
		t.Errorf("%d entries of weight 101 in a budget of %d", n, budget)
	}
	huge := string(make([]byte, 101)) // 201 > budget/16
	if c.Keeps(huge) || !c.Keeps("x") {
		t.Errorf("Keeps: %v for a value over a sixteenth of the budget, %v for a small one", c.Keeps(huge), c.Keeps("x"))
	}
	c.Put(-1, huge)
	if _, ok := c.Get(-1); ok {
		t.Error("an entry over a sixteenth of the budget was kept")
	}
	c.Reset()
	if c.Len() != 0 || c.Used() != 0 {
		t.Errorf("after Reset: %d entries, %d weight", c.Len(), c.Used())
	}
}

func TestMemoConcurrent(t *testing.T) {
	c := New[int, int](16*10, func(int) int { return 10 })
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				k := (g + i) % 40
				if v, ok := c.Get(k); ok && v != k*k {
					t.Errorf("Get(%d) = %d", k, v)
					return
				}
				c.Put(k, k*k)
			}
		})
	}
	wg.Wait()
	if c.Used() > 160 {
		t.Errorf("%d weight kept, budget 160", c.Used())
	}
}

// TestNilMemo: a nil Memo computes every time and keeps nothing.
func TestNilMemo(t *testing.T) {
	var c *Memo[int, int]
	calls := 0
	for range 2 {
		if v := c.Do(1, func() int { calls++; return 7 }); v != 7 {
			t.Fatalf("Do = %d", v)
		}
	}
	c.Put(2, 2)
	if _, ok := c.Get(2); ok || calls != 2 || c.Len() != 0 || c.Used() != 0 || c.Keeps(1) || c.Budget() != 0 {
		t.Errorf("a nil Memo kept something: %d calls, %d entries", calls, c.Len())
	}
	c.Reset()
}

// TestHotEntryStays: an entry read every round survives a stream of
// others far larger than the budget often enough to be a hit most of the
// time (random eviction drops it only when it is picked).
func TestHotEntryStays(t *testing.T) {
	c := New[int, int](16*100, func(int) int { return 10 })
	computed := 0
	for i := range 10000 {
		c.Put(1000000+i, i)
		if i%10 == 0 {
			c.Do(-1, func() int { computed++; return 1 })
		}
		if c.Used() > 1600 {
			t.Fatalf("%d weight kept, budget 1600", c.Used())
		}
	}
	if computed > 500 { // 1,000 reads; each miss is a one-in-160 pick over 10 puts
		t.Errorf("the hot entry was computed %d times in 1,000 reads", computed)
	}
}
