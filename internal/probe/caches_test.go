package probe

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/driftd/driftd/internal/mcp"
)

// TestCachesDigest gives SHA-256's answer, remembered or not, for more
// definitions than the digests' share holds and for bytes one apart, and
// keeps within the share.
func TestCachesDigest(t *testing.T) {
	c := NewCaches(1 << 20) // a 32 KiB share: some 400 digests
	for round := range 2 {
		for i := range 4000 {
			b := []byte(fmt.Sprintf(`{"name":"t%d"}`, i))
			if got, want := c.Digest(b), sha256.Sum256(b); got != want {
				t.Fatalf("round %d, definition %d: %x, want %x", round, i, got, want)
			}
		}
	}
	if n, used, budget := c.digests.Len(), c.digests.Used(), c.digests.Budget(); n == 0 || used > budget {
		t.Errorf("%d digests remembered, %d bytes of %d", n, used, budget)
	}
	a, b := []byte(`{"name":"a"}`), []byte(`{"name":"b"}`)
	for range 2 {
		if c.Digest(a) != sha256.Sum256(a) || c.Digest(b) != sha256.Sum256(b) {
			t.Fatal("a remembered digest answered for other bytes")
		}
	}
}

// TestCachesBudget: the shares add up to at most the total, and the total
// defaults to DefaultCacheBytes.
func TestCachesBudget(t *testing.T) {
	for _, total := range []int{0, 1 << 20, 64 << 20, 1<<30 + 7} {
		c := NewCaches(total)
		want := total
		if want <= 0 {
			want = DefaultCacheBytes
		}
		if b := c.Budget(); b > want || b < want-64 {
			t.Errorf("NewCaches(%d): budget %d, want %d", total, b, want)
		}
	}
}

// TestCachesApart: two programs' caches in one process (two daemons, as
// tests run them) share nothing, and a nil Caches keeps nothing.
func TestCachesApart(t *testing.T) {
	tool, err := mcp.ParseTool(json.RawMessage(`{"name":"t","inputSchema":{"type":"object","properties":{"q":{"type":5}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := NewCaches(0), NewCaches(0)
	if fs := checkSchemasCompile(a, tool, 1); len(fs) != 1 {
		t.Fatalf("%d findings for a schema that does not compile, want 1", len(fs))
	}
	checkInputSchema(a, tool, 1)
	a.Digest(tool.Raw)
	if a.Used() == 0 || a.Schema().Len() != 1 || a.digests.Len() != 1 || a.objectRoots.Len() != 1 {
		t.Fatalf("a kept %d bytes: %d checks, %d digests, %d root types; want one of each",
			a.Used(), a.Schema().Len(), a.digests.Len(), a.objectRoots.Len())
	}
	if b.Used() != 0 {
		t.Fatalf("b holds %d bytes it never computed", b.Used())
	}
	var none *Caches
	if fs := checkSchemasCompile(none, tool, 1); len(fs) != 1 || none.Digest(tool.Raw) != sha256.Sum256(tool.Raw) || none.Used() != 0 {
		t.Error("a nil Caches does not compute as a kept one does")
	}
	none.Reset()
	a.Reset()
	if a.Used() != 0 {
		t.Errorf("after Reset: %d bytes", a.Used())
	}
}
