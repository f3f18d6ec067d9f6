package state

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
)

func buildHashes(pairs ...string) Hashes {
	b := newHashesBuilder(len(pairs) / 2)
	for i := 0; i < len(pairs); i += 2 {
		b.set(pairs[i], pairs[i+1])
	}
	return b.done()
}

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
	if v, ok := c.Get("search"); !ok || v != "h3" || c.Len() != 2 {
		t.Errorf("Get(search) = %q %v, Len %d", v, ok, c.Len())
	}
	raw, err := json.Marshal(a)
	if err != nil || string(raw) != `{"fetch":"h2","search":"h1"}` {
		t.Fatalf("MarshalJSON = %s, %v", raw, err)
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
