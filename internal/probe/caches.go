package probe

import (
	"crypto/sha256"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/memo"
	"github.com/driftd/driftd/internal/schema"
)

// DefaultCacheBytes is what a program's caches together may hold when it
// names no other figure: the schema engine's parses, checks and diffs, the
// served definitions' digests and the input schemas' root types.
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
}

// Each cache's share of the total, in 64ths: the schema engine's answers
// and the decoded answers are most of the bytes a daemon reuses (a
// decoded 50-tool listing keeps about twice its 150 KB); the digests and
// root types are small fixed-size answers, some 80 bytes each.
const (
	digestShare  = 2 // 1/32: 26,000 definitions in the default 64 MiB
	rootsShare   = 1 // 1/64
	decodedShare = 16
	schemaShare  = 64 - digestShare - rootsShare - decodedShare

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
	return c.schema.Used() + c.digests.Used() + c.objectRoots.Used() + c.decoded.Used()
}

func (c *Caches) Budget() int {
	if c == nil {
		return 0
	}
	return c.schema.Budget() + c.digests.Budget() + c.objectRoots.Budget() + c.decoded.Budget()
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
}

// roots is the root-type memo (nil when c is).
func (c *Caches) roots() *memo.Memo[jsonscan.Sum, bool] {
	if c == nil {
		return nil
	}
	return c.objectRoots
}
