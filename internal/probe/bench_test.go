package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp"
)

// benchTool returns a tool whose input and output schemas have about 50
// schema nodes; variant changes a bound, an enum and a required list.
func benchTool(i int, variant bool) mcp.Tool {
	max, status, req := 100, `"open","shipped","cancelled"`, `["customer"]`
	if variant {
		max, status, req = 50, `"open","shipped"`, `["customer","region"]`
	}
	addr := `{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"},"country":{"type":"string","enum":["de","fr","us"]}},"required":["city"]}`
	in := fmt.Sprintf(`{"type":"object","$defs":{"addr":%s},"properties":{
		"customer":{"type":"string","minLength":1,"maxLength":64},
		"region":{"type":"string"},
		"status":{"type":"string","enum":[%s]},
		"limit":{"type":"integer","minimum":1,"maximum":%d},
		"tags":{"type":"array","items":{"type":"string"},"maxItems":10},
		"billing":{"$ref":"#/$defs/addr"},
		"shipping":%s,
		"filter":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"since":{"type":"string","format":"date-time"},
		"flags":{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"boolean"},"c":{"type":["integer","null"]}}}
	},"required":%s,"additionalProperties":false}`, addr, status, max, addr, req)
	out := `{"type":"object","properties":{"hits":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"total":{"type":"number"},"state":{"type":"string","enum":["a","b"]}},"required":["id"]}},"next":{"type":["string","null"]},"count":{"type":"integer","minimum":0}},"required":["hits"]}`
	raw := fmt.Sprintf(`{"name":"tool_%d","description":"d","inputSchema":%s,"outputSchema":%s}`, i, in, out)
	t, err := mcp.ParseTool(json.RawMessage(raw))
	if err != nil {
		panic(err)
	}
	return t
}

func benchSets(n int, changed bool) (declared, served []mcp.Tool) {
	for i := 0; i < n; i++ {
		declared = append(declared, benchTool(i, false))
		served = append(served, benchTool(i, changed))
	}
	return declared, served
}

func BenchmarkCompareSets(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, changed := range []bool{false, true} {
			declared, served := benchSets(n, changed)
			b.Run(fmt.Sprintf("tools=%d/changed=%v", n, changed), func(b *testing.B) {
				for b.Loop() {
					compareSets(declared, served, false)
				}
			})
		}
	}
}

// TestDiffScaling prints the schema-diff budget of DESIGN §14, measured side
// by side in one run: 1,000 tools of ~50-node schemas (every tool changed,
// the worst case) and 10,000, with their ratio. It asserts nothing about
// time; run it with DRIFTD_BENCH=1 (make bench).
func TestDiffScaling(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("set DRIFTD_BENCH=1 (make bench)")
	}
	per := map[int]time.Duration{}
	for _, n := range []int{1000, 10000} {
		declared, served := benchSets(n, true)
		if got := len(compareSets(declared, served, false)); got == 0 {
			t.Fatal("benchmark schemas produced no changes")
		}
		res := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				compareSets(declared, served, false)
			}
		})
		per[n] = time.Duration(res.NsPerOp())
	}
	fmt.Printf("schema diff, every tool changed: 1,000 tools %v, 10,000 tools %v; ratio %.2f (budget: 1,000 < 30ms, ratio < 10)\n",
		per[1000].Round(time.Microsecond), per[10000].Round(time.Microsecond), float64(per[10000])/float64(per[1000]))
}

// TestDriftHundredThousand prints what drift costs over 100,000 served
// tiny tools against one declared (the hostile listing of issue 13: it was
// quadratic and took 31 s); the budget is under 1 s of CPU. DRIFTD_BENCH=1.
func TestDriftHundredThousand(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("set DRIFTD_BENCH=1 (make bench)")
	}
	served := make([]mcp.Tool, 100_000)
	for i := range served {
		tl, err := mcp.ParseTool(json.RawMessage(fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		served[i] = tl
	}
	declared := served[:1]
	if got := len(compareSets(declared, served, false)); got != len(served)-1 {
		t.Fatalf("%d findings, want %d", got, len(served)-1)
	}
	res := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			compareSets(declared, served, false)
		}
	})
	fmt.Printf("drift over 100,000 served tools (99,999 undeclared): %v per run (budget: < 1s of CPU)\n", time.Duration(res.NsPerOp()).Round(time.Millisecond))
}
