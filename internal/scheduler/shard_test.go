package scheduler

import (
	"fmt"
	"testing"
)

func TestInShardPartitions(t *testing.T) {
	for n := 1; n <= 7; n++ {
		sizes := make([]int, n)
		for k := range 1000 {
			name := fmt.Sprintf("target-%d", k)
			owners := 0
			for i := range n {
				if InShard(name, i, n) {
					owners++
					sizes[i]++
				}
			}
			if owners != 1 {
				t.Fatalf("%s is in %d of %d shards, want exactly 1", name, owners, n)
			}
		}
		for i, size := range sizes {
			if n > 1 && size == 0 {
				t.Errorf("shard %d/%d is empty over 1000 names", i, n)
			}
		}
	}
	if !InShard("anything", 0, 0) || !InShard("anything", 5, 1) {
		t.Error("n <= 1 must mean everything")
	}
	if InShard("anything", -1, 3) || InShard("anything", 3, 3) {
		t.Error("an index outside [0, n) owns nothing")
	}
}

// The split must not change between versions, or replicas upgraded one by
// one would disagree about who probes what.
func TestInShardIsStable(t *testing.T) {
	// FNV-1a 64 of "orders" is 0x00125d9250be8b4c, worked out by hand
	// from the algorithm's definition: 0 mod 4 and 1 mod 3.
	if !InShard("orders", 0, 4) || !InShard("orders", 1, 3) {
		t.Error(`"orders" moved shard: the hash is no longer FNV-1a 64`)
	}
}

func TestParseShard(t *testing.T) {
	good := []struct {
		in   string
		i, n int
	}{{"0/1", 0, 1}, {"0/3", 0, 3}, {"2/3", 2, 3}, {"09/10", 9, 10},
		{"driftd-0/3", 0, 3}, {"driftd-2/3", 2, 3}, {"mcp-drift.prod-11/12", 11, 12}}
	for _, tc := range good {
		i, n, err := ParseShard(tc.in)
		if err != nil || i != tc.i || n != tc.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v; want %d, %d", tc.in, i, n, err, tc.i, tc.n)
		}
	}
	for _, in := range []string{"", "1", "/", "1/", "/3", "3/3", "4/3", "0/0", "-1/3", "+1/3", "1/-3", " 1/3", "1/3/5", "a/b", "1.0/3",
		"driftd-3/3", "driftd-/3", "driftd/3", "-1/3", "Driftd-1/3", "driftd-1a/3", "driftd-+1/3"} {
		if _, _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q): want an error", in)
		}
	}
}
