package daemon

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The ring is one byte budget for every target: old lines go first,
// whichever target they belong to, and a page sees only its target's.
func TestRingBoundedByBytes(t *testing.T) {
	r := newRing(10_000)
	for i := range 1000 {
		r.add(fmt.Sprintf("t%d", i%10), fmt.Sprintf("line %04d %s", i, strings.Repeat("x", 50)))
	}
	if r.bytes > 10_000 {
		t.Fatalf("ring holds %d bytes, bound 10000", r.bytes)
	}
	got := r.Lines("t3")
	if len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "line 0993 ") {
		t.Fatalf("t3's newest line missing: %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("lines out of order: %q before %q", got[i-1], got[i])
		}
	}
	r.Forget("t3")
	if got := r.Lines("t3"); len(got) != 0 {
		t.Fatalf("forgotten target still has %d lines", len(got))
	}
	if n := len(r.Lines("t4")); n == 0 {
		t.Fatal("forgetting t3 dropped t4's lines")
	}
	sum := 0
	for i := 0; i < r.n; i++ {
		sum += len(r.entries[(r.head+i)%len(r.entries)].line) + entryOverhead
	}
	if sum != r.bytes {
		t.Fatalf("accounted %d bytes, holds %d", r.bytes, sum)
	}
	r.add("big", strings.Repeat("y", 20_000)) // larger than the ring: dropped, nothing evicted
	if len(r.Lines("big")) != 0 || len(r.Lines("t4")) == 0 {
		t.Fatal("an oversized line was kept or evicted others")
	}
}

func TestRingHandlerRecordsDebug(t *testing.T) {
	r := newRing(0)
	log := slog.New(r.handler("a", slog.DiscardHandler)).With("target", "a", "k", "v")
	log.Debug("hello", "n", 1)
	got := r.Lines("a")
	if len(got) != 1 || !strings.Contains(got[0], "msg=hello") || !strings.Contains(got[0], "k=v") || strings.Contains(got[0], "target=") {
		t.Fatalf("line: %q", got)
	}
	// Attributes added after a group belong to it, as slog has them.
	log.WithGroup("g").With("x", 1).Debug("grouped", "y", 2)
	if got := r.Lines("a"); len(got) != 2 || !strings.Contains(got[1], "k=v g.x=1 g.y=2") {
		t.Fatalf("lines: %q", got)
	}
}

// BenchmarkRingHandler is what a target's log line costs in the ring: a
// probe logs one per MCP request and one when it ends.
func BenchmarkRingHandler(b *testing.B) {
	r := newRing(0)
	log := slog.New(r.handler("a", slog.DiscardHandler)).With("target", "a")
	for b.Loop() {
		log.Debug("mcp request", "method", "tools/list", "status", 200, "duration", 1234*time.Microsecond)
	}
}
