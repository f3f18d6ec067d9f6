package schema

import (
	"bytes"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/memo"
)

// The daemon sees the same schemas on every run — declared ones from the
// manifest, served ones that did not change — so computing on them once
// saves most of a run's CPU. A Cache holds those answers for every target
// of the program that built it; it is keyed by content and bounded by
// bytes, not entries: a server serving 64 changing 256 KiB schemas a run
// once grew an entry-counted cache to 7 GB.
//
// What is cached is small next to its input. A diff is cached whole under
// a digest of both schemas (pairKey), about a kilobyte a pair however large
// the schemas; when the diff cached decoded declared schemas instead (some
// seven times their size), the diffs of 10,000 tools needed several times
// the budget, and a least-recently-used cache walked in the same order
// every run missed on every tool.

// Cache remembers the engine's parses, compile checks and diffs, each under
// a jsonscan.Sum of its input (128 process-seeded bits a server cannot aim
// a collision at), within one byte budget shared by the three: a
// memo.Memo, with its policy (random eviction; an entry over a sixteenth
// of the budget computed but not kept). The program builds one where it
// starts (probe.Caches) and passes it down; nothing in this package keeps
// a cache of its own. A nil *Cache computes every answer and keeps none.
// A Cache is safe for concurrent use.
type Cache struct {
	m *memo.Memo[cacheKey, cacheEntry]
}

// NewCache returns a Cache that keeps at most budget accounted bytes:
// each entry's estimate of its value (parsedWeight, checkWeight,
// changesWeight) plus entryOverhead for its key and map slot.
func NewCache(budget int) *Cache {
	return &Cache{memo.New[cacheKey](budget, func(e cacheEntry) int { return e.w + entryOverhead })}
}

// Used and Len are the accounted bytes and the entries kept; Budget is
// the bound on Used.
func (c *Cache) Used() int   { return c.memo().Used() }
func (c *Cache) Len() int    { return c.memo().Len() }
func (c *Cache) Budget() int { return c.memo().Budget() }

// Reset forgets everything, so a benchmark can measure the cold path: a
// process that has never seen the schemas it compares.
func (c *Cache) Reset() { c.memo().Reset() }

func (c *Cache) memo() *memo.Memo[cacheKey, cacheEntry] {
	if c == nil {
		return nil
	}
	return c.m
}

// entryOverhead is an entry's key (a kind and a Sum), its weight, the
// value's interface header and its map slot, rounded up.
const entryOverhead = 96

// kind keeps the answers apart inside the one Memo: a parse and a compile
// check of the same bytes are two entries.
type kind uint8

const (
	kindParse kind = iota
	kindCheck
	kindDiff
)

type cacheKey struct {
	kind kind
	sum  jsonscan.Sum
}

// cacheEntry is an answer and its weight, weighed once when computed.
type cacheEntry struct {
	v any
	w int
}

// remember returns compute(), kept in c under (k, sum) and weighed by
// weigh.
func remember[V any](c *Cache, k kind, sum jsonscan.Sum, compute func() V, weigh func(V) int) V {
	m := c.memo()
	key := cacheKey{k, sum}
	if e, ok := m.Get(key); ok {
		v, _ := e.v.(V) // a nil error is kept as a nil any
		return v
	}
	v := compute()
	m.Put(key, cacheEntry{v, weigh(v)})
	return v
}

// parse decodes a schema or instance with the engine's depth bound.
func parse(b []byte) (any, error) { return jsonscan.Decode(b, maxDiffDepth) }

type parsed struct {
	v   any
	err error
}

// parse is parse through the cache, keyed by raw's Sum; callers never
// mutate the value. No copy of raw is kept.
func (c *Cache) parse(raw []byte) (any, error) {
	if c == nil {
		return parse(raw)
	}
	p := remember(c, kindParse, jsonscan.SumOf(raw), func() parsed { v, err := parse(raw); return parsed{v, err} },
		func(parsed) int { return parsedWeight(raw) })
	return p.v, p.err
}

// parsedWeight estimates the memory of raw's parsed tree: the strings'
// bytes (a byte per input byte) and 64 bytes per value, counting a value
// per ',', '{' and '['. Commas inside strings overcount, which errs on
// the safe side. Realistic schemas come to about 6 bytes per input byte,
// hostile ones (arrays of tiny values) to about 33, close to what the
// parser allocates for them.
func parsedWeight(raw []byte) int {
	values := bytes.Count(raw, []byte{','}) + bytes.Count(raw, []byte{'{'}) + bytes.Count(raw, []byte{'['}) + 1
	return len(raw) + 64*values
}

// check is compute, a compile check of the schema whose Sum is sum,
// through the cache.
func (c *Cache) check(sum jsonscan.Sum, compute func() error) error {
	return remember(c, kindCheck, sum, compute, checkWeight)
}

// checkWeight is a compile check's answer: a bounded error message.
func checkWeight(error) int { return 256 }

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
