package mcptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Handler is the mock MCP endpoint. It is safe for concurrent use.
type Handler struct {
	endpoint string        // when set, other paths get 404 (still logged)
	done     chan struct{} // closed by Server.Close to end every stream
	stop     sync.Once

	mu       sync.Mutex
	opts     Options
	log      []*Request
	conns    map[string]int
	sessions map[string]*session
	cursors  map[string]int // cursor -> offset
	offsets  map[int]string // offset -> cursor
	rejected bool           // RejectFirstModern has fired
	inflight int
}

type session struct {
	version     string
	initialized bool
}

// call is the state of one request while it is judged.
type call struct {
	h      *Handler
	r      *http.Request
	opts   Options
	body   []byte
	tooBig bool
	conn   int
	env    *envelope
}

// NewHandler returns a Handler configured with opts.
func NewHandler(opts Options) *Handler {
	return &Handler{
		opts:     cloneOptions(opts),
		done:     make(chan struct{}),
		conns:    map[string]int{},
		sessions: map[string]*session{},
		cursors:  map[string]int{},
		offsets:  map[int]string{},
	}
}

func cloneOptions(o Options) Options {
	o.Tools = slices.Clone(o.Tools)
	o.OtherConnTools = slices.Clone(o.OtherConnTools)
	o.Prompts, o.Resources = slices.Clone(o.Prompts), slices.Clone(o.Resources)
	o.ResourceTemplates, o.OtherConnPrompts = slices.Clone(o.ResourceTemplates), slices.Clone(o.OtherConnPrompts)
	o.SupportedVersions = slices.Clone(o.SupportedVersions)
	o.FaultMethods = slices.Clone(o.FaultMethods)
	if o.TTLMs != nil {
		v := *o.TTLMs
		o.TTLMs = &v
	}
	return o
}

// ServeHTTP judges, logs and answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	tooBig := len(body) > maxBody
	if tooBig {
		body = body[:maxBody]
	}
	entry := &Request{
		Method: peekMethod(body), HTTPMethod: r.Method, Path: r.URL.Path,
		Header: r.Header.Clone(), Body: body,
	}
	h.mu.Lock()
	if h.opts.NoLog {
		entry.Conn = 1
	} else {
		entry.Conn = h.connLocked(r.RemoteAddr)
		h.log = append(h.log, entry)
	}
	c := &call{h: h, r: r, opts: cloneOptions(h.opts), body: body, tooBig: tooBig, conn: entry.Conn}
	h.inflight++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inflight--
		h.mu.Unlock()
	}()

	var rep reply
	switch {
	case err != nil:
		rep = plainReply(http.StatusBadRequest, "mcptest: reading body: "+err.Error())
	case h.endpoint != "" && r.URL.Path != h.endpoint:
		rep = plainReply(http.StatusNotFound, "404 page not found\n")
	case c.opts.Legacy:
		rep = c.legacy()
	default:
		rep = c.modern()
	}
	c.applyFault(&rep)
	h.mu.Lock()
	entry.Violation = rep.violation
	h.mu.Unlock()
	if !h.pause(r.Context(), c.opts.Delay) {
		return
	}
	h.mu.Lock()
	entry.Status = rep.status
	h.mu.Unlock()
	c.write(w, &rep)
}

func (c *call) write(w http.ResponseWriter, rep *reply) {
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	switch {
	case rep.stream != nil:
		rep.stream(w)
	case rep.rpc && rep.status == http.StatusOK && c.opts.SSE:
		c.writeSSE(w, rep.body)
	default:
		if rep.ctype != "" {
			w.Header().Set("Content-Type", rep.ctype)
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.body)
	}
}

// pause sleeps for d unless the client goes away or the server closes
// first; it reports whether the request should still be answered.
func (h *Handler) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return !h.stopped(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-h.done:
		return false
	}
}

func (h *Handler) stopped(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-h.done:
		return true
	default:
		return false
	}
}

func (h *Handler) connLocked(addr string) int {
	n, ok := h.conns[addr]
	if !ok {
		n = len(h.conns) + 1
		h.conns[addr] = n
	}
	return n
}

func (h *Handler) shutdown() { h.stop.Do(func() { close(h.done) }) }

// idle waits up to d for every handler to return.
func (h *Handler) idle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		h.mu.Lock()
		n := h.inflight
		h.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SetTools replaces the served tools (drift mid-test).
func (h *Handler) SetTools(tools []json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opts.Tools = slices.Clone(tools)
}

// SetOptions mutates the options under the lock. Switching
// RejectFirstModern on re-arms it.
func (h *Handler) SetOptions(fn func(*Options)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.opts.RejectFirstModern
	fn(&h.opts)
	h.opts = cloneOptions(h.opts)
	if !was && h.opts.RejectFirstModern {
		h.rejected = false
	}
}

// Requests returns a copy of the request log, oldest first.
func (h *Handler) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Request, len(h.log))
	for i, e := range h.log {
		out[i] = *e
		out[i].Header = e.Header.Clone()
	}
	return out
}

// Violations returns the logged requests rejected because the client broke
// a rule; knob-induced refusals and faults are not among them.
func (h *Handler) Violations() []Request {
	var out []Request
	for _, r := range h.Requests() {
		if r.Violation != "" {
			out = append(out, r)
		}
	}
	return out
}

// CheckNoViolations returns an error listing every violation, or nil.
func (h *Handler) CheckNoViolations() error {
	v := h.Violations()
	if len(v) == 0 {
		return nil
	}
	lines := make([]string, len(v))
	for i, r := range v {
		lines[i] = fmt.Sprintf("%s %q (conn %d): %s", r.HTTPMethod, r.Method, r.Conn, r.Violation)
	}
	return errors.New("mcptest: client violations:\n" + strings.Join(lines, "\n"))
}

// Count returns how many logged requests carried the JSON-RPC method;
// "" counts the unparseable ones.
func (h *Handler) Count(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.log {
		if e.Method == method {
			n++
		}
	}
	return n
}

// Reset clears the log and the connection numbering (the next connection
// seen is the first again) and re-arms RejectFirstModern. Sessions and
// minted cursors survive.
func (h *Handler) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = nil
	h.conns = map[string]int{}
	h.rejected = false
}

// randomID returns a visible-ASCII random token.
func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
