package state

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// TestDigest gives SHA-256's answer, remembered or not, for more
// definitions than the memo holds and for bytes one apart.
func TestDigest(t *testing.T) {
	defer digests.Reset()
	for round := range 2 {
		for i := range 40000 {
			b := []byte(fmt.Sprintf(`{"name":"t%d"}`, i))
			if got, want := digest(b), sha256.Sum256(b); got != want {
				t.Fatalf("round %d, definition %d: %x, want %x", round, i, got, want)
			}
		}
	}
	if n := digests.Len(); n == 0 || n > 32768 {
		t.Errorf("%d digests remembered, at most 32,768", n)
	}
	a, b := []byte(`{"name":"a"}`), []byte(`{"name":"b"}`)
	for range 2 {
		if digest(a) != sha256.Sum256(a) || digest(b) != sha256.Sum256(b) {
			t.Fatal("a remembered digest answered for other bytes")
		}
	}
}
