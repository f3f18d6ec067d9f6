package schema

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/driftd/driftd/internal/jsonscan"
)

// The daemon sees the same schemas on every run — declared ones from the
// manifest, served ones that did not change — so parsing and compiling them
// once saves most of a run's CPU. The caches are shared by every target and
// keyed by content, and they are bounded by bytes, not entries: a server
// serving 64 changing 256 KiB schemas a run once grew an entry-counted cache
// to 7 GB.
const (
	// cacheBudget is what all of the engine's caches together may hold,
	// in accounted bytes: each entry's key bytes, an estimate of its value
	// (parsedWeight, checkWeight) and entryOverhead.
	cacheBudget = 64 << 20
	// An entry weighing more than cacheBudget/maxEntryFraction is computed
	// but not cached, so one huge schema cannot flush everything else.
	maxEntryFraction = 16
	// entryOverhead is the entry struct, its map slot and the key's
	// slice header, rounded up.
	entryOverhead = 128
)

// cache is the process-wide cache of parses and compile checks.
var cache = newLRU(cacheBudget)

// parse decodes a schema or instance with the engine's depth bound.
func parse(b []byte) (any, error) { return jsonscan.Parse(b, maxDiffDepth) }

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

// checkWeight is the cached copy of raw plus a bounded error message.
func checkWeight(raw []byte) int { return len(raw) + 256 }

// kind keeps the caches apart inside the one LRU.
type kind uint8

const (
	kindParse kind = iota
	kindCheck
)

// cached returns compute(raw), memoised in c under kind k. Concurrent
// misses on the same bytes may compute twice; the values are equal.
func cached[V any](c *lru, k kind, raw []byte, weigh func([]byte) int, compute func([]byte) V) V {
	if v, ok := c.get(k, raw); ok {
		r, _ := v.(V) // a nil error is stored as a nil any
		return r
	}
	v := compute(raw)
	c.put(k, raw, v, weigh(raw)+entryOverhead)
	return v
}

type cacheKey struct {
	kind kind
	hash uint64
}

type lruEntry struct {
	key        cacheKey
	raw        []byte
	v          any
	weight     int
	prev, next *lruEntry
}

// lru is a byte-weighted least-recently-used cache, safe for concurrent
// use. Keys are a seeded hash of the content; the content itself is kept
// and compared, so a collision is a miss, never a wrong answer.
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
	c.unlink(e)
	c.pushFront(e)
	return e.v, true
}

func (c *lru) put(k kind, raw []byte, v any, weight int) {
	if weight > c.budget/maxEntryFraction {
		return
	}
	e := &lruEntry{key: cacheKey{k, maphash.Bytes(c.seed, raw)}, raw: bytes.Clone(raw), v: v, weight: weight}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[e.key]; ok {
		c.remove(old)
	}
	for c.used+weight > c.budget {
		c.remove(c.ring.prev)
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
