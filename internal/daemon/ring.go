package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// ring keeps a target's last log lines for its status page, like
// blackbox_exporter's per-probe debug log. It records every level, debug
// included, whatever the base logger passes on.
type ring struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func newRing(n int) *ring { return &ring{lines: make([]string, n)} }

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
}

// Lines returns the kept lines, oldest first.
func (r *ring) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

// handler tees records to next (at next's level) and, formatted as text,
// into the ring.
func (r *ring) handler(next slog.Handler) slog.Handler {
	return &ringHandler{ring: r, next: next}
}

type ringHandler struct {
	ring  *ring
	next  slog.Handler
	attrs []slog.Attr
	group string
}

func (h *ringHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *ringHandler) Handle(ctx context.Context, rec slog.Record) error {
	var buf bytes.Buffer
	th := slog.Handler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTarget}))
	if len(h.attrs) > 0 {
		th = th.WithAttrs(h.attrs)
	}
	if h.group != "" {
		th = th.WithGroup(h.group)
	}
	_ = th.Handle(ctx, rec)
	h.ring.add(string(bytes.TrimRight(buf.Bytes(), "\n")))
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

func (h *ringHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &ringHandler{ring: h.ring, next: h.next.WithAttrs(as), attrs: append(append([]slog.Attr(nil), h.attrs...), as...), group: h.group}
}

func (h *ringHandler) WithGroup(name string) slog.Handler {
	return &ringHandler{ring: h.ring, next: h.next.WithGroup(name), attrs: h.attrs, group: name}
}

// dropTarget leaves the target out of page lines: the page is the target's.
func dropTarget(_ []string, a slog.Attr) slog.Attr {
	if a.Key == "target" {
		return slog.Attr{}
	}
	return a
}
