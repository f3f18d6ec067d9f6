package schema

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/driftd/driftd/internal/jsonscan"
)

// The daemon sees the same schemas on every run — declared ones from the
// manifest, served ones that did not change — so computing on them once
// saves most of a run's CPU. The caches are shared by every target and
// keyed by content, and they are bounded by bytes, not entries: a server
// serving 64 changing 256 KiB schemas a run once grew an entry-counted cache
// to 7 GB.
//
// What is cached is small next to its input. A diff is cached whole under
// a digest of both schemas (pairKey), about a kilobyte a pair however large
// the schemas; when the diff cached decoded declared schemas instead (some
// seven times their size), the diffs of 10,000 tools needed several times
// the budget, and a least-recently-used cache walked in the same order
// every run missed on every tool.
const (
	// cacheBudget is what all of the engine's caches together may hold,
	// in accounted bytes: each entry's key bytes, an estimate of its value
	// (parsedWeight, checkWeight) and entryOverhead.
	cacheBudget = 64 << 20
	// An entry weighing more than cacheBudget/maxEntryFraction is computed
	// but not cached, so one huge schema cannot flush everything else.
	maxEntryFraction = 16
	// entryOverhead is the entry struct (with room for a key of up to 16
	// bytes) and its map slot, rounded up.
	entryOverhead = 160
)

// cache is the process-wide cache of parses and compile checks.
var cache = newLRU(cacheBudget)

// parse decodes a schema or instance with the engine's depth bound.
func parse(b []byte) (any, error) { return jsonscan.Decode(b, maxDiffDepth) }

type parsed struct {
	v   any
	err error
}

// parseCached is parse through the cache; callers never mutate the value.
func parseCached(raw []byte) (any, error) {
	p := cached(cache, kindParse, raw, parsedWeight, func(b []byte) parsed { v, err := parse(b); return parsed{v, err} })
	return p.v, p.err
}

// parsedWeight estimates the memory of raw's parsed tree plus the cached
// copy of raw: the copy and the strings' bytes (2 bytes per input byte) and
// 64 bytes per value, counting a value per ',', '{' and '['. Commas inside
// strings overcount, which errs on the safe side. Realistic schemas come to
// about 7 bytes per input byte, hostile ones (arrays of tiny values) to
// about 34, close to what the parser allocates for them.
func parsedWeight(raw []byte) int {
	values := bytes.Count(raw, []byte{','}) + bytes.Count(raw, []byte{'{'}) + bytes.Count(raw, []byte{'['}) + 1
	return 2*len(raw) + 64*values
}

// checkCached is compute, a compile check of the schema whose Sum is sum,
// memoised in c.
func checkCached(c *lru, sum jsonscan.Sum, compute func() error) error {
	return memo(c, kindCheck, sum[:], compute, checkWeight)
}

// checkWeight is a compile check's answer: a bounded error message (its
// key, a Sum, is in the entry).
func checkWeight(error) int { return 256 }

// kind keeps the caches apart inside the one LRU.
type kind uint8

const (
	kindParse kind = iota
	kindCheck
	kindDiff
	kindPattern
)

// cached returns compute(raw), memoised in c under kind k. Concurrent
// misses on the same bytes may compute twice; the values are equal.
func cached[V any](c *lru, k kind, raw []byte, weigh func([]byte) int, compute func([]byte) V) V {
	return memo(c, k, raw, func() V { return compute(raw) }, func(V) int { return weigh(raw) })
}

// memo is cached for a value computed from more than its key (a digest
// of the inputs) and weighed by what it holds.
func memo[V any](c *lru, k kind, key []byte, compute func() V, weigh func(V) int) V {
	if v, ok := c.get(k, key); ok {
		r, _ := v.(V) // a nil error is stored as a nil any
		return r
	}
	v := compute()
	c.put(k, key, v, weigh(v)+entryOverhead)
	return v
}

