package manifest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
)

// TestCompared: an answer is kept the second time in a row a served Sum
// is seen, and then returned for that Sum without comparing again;
// another Sum is compared anew and takes the slot; an answer not kept
// empties it; a zero Sum is never remembered.
func TestCompared(t *testing.T) {
	m := &Manifest{Tools: []mcp.Tool{{Name: "a"}, {Name: "b"}}}
	a, b := jsonscan.SumOf([]byte("A")), jsonscan.SumOf([]byte("B"))
	calls := 0
	ask := func(i int, served jsonscan.Sum, answer string) string {
		return Compared(m, i, served, func() string { calls++; return answer }, func(s string) int { return len(s) })
	}
	steps := []struct {
		i            int
		served       jsonscan.Sum
		answer, want string
		compared     bool
		why          string
	}{
		{0, a, "drift A", "drift A", true, "first sighting: compared, the Sum noted"},
		{0, a, "drift A", "drift A", true, "second sighting: compared, the answer kept"},
		{0, a, "ignored", "drift A", false, "third: remembered"},
		{1, a, "other tool", "other tool", true, "each declared tool has its own slot"},
		{0, b, "drift B", "drift B", true, "another Sum is compared"},
		{0, a, "drift A2", "drift A2", true, "and took the slot: A's answer is gone"},
		{0, a, "drift A2", "drift A2", true, "A seen twice again: kept"},
		{0, a, "ignored", "drift A2", false, "remembered"},
		{0, b, "", "", true, "no drift: not kept"},
		{0, a, "drift A3", "drift A3", true, "the slot was emptied, not left with A's answer"},
		{0, a, "drift A3", "drift A3", true, "kept"},
		{0, a, "ignored", "drift A3", false, "remembered"},
		{0, jsonscan.Sum{}, "x", "x", true, "a zero Sum is compared"},
		{0, jsonscan.Sum{}, "y", "y", true, "and never remembered"},
		{0, jsonscan.Sum{}, "z", "z", true, "however often"},
		{5, a, "out of range", "out of range", true, "a tool the manifest does not have"},
	}
	for n, s := range steps {
		before := calls
		if got := ask(s.i, s.served, s.answer); got != s.want || (calls > before) != s.compared {
			t.Fatalf("step %d (%s): got %q, compared %v; want %q, compared %v", n, s.why, got, calls > before, s.want, s.compared)
		}
	}
}

// TestComparedConcurrent: targets that share a manifest and are served
// different definitions of a tool take turns in its slot, and each always
// gets the answer for its own definition (go test -race checks the rest).
func TestComparedConcurrent(t *testing.T) {
	m := &Manifest{Tools: []mcp.Tool{{Name: "a"}}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprint("answer ", g)
			served := jsonscan.SumOf([]byte(want))
			for range 500 {
				got := Compared(m, 0, served, func() string { return want }, func(s string) int { return len(s) })
				if got != want {
					t.Errorf("served %q, got the answer %q", want, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestComparedBudget: a manifest remembers at most as many bytes of
// answers as its tools take (and minRememberBudget), however large the
// answers a server makes it compute; answers let go make room again.
func TestComparedBudget(t *testing.T) {
	m := &Manifest{Tools: make([]mcp.Tool, 8)}
	big := minRememberBudget / 4
	remembered := func(i int, served string) bool { // seen twice, kept, then remembered
		calls := 0
		for range 3 {
			Compared(m, i, jsonscan.SumOf([]byte(served)), func() int { calls++; return big }, func(w int) int { return w })
		}
		return calls == 2
	}
	for i := range 4 {
		if !remembered(i, "v1") {
			t.Fatalf("answer %d of %d bytes was not remembered, with %d in use of %d", i, big, m.compared.Load().used.Load(), minRememberBudget)
		}
	}
	if remembered(4, "v1") {
		t.Fatalf("a fifth answer was remembered past the budget: %d bytes in use of %d", m.compared.Load().used.Load(), minRememberBudget)
	}
	// Tool 0 is served a definition that did not drift: its answer is not
	// kept, and its slot lets go of the one before.
	Compared(m, 0, jsonscan.SumOf([]byte("v2")), func() int { return 0 }, func(w int) int { return w })
	if got := m.compared.Load().used.Load(); got != int64(3*big) {
		t.Fatalf("%d bytes in use after slot 0 was emptied, want %d", got, 3*big)
	}
	// Tool 4 was seen twice but not kept; seen again, it fits now.
	calls := 0
	for range 2 {
		Compared(m, 4, jsonscan.SumOf([]byte("v1")), func() int { calls++; return big }, func(w int) int { return w })
	}
	if calls != 1 {
		t.Fatalf("the room slot 0 left was not used: compared %d times", calls)
	}
}
