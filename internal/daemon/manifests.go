package daemon

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/memo"
	"github.com/driftd/driftd/internal/probe"
)

// manifestCache reads the targets' manifest files. Per file it keeps what
// says whether the file is the one read last time — its size,
// modification time and the SHA-256 of its bytes — and nothing of its
// size: the parsed manifests live in the program's byte-bounded memo
// (probe.Caches.Manifests), shared by content hash between the targets
// that declare one file or equal ones. A file whose size or time changed
// is read again at the next run (a rewritten manifest, a ConfigMap swap);
// one whose parsed form the memo let go is read again, hashed, and
// parsed if its bytes are still those hashed (docs/scaling.md).
type manifestCache struct {
	mu     sync.Mutex
	byPath map[string]cachedManifest
	parsed *memo.Memo[[32]byte, *manifest.Manifest]
	// quiet is probe.QuietTool of the program's caches.
	quiet func(mcp.Tool) bool
	// reads counts the files read, for tests: a run served what its
	// manifest declares reads none.
	reads atomic.Int64
}

type cachedManifest struct {
	size int64
	mod  time.Time
	hash [32]byte
	// tools is the manifest's manifest.ToolsDigest and count its tools,
	// when it declares tools only (indexed): a run served a listing of
	// that digest needs no more of the manifest (resolve).
	tools   [32]byte
	count   int
	indexed bool
	// raw is the manifest's manifest.RawDigest and quiet its tools'
	// Quiet answers, one bit each: a listing byte for byte the manifest's
	// tools is not checked again where the manifest's were found quiet.
	// They are learnt by the first run that uses the manifest (learnQuiet),
	// not when it is read: the answers compile every schema, which a
	// fleet's reload should not wait for. Nil until then.
	raw   [32]byte
	quiet []uint64
	// last is set only while the file is broken (it cannot be read or
	// parsed): its last good version, held here so that its targets are
	// compared against it however long the file stays broken, whatever
	// the memo lets go. Nil while the file reads.
	last *manifest.Manifest
}

// maxManifestBytes bounds a manifest read from disk: far above any a
// server's listing could fill (a run reads at most max_run_bytes), so it
// only stops a file that is not a manifest from filling memory.
const maxManifestBytes = 1 << 30

// newManifestCache returns a cache keeping parsed manifests in c's memo
// (c.Manifests(); a nil c, or a memo of no budget, keeps none: every load
// parses).
func newManifestCache(c *probe.Caches) *manifestCache {
	return &manifestCache{byPath: map[string]cachedManifest{}, parsed: c.Manifests(), quiet: probe.QuietTool(c)}
}

func (c *manifestCache) load(path string) (*manifest.Manifest, error) {
	m, _, err := c.read(path)
	return m, err
}

// read returns the manifest at path, and the last good version of it
// when the file cannot be read or parsed now (nil when none is known).
func (c *manifestCache) read(path string) (*manifest.Manifest, *manifest.Manifest, error) {
	c.mu.Lock()
	e, known := c.byPath[path]
	c.mu.Unlock()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, c.broken(path, e, known), err
	}
	same := known && e.size == fi.Size() && e.mod.Equal(fi.ModTime())
	if same {
		if m, ok := c.parsed.Get(e.hash); ok {
			return m, nil, nil
		}
	}
	// A manifest named by a target file may be anything in its directory:
	// read only if it is a regular file, so a FIFO cannot hold a reload.
	c.reads.Add(1)
	b, err := atomicfile.ReadFile(path, maxManifestBytes)
	if err != nil {
		return nil, c.broken(path, e, known), err
	}
	sum := sha256.Sum256(b)
	m, ok := c.parsed.Get(sum)
	if !ok {
		// Parse the bytes that were hashed: reading the file again could
		// file a newer content under the old hash. The manifest keeps
		// none of b (manifest.FromBytes), which goes when this returns.
		if m, err = manifest.FromBytes(path, b); err != nil {
			return nil, c.broken(path, e, known), err
		}
		c.parsed.Put(sum, m)
	}
	switch {
	case known && e.hash == sum && e.last == nil:
		// The same bytes again (the memo had let them go): the digests
		// and answers are those worked out already.
		e.size, e.mod = fi.Size(), fi.ModTime()
	default:
		e = cachedManifest{size: fi.Size(), mod: fi.ModTime(), hash: sum}
		if m.ToolsOnly() {
			e.tools, e.indexed = manifest.ToolsDigest(m.Tools)
			e.count = len(m.Tools)
			e.raw = manifest.RawDigest(m.Tools)
		}
	}
	c.mu.Lock()
	c.byPath[path] = e
	c.mu.Unlock()
	return m, nil, nil
}