// pairKey identifies a pair of schemas by a jsonscan.Sum of their Sums
// (each schema is summed once, where it is read: a manifest's when it is
// loaded, a listing's as it is decoded): 16 bytes of key rather than
// copies of both schemas, and no pass over either. It was a SHA-256 of
// both: hashing them was then a quarter of a warm diff at 10,000 tools.
func pairKey(declared, served jsonscan.Sum) jsonscan.Sum {
	return jsonscan.SumOf(declared[:], served[:])
}

// changesWeight is a cached diff: its key, the changes and their texts.
func changesWeight(cs []Change) int {
	const changeSize = 72 // a Change: four string headers and a bool
	w := len(jsonscan.Sum{}) + cap(cs)*changeSize
	for _, c := range cs {
		w += len(c.ID) + len(c.Pointer) + len(c.Declared) + len(c.Served)
	}
	return w
}

type cacheKey struct {
	kind kind
	hash uint64
}

type lruEntry struct {
	key        cacheKey
	raw        []byte       // the content, in small when it fits
	small      jsonscan.Sum // room for a diff's pairKey
	v          any
	weight     int
	used       bool // read since the eviction hand last passed
	prev, next *lruEntry
}

// lru is a byte-weighted cache, safe for concurrent use, that evicts the
// least recently used entries by the second-chance (CLOCK) rule: a hit
// only marks its entry, and the eviction hand gives a marked entry another
// round at the front instead of dropping it, so a hit touches nothing but
// the entry. Keys are a seeded hash of the content. For parses and
// patterns the content itself is kept and compared, so a collision is a
// miss, never a wrong answer; diffs and compile checks are keyed by
// jsonscan.Sums instead, whose 128 seeded bits a server cannot aim at.
type lru struct {
	mu     sync.Mutex
	seed   maphash.Seed
	budget int
	used   int // sum of the entries' weights, at most budget
	m      map[cacheKey]*lruEntry
	ring   lruEntry // sentinel: ring.next is the most recently used
}

func newLRU(budget int) *lru {
	c := &lru{seed: maphash.MakeSeed(), budget: budget, m: map[cacheKey]*lruEntry{}}
	c.ring.next, c.ring.prev = &c.ring, &c.ring
	return c
}

func (c *lru) get(k kind, raw []byte) (any, bool) {
	key := cacheKey{k, maphash.Bytes(c.seed, raw)}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !bytes.Equal(e.raw, raw) {
		return nil, false
	}
	e.used = true
	return e.v, true
}

func (c *lru) put(k kind, raw []byte, v any, weight int) {
	if weight > c.budget/maxEntryFraction {
		return
	}
	e := &lruEntry{key: cacheKey{k, maphash.Bytes(c.seed, raw)}, v: v, weight: weight}
	if len(raw) <= len(e.small) {
		e.raw = e.small[:copy(e.small[:], raw)]
	} else {
		e.raw = bytes.Clone(raw)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[e.key]; ok {
		c.remove(old)
	}
	for c.used+weight > c.budget {
		if last := c.ring.prev; last.used {
			last.used = false
			c.unlink(last)
			c.pushFront(last)
		} else {
			c.remove(last)
		}
	}
	c.m[e.key] = e
	c.used += weight
	c.pushFront(e)
}

func (c *lru) remove(e *lruEntry) {
	c.unlink(e)
	delete(c.m, e.key)
	c.used -= e.weight
}

func (c *lru) unlink(e *lruEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *lru) pushFront(e *lruEntry) {
	e.prev, e.next = &c.ring, c.ring.next
	c.ring.next.prev = e
	c.ring.next = e
}

// ResetCaches empties the engine's caches, so a benchmark can measure the
// cold path: a process that has never seen the schemas it compares. For
// tests and benchmarks only; the daemon never calls it.
func ResetCaches() { cache.reset() }

func (c *lru) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.used = 0
	c.ring.next, c.ring.prev = &c.ring, &c.ring
}
