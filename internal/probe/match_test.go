package probe

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/driftd/driftd/internal/mcp"
)

// matchByMaps is matchNames's general case alone, the reference for its
// shortcut.
func matchByMaps(declared, served []mcp.Tool) ([]int, []string) {
	first := map[string]int{}
	for i, t := range served {
		if _, ok := first[t.Name]; !ok {
			first[t.Name] = i
		}
	}
	pairs := make([]int, len(declared))
	seen := map[string]bool{}
	for k, d := range declared {
		seen[d.Name] = true
		pairs[k] = -1
		if i, ok := first[d.Name]; ok {
			pairs[k] = i
		}
	}
	var undeclared []string
	for _, t := range served {
		if !seen[t.Name] {
			seen[t.Name] = true
			undeclared = append(undeclared, t.Name)
		}
	}
	return pairs, undeclared
}

func TestMatchNames(t *testing.T) {
	named := func(names ...string) []mcp.Tool {
		out := make([]mcp.Tool, len(names))
		for i, n := range names {
			out[i] = mcp.Tool{Name: n}
		}
		return out
	}
	cases := [][2][]mcp.Tool{
		{named("a", "b", "c"), named("a", "b", "c")},
		{named("a"), named("a", "a")},
		{named("a", "b"), named("b", "a")},
		{named("a", "b"), named("a")},
		{named("a"), named("a", "b", "b")},
		{nil, named("x")},
		{named("x"), nil},
		{nil, nil},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(distinct bool) []mcp.Tool {
		var names []string
		for range r.IntN(6) {
			name := string(rune('a' + r.IntN(4)))
			if !distinct || !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return named(names...)
	}
	for range 200 {
		// Declared names are distinct, as a manifest's are; served ones
		// may repeat.
		d := pick(true)
		cases = append(cases, [2][]mcp.Tool{d, slices.Clone(d)}, [2][]mcp.Tool{d, pick(false)})
	}
	for _, c := range cases {
		gotPairs, gotUndeclared := matchNames(c[0], c[1])
		if gotPairs == nil { // the same order: tool k is served as tool k
			if !sameOrder(c[0], c[1]) {
				t.Errorf("declared %v, served %v: no pairs, but not in the same order", c[0], c[1])
			}
			for k := range c[0] {
				gotPairs = append(gotPairs, k)
			}
		}
		wantPairs, wantUndeclared := matchByMaps(c[0], c[1])
		if !slices.Equal(gotPairs, wantPairs) || !slices.Equal(gotUndeclared, wantUndeclared) {
			t.Errorf("declared %v, served %v: pairs %v undeclared %v, want %v %v", c[0], c[1], gotPairs, gotUndeclared, wantPairs, wantUndeclared)
		}
	}
}
