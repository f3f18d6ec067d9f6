package mcp

import (
	"slices"
	"unsafe"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/memo"
)

// A daemon's targets mostly answer each run with the very bytes of their
// last answer, and the replicas of one server with each other's: a
// tools/list page of 37 tools (some 110 KB) is the same from run to run,
// and validating and locating it (jsonscan.Locate) was 14 % of the
// 10,000-target benchmark's CPU. locates remembers where Locate found the
// values of the bodies it validated, keyed by the body's jsonscan.Sum, so
// a body seen before is summed (about 12 GB/s) instead of scanned (about
// 0.6): the same spans, the same answer, since a Sum names the bytes.
// Only spans are kept, never a body: about 20 bytes a located value, 6 KB
// for that page, 4 MiB for the whole daemon.
var locates = memo.New[spanKey](4<<20, spansWeight)

// minMemoBody is the smallest body locate remembers: below it, a scan
// costs about what summing and a map lookup do.
const minMemoBody = 1 << 10

// locate is jsonscan.Locate(b, depth, nil) through the memo. The spans
// may be shared with other callers: they are read, never written.
func locate(b []byte, depth int) ([]jsonscan.Span, bool) {
	if len(b) < minMemoBody {
		return jsonscan.Locate(b, depth, nil)
	}
	return locateIn(locates, b, depth)
}

type spanKey struct {
	sum   jsonscan.Sum
	depth int
}

// spansWeight is an entry's spans, plus its key, slice header and map
// slot, rounded up.
func spansWeight(s []jsonscan.Span) int {
	return 96 + len(s)*int(unsafe.Sizeof(jsonscan.Span{}))
}

func locateIn(c *memo.Memo[spanKey, []jsonscan.Span], b []byte, depth int) ([]jsonscan.Span, bool) {
	k := spanKey{jsonscan.SumOf(b), depth}
	if spans, ok := c.Get(k); ok {
		return spans, true
	}
	spans, ok := jsonscan.Locate(b, depth, nil)
	if !ok {
		return spans, false // invalid JSON: nothing worth remembering
	}
	if c.Keeps(spans) { // a huge answer is neither kept nor copied
		spans = slices.Clone(spans) // Locate's growth left room: keep what is weighed
		c.Put(k, spans)
	}
	return spans, true
}
