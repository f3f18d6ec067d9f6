package daemon

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

// TestManifestMemoryFleet measures what a fleet of distinct manifests
// keeps resident (docs/scaling.md): N files (DRIFTD_BENCH_MANIFESTS,
// default 2,000) of 30 distinct benchgen tools each, loaded the way the
// daemon loads them, side by side in one run: the old path that kept
// every parsed manifest by hash for the daemon's lifetime, and the
// manifest cache that keeps per file its size, time and hash and the
// parsed forms in probe.Caches' bounded memo (default --cache.max-bytes).
// It prints heap in use per target beyond the empty program, and what a
// load costs when the memo has let the manifest go (the file read,
// hashed and parsed again). It fails if the manifest cache keeps more
// than 1 KiB a target beyond the memo's budget. DRIFTD_BENCH=1 only:
// writing and parsing the files takes seconds.
func TestManifestMemoryFleet(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("DRIFTD_BENCH=1 measures manifest memory for a distinct fleet")
	}
	n := 2000
	if v := os.Getenv("DRIFTD_BENCH_MANIFESTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("DRIFTD_BENCH_MANIFESTS=%q", v)
		}
	}
	const tools = 30
	dir := t.TempDir()
	paths := make([]string, n)
	var fileBytes int64
	for j := range paths {
		var b strings.Builder
		b.WriteString(`{"tools":[`)
		for k := range tools {
			if k > 0 {
				b.WriteByte(',')
			}
			b.Write(benchgen.Tool(j*tools+k, false))
		}
		b.WriteString("]}")
		paths[j] = filepath.Join(dir, fmt.Sprintf("m%05d.json", j))
		if err := os.WriteFile(paths[j], []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		fileBytes += int64(b.Len())
	}

	// old is the manifest cache before this change: every parsed
	// manifest kept by hash, each file's size, time and hash by path.
	type oldEntry struct {
		size int64
		mod  time.Time
		hash [32]byte
	}
	oldLoad := func() any {
		byPath := map[string]oldEntry{}
		byHash := map[[32]byte]*manifest.Manifest{}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := atomicfile.ReadFile(p, maxManifestBytes)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			m, err := manifest.FromBytes(p, b)
			if err != nil {
				t.Fatal(err)
			}
			byHash[sum] = m
			byPath[p] = oldEntry{fi.Size(), fi.ModTime(), sum}
		}
		return []any{byPath, byHash}
	}
	var caches *probe.Caches
	newLoad := func() any {
		caches = probe.NewCaches(0)
		c := newManifestCache(caches)
		for _, p := range paths {
			if _, err := c.load(p); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	measure := func(load func() any) float64 {
		base := heap()
		kept := load()
		after := heap()
		runtime.KeepAlive(kept)
		return float64(int64(after)-int64(base)) / float64(n)
	}
	oldPer := measure(oldLoad)
	newPer := measure(newLoad)
	used := caches.Manifests().Used()

	// What a run pays when its manifest is not in the memo: stat, read,
	// hash, parse (the memo is full: most of a large fleet's loads).
	c := newManifestCache(caches)
	misses := 0
	for _, p := range paths {
		if _, ok := caches.Manifests().Get(sha256Of(t, p)); !ok {
			misses++
		}
	}
	start := time.Now()
	for _, p := range paths {
		if _, err := c.load(p); err != nil {
			t.Fatal(err)
		}
	}
	perLoad := time.Since(start) / time.Duration(n)

	// What a run pays when it is served what its manifest declares and
	// the memo has let the manifest go: a stat and the listing's digest
	// (indexed, resolve); the file is not read.
	caches.Reset()
	served := make([][]mcp.Tool, n)
	for j, p := range paths {
		m, err := manifest.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		served[j] = m.Tools
	}
	reads := c.reads.Load()
	start = time.Now()
	for j, p := range paths {
		e, ok := c.indexed(p)
		if !ok {
			t.Fatalf("%s not indexed", p)
		}
		if m, err := c.resolve(p, e, served[j]); err != nil || len(m.Tools) != tools {
			t.Fatal(err)
		}
	}
	perDigest := time.Since(start) / time.Duration(n)
	if r := c.reads.Load() - reads; r != 0 {
		t.Errorf("runs served what was declared read %d files", r)
	}

	budget := caches.Manifests().Budget()
	fmt.Printf("manifest memory, %d distinct manifests of %d benchgen tools (%.1f KiB a file), one run:\n", n, tools, float64(fileBytes)/float64(n)/1024)
	fmt.Printf("  kept every parsed manifest (old): %8.1f KiB a target\n", oldPer/1024)
	fmt.Printf("  hashes per file, parsed in memo:  %8.1f KiB a target (memo budget %d KiB = %.1f KiB a target at this N, %d of %d manifests in it)\n",
		newPer/1024, budget>>10, float64(budget)/float64(n)/1024, n-misses, n)
	fmt.Printf("  of which outside the memo (the files' entries): %.2f KiB a target (the memo held %d KiB)\n", (newPer-float64(used)/float64(n))/1024, used>>10)
	fmt.Printf("  ratio old/new: %.1f×\n", oldPer/newPer)
	fmt.Printf("  a run's declared side once the memo let the manifest go: %v served as declared (stat, digest), %v drifted (stat, read, SHA-256, parse); ratio %.0f×\n",
		perDigest, perLoad, float64(perLoad)/float64(perDigest))
	if newPer > float64(budget)/float64(n)+1024 {
		t.Errorf("the manifest cache keeps %.0f bytes a target, more than the memo's share (%d bytes) plus 1 KiB", newPer, budget/n)
	}
}

func sha256Of(t *testing.T, path string) [32]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
