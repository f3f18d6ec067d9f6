package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// buildHashes builds the set of names and the digests of the strings
// beside them.
func buildHashes(pairs ...string) Hashes {
	b := newHashesBuilder(len(pairs) / 2)
	for i := 0; i < len(pairs); i += 2 {
		b.set(pairs[i], sha256.Sum256([]byte(pairs[i+1])))
	}
	return b.done()
}

func has(h Hashes, name string) bool { _, ok := h.Get(name); return ok }

func hexOf(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }

// TestHashesShared: equal sets built apart are one set, unequal ones are
// not, and the JSON form round-trips to the shared set.
func TestHashesShared(t *testing.T) {
	a := buildHashes("search", "h1", "fetch", "h2")
	b := buildHashes("fetch", "h2", "search", "h1")
	c := buildHashes("fetch", "h2", "search", "h3")
	if a.s != b.s {
		t.Error("two targets serving the same set hold two copies")
	}
	if a.s == c.s {
		t.Error("sets that differ in a hash are one")
	}
	if v, ok := c.Get("search"); !ok || v != sha256.Sum256([]byte("h3")) || c.Len() != 2 || !has(c, "fetch") || has(c, "fetc") {
		t.Errorf("Get(search) = %x %v, Len %d", v, ok, c.Len())
	}
	raw, err := json.Marshal(a)
	if want := `{"fetch":"` + hexOf("h2") + `","search":"` + hexOf("h1") + `"}`; err != nil || string(raw) != want {
		t.Fatalf("MarshalJSON = %s, %v; want %s", raw, err, want)
	}
	var back Hashes
	if err := json.Unmarshal(raw, &back); err != nil || back.s != a.s {
		t.Errorf("read back: %v, shared %v", err, back.s == a.s)
	}
	var empty Hashes
	if err := json.Unmarshal([]byte(`null`), &empty); err != nil || empty.Len() != 0 || func() bool { _, ok := empty.Get("x"); return ok }() {
		t.Errorf("null: %v, %d names", err, empty.Len())
	}
	if raw, _ := json.Marshal(Hashes{}); string(raw) != `{}` {
		t.Errorf("empty set written as %s", raw)
	}
	// A value that is no digest matches no definition, and the file
	// still reads.
	var odd Hashes
	if err := json.Unmarshal([]byte(`{"x":"not hex","y":"abcd"}`), &odd); err != nil || odd.Len() != 2 {
		t.Fatalf("odd values: %v, %d names", err, odd.Len())
	}
	if v, _ := odd.Get("y"); v != ([sha256.Size]byte{}) {
		t.Errorf("a short hex value read as %x", v)
	}
}

// TestHashesFirstWins: a name listed twice keeps its first digest, as the
// served set's first definition is the one compared.
func TestHashesFirstWins(t *testing.T) {
	h := buildHashes("b", "1", "a", "2", "b", "3")
	if v, _ := h.Get("b"); v != sha256.Sum256([]byte("1")) || h.Len() != 2 || h.Names()[0] != "a" {
		t.Errorf("b = %x, names %v", v, h.Names())
	}
}

// TestHashesForgotten: a set no target holds is freed and leaves the
// interning table.
func TestHashesForgotten(t *testing.T) {
	before := tableLen()
	func() {
		for i := range 100 {
			_ = buildHashes(fmt.Sprint("tool", i), "h")
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for tableLen() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := tableLen(); n > before {
		t.Errorf("%d sets no one holds are still in the table (%d before)", n-before, before)
	}
}

func tableLen() int {
	sets.Lock()
	defer sets.Unlock()
	return len(sets.m)
}
