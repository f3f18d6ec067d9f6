package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// DefaultLogRingBytes is the default size of the log ring: the recent
// lines every target's status page shows, all targets together.
const DefaultLogRingBytes = 4 << 20

// ring keeps the most recent log lines of every target's runs, for the
// status pages, like blackbox_exporter's probe history: one ring for the
// whole daemon, bounded by bytes, so that its memory does not grow with
// the number of targets (DESIGN §14). A target's page shows its lines
// still in the ring; with many targets that is its latest runs. Every
// level is recorded, debug included, whatever the base logger passes on.
type ring struct {
	mu      sync.Mutex
	entries []ringEntry // a circular buffer; head is the oldest
	head, n int
	bytes   int
	max     int
}

type ringEntry struct {
	target string
	line   string
}

// entryOverhead is what an entry costs beside its line's bytes: two
// string headers. The target name is shared with the target's config.
const entryOverhead = 32

func newRing(maxBytes int) *ring {
	if maxBytes <= 0 {
		maxBytes = DefaultLogRingBytes
	}
	return &ring{max: maxBytes, entries: make([]ringEntry, 64)}
}

func (r *ring) add(target, line string) {
	cost := len(line) + entryOverhead
	if cost > r.max {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.n > 0 && r.bytes+cost > r.max {
		r.dropOldest()
	}
	if r.n == len(r.entries) {
		grown := make([]ringEntry, 2*len(r.entries))
		for i := 0; i < r.n; i++ {
			grown[i] = r.entries[(r.head+i)%len(r.entries)]
		}
		r.entries, r.head = grown, 0
	}
	r.entries[(r.head+r.n)%len(r.entries)] = ringEntry{target: target, line: line}
	r.n++
	r.bytes += cost
}

func (r *ring) dropOldest() {
	e := &r.entries[r.head]
	r.bytes -= len(e.line) + entryOverhead
	*e = ringEntry{}
	r.head = (r.head + 1) % len(r.entries)
	r.n--
}

// Bytes is what the ring holds, as it counts it (lines and their
// overhead), and its bound.
func (r *ring) Bytes() (held, bound int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes, r.max
}

// Lines returns target's kept lines, oldest first.
func (r *ring) Lines(target string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i := 0; i < r.n; i++ {
		if e := &r.entries[(r.head+i)%len(r.entries)]; e.target == target {
			out = append(out, e.line)
		}
	}
	return out
}

// Forget drops a removed target's lines, so that a target of the same
// name added later starts with an empty page.
func (r *ring) Forget(target string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := 0
	size := len(r.entries)
	for i := 0; i < r.n; i++ {
		e := r.entries[(r.head+i)%size]
		if e.target == target {
			r.bytes -= len(e.line) + entryOverhead
			continue
		}
		r.entries[(r.head+kept)%size] = e
		kept++
	}
	for i := kept; i < r.n; i++ {
		r.entries[(r.head+i)%size] = ringEntry{}
	}
	r.n = kept
}

// handler tees records to next (at next's level) and, formatted as text,
// into the ring under target.
func (r *ring) handler(target string, next slog.Handler) slog.Handler {
	text := slog.NewTextHandler(ringWriter{r, target}, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTarget})
	return &ringHandler{text: text, next: next}
}

// ringHandler keeps one text handler for the ring beside next, so that
// the attributes a logger carries are formatted once, when they are added
// (slog's WithAttrs), not again for every record.
type ringHandler struct {
	text, next slog.Handler
}

func (h *ringHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *ringHandler) Handle(ctx context.Context, rec slog.Record) error {
	_ = h.text.Handle(ctx, rec)
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

func (h *ringHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &ringHandler{text: h.text.WithAttrs(as), next: h.next.WithAttrs(as)}
}

func (h *ringHandler) WithGroup(name string) slog.Handler {
	return &ringHandler{text: h.text.WithGroup(name), next: h.next.WithGroup(name)}
}

// ringWriter puts what a text handler writes, one whole line a record,
// into the ring under target.
type ringWriter struct {
	ring   *ring
	target string
}

func (w ringWriter) Write(line []byte) (int, error) {
	w.ring.add(w.target, string(bytes.TrimRight(line, "\n")))
	return len(line), nil
}

// dropTarget leaves the target out of page lines: the page is the target's.
func dropTarget(_ []string, a slog.Attr) slog.Attr {
	if a.Key == "target" {
		return slog.Attr{}
	}
	return a
}
