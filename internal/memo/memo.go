// Package memo is a bounded, concurrency-safe map for answers worked out
// from bytes a daemon meets again and again: a target's listing is almost
// always the one it served last run, or another replica's. Keys are
// usually a jsonscan.Sum of the bytes (128 process-seeded bits a server
// cannot aim a collision at), so an answer is remembered without keeping
// the bytes.
//
// A Memo is bounded by weight, an estimate of the bytes an entry keeps
// alive, and when full drops entries at random (a map's iteration order).
// A fleet with more distinct answers than fit then pays a miss, not a
// thrashing order: a least-recently-used memo walked in the same order
// every period would miss on every target. One entry heavier than a
// sixteenth of the budget is answered but not kept, so one huge answer
// cannot flush the others.
//
// A Memo is never a package-level variable: each is built by the value
// that owns the program's caches (probe.Caches, made once where the
// program starts) and passed down, so two daemons in one process share
// nothing and the whole program's cache memory is one figure. A nil
// *Memo keeps nothing: Get misses, Put drops, Do computes.
package memo

import "sync"

// Memo maps keys to values within a weight budget.
type Memo[K comparable, V any] struct {
	mu     sync.Mutex
	budget int
	used   int
	weigh  func(V) int
	m      map[K]entry[V]
}

type entry[V any] struct {
	v V
	w int
}

// New returns a Memo that keeps at most budget of weight, each entry
// weighing weigh(v); weigh must count the key and the map slot too.
func New[K comparable, V any](budget int, weigh func(V) int) *Memo[K, V] {
	return &Memo[K, V]{budget: budget, weigh: weigh, m: map[K]entry[V]{}}
}

// Get returns the value remembered under k.
func (c *Memo[K, V]) Get(k K) (V, bool) {
	if c == nil {
		var zero V
		return zero, false
	}
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	return e.v, ok
}

// Keeps reports whether Put would keep v: whether it weighs at most a
// sixteenth of the budget.
func (c *Memo[K, V]) Keeps(v V) bool { return c != nil && c.weigh(v) <= c.budget/16 }

// Put remembers v under k, dropping entries at random until it fits; a
// value over a sixteenth of the budget is not kept. A value already
// remembered under k stays.
func (c *Memo[K, V]) Put(k K, v V) {
	if c == nil {
		return
	}
	w := c.weigh(v)
	if w > c.budget/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	for old, e := range c.m {
		if c.used+w <= c.budget {
			break
		}
		delete(c.m, old)
		c.used -= e.w
	}
	c.m[k] = entry[V]{v, w}
	c.used += w
}

// Do returns the value remembered under k, or compute's, remembered.
// Concurrent misses on one key may compute twice; the answers are equal.
func (c *Memo[K, V]) Do(k K, compute func() V) V {
	if v, ok := c.Get(k); ok {
		return v
	}
	v := compute()
	c.Put(k, v)
	return v
}

// Budget is the weight c may keep (0 for a nil Memo).
func (c *Memo[K, V]) Budget() int {
	if c == nil {
		return 0
	}
	return c.budget
}

// Len and Used are the entries and the weight remembered.
func (c *Memo[K, V]) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *Memo[K, V]) Used() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Reset forgets everything, for tests and benchmarks.
func (c *Memo[K, V]) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.used = 0
}
