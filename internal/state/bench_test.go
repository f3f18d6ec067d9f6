package state

import (
	"fmt"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
)

// BenchmarkApplyUnchanged is the steady state of one target with 200 tools
// and a few open findings: no write, no snapshot read, (almost) no garbage.
func BenchmarkApplyUnchanged(b *testing.B) {
	served := make([]Tool, 200)
	for i := range served {
		served[i] = mkTool(fmt.Sprintf("tool_%03d", i), "a")
	}
	var findings []catalogue.Finding
	for i := range 10 {
		findings = append(findings, mkFinding("t", catalogue.DriftSchema, served[i].Name))
	}
	st, _ := apply(testCaches, NewState("t"), t0, findings, served, true, true, 0, nil)
	saved(st)
	loads := 0
	load := loaderCount(served, &loads)
	b.ReportAllocs()
	for b.Loop() {
		next, tr := apply(testCaches, st, t0, findings, served, true, true, 0, load)
		if tr.Changed || next != st {
			b.Fatal("steady state changed")
		}
	}
	if loads != 0 {
		b.Fatalf("steady state read the snapshot %d times", loads)
	}
}