// current reports whether the file at path is the version that loaded
// last, as far as its size and time say, and that version is not
// broken: a reload need not read it again to know it loads. The memo
// may have let its parsed form go; a run reads it again if it needs it.
func (c *manifestCache) current(path string) bool {
	c.mu.Lock()
	e, known := c.byPath[path]
	c.mu.Unlock()
	if !known || e.last != nil {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Size() == e.size && fi.ModTime().Equal(e.mod)
}

// check is load for a reload's checks of target t (targetProblems): a
// manifest file that is current, of a target that plans no calls, is not
// read again, and the manifest is nil: nothing is to be checked in it.
// A fleet's reload then costs a stat per manifest, not a parse.
func (c *manifestCache) check(t config.Target) (*manifest.Manifest, error) {
	if !probe.PlansCalls(t) && c.current(t.Manifest) {
		return nil, nil
	}
	return c.load(t.Manifest)
}

// indexed returns the digest entry of the file at path when a run can
// decide against it: the file's size and time are those of the version
// read last, which declares tools only (and no call plans the run, which
// the caller checks: probe.PrepareResolved). ok is false otherwise; the
// run then loads the manifest first (loadOrLast).
func (c *manifestCache) indexed(path string) (e cachedManifest, ok bool) {
	c.mu.Lock()
	e, known := c.byPath[path]
	c.mu.Unlock()
	if !known || !e.indexed || e.last != nil {
		return e, false
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != e.size || !fi.ModTime().Equal(e.mod) {
		return e, false
	}
	return e, true
}

// resolve is the declared manifest of a run of the file at path, whose
// digest entry was e (indexed) when the run started, given the served
// tools: servedAs's, else the file's, as loadOrLast gives it (with the
// error when the file broke meanwhile).
func (c *manifestCache) resolve(path string, e cachedManifest, served []mcp.Tool) (*manifest.Manifest, error) {
	if m, ok := c.servedAs(path, e, served); ok {
		return m, nil
	}
	return c.loadOrLast(path)
}

// servedAs is the manifest of entry e when a run needs no file to
// compare served against it: the parsed manifest while the memo keeps
// it; else, for a listing of the manifest's digest, manifest.Served —
// the listing is what was declared. ok is false otherwise.
func (c *manifestCache) servedAs(path string, e cachedManifest, served []mcp.Tool) (*manifest.Manifest, bool) {
	if m, ok := c.parsed.Get(e.hash); ok {
		if e.quiet == nil {
			c.learnQuiet(path, e.hash, m)
		}
		return m, true
	}
	if e.last != nil {
		return e.last, true
	}
	if d, ok := manifest.ToolsDigest(served); ok && e.indexed && d == e.tools {
		if manifest.RawDigest(served) != e.raw {
			return manifest.Served(path, served, nil), true
		}
		// Byte for byte the declared tools: the manifest's answers are
		// the listing's, known or learnt now.
		if e.quiet == nil {
			m := manifest.Served(path, served, nil)
			c.learnQuiet(path, e.hash, m)
			return m, true
		}
		quiet := make([]bool, len(served))
		for i := range quiet {
			quiet[i] = e.quiet[i/64]&(1<<(i%64)) != 0
		}
		return manifest.Served(path, served, quiet), true
	}
	return nil, false
}

// learnQuiet records on the entry of the file at path, while it is the
// version of the given hash, m's Quiet answers, when it has none yet (the
// caller's copy of the entry had none: a run whose entry knows them does
// not ask): m
// is that version's tools, byte for byte. Working them out costs what the
// run's checks of m's tools would; it is done once per version of a file,
// by its first run, and every later run of every target declaring it
// checks only the tools served otherwise.
func (c *manifestCache) learnQuiet(path string, hash [32]byte, m *manifest.Manifest) {
	c.mu.Lock()
	e, ok := c.byPath[path]
	c.mu.Unlock()
	if !ok || e.hash != hash || !e.indexed || e.quiet != nil || len(m.Tools) != e.count {
		return
	}
	bits := make([]uint64, (len(m.Tools)+63)/64)
	for i := range m.Tools {
		if m.Quiet(i, c.quiet) {
			bits[i/64] |= 1 << (i % 64)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.byPath[path]; ok && cur.hash == hash && cur.quiet == nil {
		cur.quiet = bits
		c.byPath[path] = cur
	}
}

// lastIndexed is the entry of the last version of the file at path that
// loaded, when that version declares tools only: a run whose file is
// broken, and whose last good manifest the memo let go, can still be
// compared against it when the server serves what it declared.
func (c *manifestCache) lastIndexed(path string) (cachedManifest, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byPath[path]
	return e, ok && e.indexed
}

// broken returns the last good version of the file at path, which was e
// (known) before it broke, and holds it on the path's entry until the
// file reads again. The last good version is the memo's, if it still
// has it; else there is none to hold, and a run compares against the
// last good version's digest (lastIndexed): docs/daemon.md.
func (c *manifestCache) broken(path string, e cachedManifest, known bool) *manifest.Manifest {
	if !known {
		return nil
	}
	last := e.last
	if last == nil {
		var ok bool
		if last, ok = c.parsed.Get(e.hash); !ok {
			return nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.byPath[path]; ok && cur.hash == e.hash {
		cur.last = last
		c.byPath[path] = cur
	}
	return last
}

// loadOrLast is load, except that when the file cannot be read or parsed
// now, it returns the last version of it that could be, with the error:
// a manifest that breaks on disk leaves its targets compared against the
// last good one, not failing (docs/daemon.md). The manifest is nil when
// no version of the file has loaded since the daemon started, or when
// the memo had let the last one go when the file broke (then its digest
// may still decide a run: lastIndexed).
func (c *manifestCache) loadOrLast(path string) (*manifest.Manifest, error) {
	m, last, err := c.read(path)
	if err == nil {
		return m, nil
	}
	if last == nil {
		if c.known(path) {
			return nil, fmt.Errorf("%w (its last good version is no longer cached)", err)
		}
		return nil, err
	}
	return last, err
}

// known reports whether a version of the file at path has loaded.
func (c *manifestCache) known(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byPath[path]
	return ok
}
