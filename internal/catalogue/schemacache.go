package catalogue

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// parsedCache keeps parsed declared schemas: the daemon compares the same
// manifest on every run, so its schemas are parsed once, not per run. The
// trees are never mutated. When full, an arbitrary entry is evicted.
type parsedCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	max  int
	m    map[uint64]parsedEntry
}

type parsedEntry struct {
	raw []byte
	v   any
	err error
}

const parsedCacheSize = 4096

var declaredCache = &parsedCache{seed: maphash.MakeSeed(), max: parsedCacheSize, m: map[uint64]parsedEntry{}}

func (c *parsedCache) parse(raw []byte) (any, error) {
	h := maphash.Bytes(c.seed, raw)
	c.mu.Lock()
	e, ok := c.m[h]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.v, e.err
	}
	v, err := parseJSON(raw)
	c.mu.Lock()
	if len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[h] = parsedEntry{raw: bytes.Clone(raw), v: v, err: err}
	c.mu.Unlock()
	return v, err
}
