package schema

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/driftd/driftd/internal/jsonscan"
)

// byteCache memoises a function of schema bytes. The daemon sees the same
// schemas on every run — declared ones from the manifest, served ones that
// did not change — so parsing and compiling them once saves most of a
// run's CPU. Values are never mutated by callers. When full, an arbitrary
// entry is evicted.
type byteCache[V any] struct {
	mu   sync.Mutex
	seed maphash.Seed
	max  int
	m    map[uint64]cacheEntry[V]
}

type cacheEntry[V any] struct {
	raw []byte
	v   V
}

func newByteCache[V any](size int) *byteCache[V] {
	return &byteCache[V]{seed: maphash.MakeSeed(), max: size, m: map[uint64]cacheEntry[V]{}}
}

func (c *byteCache[V]) get(raw []byte, compute func([]byte) V) V {
	h := maphash.Bytes(c.seed, raw)
	c.mu.Lock()
	e, ok := c.m[h]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.v
	}
	v := compute(raw)
	c.mu.Lock()
	if len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[h] = cacheEntry[V]{raw: bytes.Clone(raw), v: v}
	c.mu.Unlock()
	return v
}

type parsed struct {
	v   any
	err error
}

const cacheSize = 4096

var (
	declaredCache = newByteCache[parsed](cacheSize)
	checkCache    = newByteCache[error](cacheSize)
)

// parse decodes a schema or instance with the engine's depth bound.
func parse(b []byte) (any, error) { return jsonscan.Parse(b, maxDiffDepth) }

func parseCached(raw []byte) (any, error) {
	p := declaredCache.get(raw, func(b []byte) parsed { v, err := parse(b); return parsed{v, err} })
	return p.v, p.err
}
