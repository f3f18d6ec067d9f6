package benchgen

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The fleet's claims: tool counts in 5..100 with a mean near 30, about 2 %
// drifting, manifests that parse to their count, tools no two targets share.
func TestFleetSpread(t *testing.T) {
	const n = 10_000
	sum, drifting, small, large := 0, 0, 0, 0
	for i := range n {
		f := Fleet(i)
		if f.Tools < FleetMinTools || f.Tools > FleetMaxTools {
			t.Fatalf("target %d has %d tools, want %d..%d", i, f.Tools, FleetMinTools, FleetMaxTools)
		}
		if f != Fleet(i) {
			t.Fatalf("target %d is not deterministic", i)
		}
		sum += f.Tools
		if f.Drifting {
			drifting++
		}
		if f.Tools <= 10 {
			small++
		}
		if f.Tools >= 80 {
			large++
		}
	}
	if mean := float64(sum) / n; mean < 27 || mean > 33 {
		t.Errorf("mean tools per target %.1f, want about 30", mean)
	}
	if drifting < n/100 || drifting > 3*n/100 {
		t.Errorf("%d of %d targets drift, want about 2 %%", drifting, n)
	}
	if small == 0 || large == 0 {
		t.Errorf("no spread: %d targets with ≤ 10 tools, %d with ≥ 80", small, large)
	}
}

func TestFleetManifestAndServed(t *testing.T) {
	seen := map[string]int{}
	var drifted, steady bool
	for i := range 60 {
		var m struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(FleetManifest(i), &m); err != nil {
			t.Fatal(err)
		}
		f := Fleet(i)
		if len(m.Tools) != f.Tools {
			t.Fatalf("target %d: manifest has %d tools, want %d", i, len(m.Tools), f.Tools)
		}
		for _, tl := range m.Tools {
			if j, dup := seen[string(tl)]; dup {
				t.Fatalf("targets %d and %d share a tool", j, i)
			}
			seen[string(tl)] = i
		}
		served := FleetServed(i, m.Tools)
		same := bytes.Equal(served[0], m.Tools[0])
		if f.Drifting == same {
			t.Fatalf("target %d: drifting %v but first tool served unchanged %v", i, f.Drifting, same)
		}
		drifted = drifted || f.Drifting
		steady = steady || !f.Drifting
		for j := 1; j < len(served); j++ {
			if !bytes.Equal(served[j], m.Tools[j]) {
				t.Fatalf("target %d: tool %d served changed", i, j)
			}
		}
	}
	if !drifted || !steady {
		t.Fatalf("the first 60 targets: drifting seen %v, steady seen %v", drifted, steady)
	}
}
