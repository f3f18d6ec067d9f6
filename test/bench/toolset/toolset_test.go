package toolset

import (
	"bytes"
	"testing"

	"github.com/driftd/driftd/internal/benchgen"
)

func TestSetZeroIsBenchgen(t *testing.T) {
	if !bytes.Equal(Manifest(0, 5), benchgen.Manifest(5)) {
		t.Fatal("set 0 differs from benchgen.Manifest")
	}
}

func TestSetsAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for s := 0; s < 5; s++ {
		for _, tl := range Tools(s, 50) {
			if seen[string(tl)] {
				t.Fatalf("set %d repeats a tool", s)
			}
			seen[string(tl)] = true
		}
	}
}
