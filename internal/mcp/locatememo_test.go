package mcp

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/memo"
)

// listingBody is a tools/list answer of n tools, each padded to about
// size bytes, with tag written into every description so bodies differ.
func listingBody(n, size int, tag string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":3,"result":{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","description":"%s %s","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`,
			i, tag, strings.Repeat("x", size))
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

func TestLocateMemo(t *testing.T) {
	c := memo.New[spanKey](1<<20, spansWeight)
	body := listingBody(20, 100, "a")
	want, ok := jsonscan.Locate(body, listDepth, nil)
	if !ok {
		t.Fatal("the test's body is invalid")
	}
	first, ok := locateIn(c, body, listDepth)
	if !ok || !slices.Equal(first, want) {
		t.Fatalf("first locate: ok %v, spans differ from jsonscan.Locate's: %v", ok, !slices.Equal(first, want))
	}
	// The same bytes in another buffer, as the next run reads them: the
	// remembered spans, not a second scan.
	again, ok := locateIn(c, slices.Clone(body), listDepth)
	if !ok || &again[0] != &first[0] {
		t.Fatalf("the same bytes again were scanned again (ok %v)", ok)
	}
	// Another depth is another answer.
	if members, ok := locateIn(c, body, 1); !ok || &members[0] == &first[0] || len(members) >= len(first) {
		t.Errorf("depth 1 answered from depth %d's entry", listDepth)
	}
	// One byte changed: scanned, and its own spans.
	other := slices.Clone(body)
	other[bytes.LastIndexByte(other, 'x')] = 'y' // in the last description
	if got, ok := locateIn(c, other, listDepth); !ok || &got[0] == &first[0] {
		t.Error("a changed body was answered from the memo")
	}
	// Invalid JSON is refused and not remembered.
	bad := append(slices.Clone(body[:len(body)-1]), ',')
	for range 2 {
		if _, ok := locateIn(c, bad, listDepth); ok {
			t.Fatal("invalid JSON located")
		}
	}
	if c.Len() != 3 {
		t.Errorf("%d entries, want 3 (the body at two depths and the changed one)", c.Len())
	}
}

// TestLocateMemoBounded holds the memo to its budget with more distinct
// answers than it holds, each still located right, and answers but does
// not keep one too large to.
func TestLocateMemoBounded(t *testing.T) {
	const budget = 64 << 10
	c := memo.New[spanKey](budget, spansWeight)
	for i := range 200 {
		body := listingBody(10, 50, fmt.Sprint(i))
		want, _ := jsonscan.Locate(body, listDepth, nil)
		for range 2 {
			if got, ok := locateIn(c, body, listDepth); !ok || !slices.Equal(got, want) {
				t.Fatalf("body %d: spans differ from jsonscan.Locate's", i)
			}
		}
		if c.Used() > budget {
			t.Fatalf("body %d: %d bytes kept, budget %d", i, c.Used(), budget)
		}
	}
	huge := listingBody(200, 10, "huge") // over a sixteenth of the budget
	want, _ := jsonscan.Locate(huge, listDepth, nil)
	if got, ok := locateIn(c, huge, listDepth); !ok || !slices.Equal(got, want) {
		t.Fatal("huge body located wrong")
	}
	if _, ok := c.Get(spanKey{jsonscan.SumOf(huge), listDepth}); ok {
		t.Error("an answer over a sixteenth of the budget was kept")
	}
}

// TestLocateMemoConcurrent shares entries between goroutines, as a
// daemon's runs do; the race detector watches the shared spans.
func TestLocateMemoConcurrent(t *testing.T) {
	c := memo.New[spanKey](256<<10, spansWeight)
	bodies := make([][]byte, 8)
	for i := range bodies {
		bodies[i] = listingBody(10, 40, fmt.Sprint(i))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				b := bodies[(g+i)%len(bodies)]
				got, ok := locateIn(c, b, listDepth)
				if !ok {
					t.Error("valid body refused")
					return
				}
				m, ok := members(b, got, 0, envelopeKeys)
				if !ok || string(m["id"]) != "3" {
					t.Errorf("members from the memo's spans: %v %q", ok, m["id"])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzLocateMemo holds the memo's answers, a miss and then a hit, to
// jsonscan.Locate's for any bytes.
func FuzzLocateMemo(f *testing.F) {
	f.Add(listingBody(3, 10, "a"), 4)
	f.Add([]byte(`{"a":[1,2,{"b":null}]}`), 1)
	f.Add([]byte(`{"a":`), 2)
	f.Fuzz(func(t *testing.T, b []byte, depth int) {
		depth = min(max(depth, 0), 8)
		want, wantOK := jsonscan.Locate(b, depth, nil)
		c := memo.New[spanKey](1<<20, spansWeight)
		for round := range 2 {
			got, ok := locateIn(c, b, depth)
			if ok != wantOK || (ok && !slices.Equal(got, want)) {
				t.Fatalf("round %d: memo (%v %v), jsonscan.Locate (%v %v)", round, ok, got, wantOK, want)
			}
		}
	})
}
