package daemon

import (
	"crypto/sha256"
	"os"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/manifest"
)

// manifestCache shares parsed manifests between targets by content hash and
// re-reads a file only when its size or modification time changed, so a
// rewritten manifest (or a ConfigMap swap) is picked up at the next run.
type manifestCache struct {
	mu     sync.Mutex
	byPath map[string]cachedManifest
	byHash map[[32]byte]*manifest.Manifest
}

type cachedManifest struct {
	size int64
	mod  time.Time
	hash [32]byte
}

// maxManifestBytes bounds a manifest read from disk: far above any a
// server's listing could fill (a run reads at most max_run_bytes), so it
// only stops a file that is not a manifest from filling memory.
const maxManifestBytes = 1 << 30

func newManifestCache() *manifestCache {
	return &manifestCache{byPath: map[string]cachedManifest{}, byHash: map[[32]byte]*manifest.Manifest{}}
}

func (c *manifestCache) load(path string) (*manifest.Manifest, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if e, ok := c.byPath[path]; ok && e.size == fi.Size() && e.mod.Equal(fi.ModTime()) {
		m := c.byHash[e.hash]
		c.mu.Unlock()
		return m, nil
	}
	c.mu.Unlock()
	// A manifest named by a target file may be anything in its directory:
	// read only if it is a regular file, so a FIFO cannot hold a reload.
	b, err := atomicfile.ReadFile(path, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.byHash[sum]
	if !ok {
		// Parse the bytes that were hashed: reading the file again could
		// file a newer content under the old hash.
		if m, err = manifest.FromBytes(path, b); err != nil {
			return nil, err
		}
		c.byHash[sum] = m
	}
	c.byPath[path] = cachedManifest{size: fi.Size(), mod: fi.ModTime(), hash: sum}
	c.gc()
	return m, nil
}

// gc drops parsed manifests no path refers to any more.
func (c *manifestCache) gc() {
	used := map[[32]byte]bool{}
	for _, e := range c.byPath {
		used[e.hash] = true
	}
	for h := range c.byHash {
		if !used[h] {
			delete(c.byHash, h)
		}
	}
}

// loadOrLast is load, except that when the file cannot be read or parsed
// now, it returns the last version of it that could be, with the error:
// a manifest that breaks on disk leaves its targets compared against the
// last good one, not failing (docs/daemon.md). The manifest is nil when
// no version of the file has loaded since the daemon started.
func (c *manifestCache) loadOrLast(path string) (*manifest.Manifest, error) {
	m, err := c.load(path)
	if err == nil {
		return m, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byPath[path]; ok {
		return c.byHash[e.hash], err
	}
	return nil, err
}
