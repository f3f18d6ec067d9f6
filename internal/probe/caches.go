package probe

import (
	"crypto/sha256"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/memo"
	"github.com/driftd/driftd/internal/schema"
)

// DefaultCacheBytes is what a program's caches together may hold when it
// names no other figure: the schema engine's parses, checks and diffs, the
// served definitions' digests, the input schemas' root types, the decoded
// answers and the declared manifests parsed from files.
const DefaultCacheBytes = 64 << 20

// Caches are every answer driftd remembers from the bytes it meets again
// and again, keyed by content and bounded by bytes, all on one policy
// (memo.Memo: random eviction, an entry over a sixteenth of its budget
// computed but not kept). A program builds one where it starts — the
// daemon in daemon.New, a one-shot command once per process — and passes
// it down: to Run and Diff in Options, to state.ApplyWith. No package
// keeps a cache of its own, so two daemons in one process share none.
//
// A nil *Caches keeps nothing: every answer is computed. A Caches is safe
// for concurrent use.
type Caches struct {
	schema *schema.Cache
	// digests is the SHA-256 of a served definition under its
	// jsonscan.Sum, for the state's ToolHashes (state.ApplyWith).
	digests *memo.Memo[jsonscan.Sum, [sha256.Size]byte]
	// objectRoots is whether an input schema's root "type" is "object",
	// under its Sum (rootIsObject).
	objectRoots *memo.Memo[jsonscan.Sum, bool]
	// decoded is what response bodies and tools/list results decoded to,
	// under the Sum of their bytes (mcp.Decoded, through mcp.Limits).
	decoded *mcp.Decoded
	// manifests is the declared manifests parsed from files, under the
	// SHA-256 of the file's bytes (the daemon's manifest cache): a
	// target keeps the hash, not the manifest, so what the fleet's
	// manifests hold is this share, not the sum of their sizes.
	manifests *memo.Memo[[sha256.Size]byte, *manifest.Manifest]
}

// Each cache's share of the total, in 64ths: the schema engine's answers
// and the decoded answers are most of the bytes a daemon reuses (a
// decoded 50-tool listing keeps about twice its 150 KB); the digests and
// root types are small fixed-size answers, some 80 bytes each.
//
// The parsed manifests take an eighth: 8 MiB of the default 64 MiB, each
// weighed twice its parsed size (manifestWeight): some 40 manifests of 30
// benchgen tools (~100 KB parsed each), some 500 of 30 small tools, and
// none over 512 KiB of weight (a memo keeps no entry over a sixteenth of
// its share): about 80 benchgen tools. A larger manifest is read again
// by a run that needs it (docs/scaling.md), or kept by a larger
// --cache.max-bytes.
const (
	digestShare   = 2 // 1/32: 26,000 definitions in the default 64 MiB
	rootsShare    = 1 // 1/64
	decodedShare  = 16
	manifestShare = 8
	schemaShare   = 64 - digestShare - rootsShare - decodedShare - manifestShare

	// digestWeight and rootWeight are an entry's bytes: its key, its
	// value and its map slot.
	digestWeight = 80
	rootWeight   = 64
)

// NewCaches returns the caches of one program, which together keep at most
// totalBytes (DefaultCacheBytes when totalBytes <= 0), split between them
// by a fixed ratio.
func NewCaches(totalBytes int) *Caches {
	if totalBytes <= 0 {
		totalBytes = DefaultCacheBytes
	}
	part := totalBytes / 64
	return &Caches{
		schema:      schema.NewCache(part * schemaShare),
		digests:     memo.New[jsonscan.Sum](part*digestShare, func([sha256.Size]byte) int { return digestWeight }),
		objectRoots: memo.New[jsonscan.Sum](part*rootsShare, func(bool) int { return rootWeight }),
		decoded:     mcp.NewDecoded(part * decodedShare),
		manifests:   memo.New[[sha256.Size]byte](part*manifestShare, manifestWeight),
	}
}

// Decoded is the memo of decoded answers (nil when c is).
func (c *Caches) Decoded() *mcp.Decoded {
	if c == nil {
		return nil
	}
	return c.decoded
}

// Schema is the schema engine's cache (nil when c is).
func (c *Caches) Schema() *schema.Cache {
	if c == nil {
		return nil
	}
	return c.schema
}

// Digest returns sha256.Sum256(b), remembered under b's jsonscan.Sum: the
// state records each served tool by that digest, which must be the same
// in every process, and a target's definitions are almost always the
// ones it served last time, or another replica's; the Sum reads six times
// as fast as SHA-256.
func (c *Caches) Digest(b []byte) [sha256.Size]byte {
	if c == nil {
		return sha256.Sum256(b)
	}
	return c.digests.Do(jsonscan.SumOf(b), func() [sha256.Size]byte { return sha256.Sum256(b) })
}

// Used is the bytes all the caches account for; Budget bounds it.
func (c *Caches) Used() int {
	if c == nil {
		return 0
	}
	return c.schema.Used() + c.digests.Used() + c.objectRoots.Used() + c.decoded.Used() + c.manifests.Used()
}

func (c *Caches) Budget() int {
	if c == nil {
		return 0
	}
	return c.schema.Budget() + c.digests.Budget() + c.objectRoots.Budget() + c.decoded.Budget() + c.manifests.Budget()
}

// Reset forgets everything, so a benchmark can measure the cold path.
func (c *Caches) Reset() {
	if c == nil {
		return
	}
	c.schema.Reset()
	c.digests.Reset()
	c.objectRoots.Reset()
	c.decoded.Reset()
	c.manifests.Reset()
}

// Manifests is the memo of declared manifests parsed from files, under
// the SHA-256 of the bytes they were parsed from (nil when c is: then
// every run parses its manifest again). Its owner, the daemon's manifest
// cache, keeps per file only that hash, its size and time, and reads the
// file again when the memo has let the manifest go.
func (c *Caches) Manifests() *memo.Memo[[sha256.Size]byte, *manifest.Manifest] {
	if c == nil {
		return nil
	}
	return c.manifests
}

// manifestWeight is what a parsed manifest keeps alive: itself
// (manifest.Manifest.Weight) and as much again for what its runs
// remember on it (manifest.Compared's findings of drifted tools, bounded
// by its size; PostureClean's flags).
func manifestWeight(m *manifest.Manifest) int { return 2*m.Weight() + 96 }

// roots is the root-type memo (nil when c is).
func (c *Caches) roots() *memo.Memo[jsonscan.Sum, bool] {
	if c == nil {
		return nil
	}
	return c.objectRoots
}
