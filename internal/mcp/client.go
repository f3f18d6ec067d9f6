package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/sanitize"
)

// Era is the protocol generation a server speaks.
type Era string

// The two eras.
const (
	EraModern Era = "modern" // 2026-07-28: stateless, server/discover
	EraLegacy Era = "legacy" // initialize + optional session
)

// Limits bound what one server can make driftd read.
type Limits struct {
	MaxResponseBytes int64 // per HTTP response body
	MaxEventBytes    int   // per SSE event
	// Budget, if set, is shared by every client of one run: the bytes
	// they may read together. It bounds a run's memory whatever the
	// number of pages, listings and connections.
	Budget *Budget
	// Bodies, if set, lends the buffers JSON response bodies are kept in
	// (see Bodies); otherwise each body is a fresh allocation.
	Bodies *Bodies
	// Decoded, if set, remembers decoded answers by their bytes (see
	// Decoded); otherwise every answer is decoded.
	Decoded *Decoded
}

// Budget is a byte allowance shared by the clients of one run, drawn, when
// it has one, from the daemon's Pool as well.
type Budget struct {
	left atomic.Int64
	pool *Pool
	held atomic.Int64 // drawn from pool, returned by Release
}

// NewBudget returns an allowance of n bytes; pool, if not nil, is the
// daemon's, which every byte is also drawn from until Release.
func NewBudget(n int64, pool *Pool) *Budget {
	b := &Budget{pool: pool}
	b.left.Store(n)
	return b
}

// take accounts n bytes read: errRunBudget once the run's allowance is
// spent, errDaemonBudget when the daemon's pool is spent and this run
// holds more than its share. A nil Budget is unlimited.
func (b *Budget) take(n int) error {
	if b == nil {
		return nil
	}
	if b.left.Add(-int64(n)) < 0 {
		return errRunBudget
	}
	if b.pool == nil {
		return nil
	}
	held := b.held.Add(int64(n))
	if b.pool.used.Add(int64(n)) > b.pool.limit && held > b.pool.share {
		b.pool.used.Add(-int64(n))
		b.held.Add(-int64(n))
		b.pool.refused.Add(1)
		return errDaemonBudget
	}
	return nil
}

// Release returns to the pool what the run drew from it, once the run's
// bodies are no longer read. Safe on a nil Budget and to call twice.
func (b *Budget) Release() {
	if b != nil && b.pool != nil {
		b.pool.used.Add(-b.held.Swap(0))
	}
}

// Pool is the bytes of responses the runs of one daemon may hold at once
// (global.max_inflight_bytes): what bounds the daemon's memory when many
// servers answer large at the same time, which max_run_bytes alone bounds
// only at concurrency times its value. A run is never refused while it
// holds less than its share, the limit divided by the runs that may be in
// flight, so a server with small answers is never failed for what others
// hold; a run holding more than its share when the pool is spent fails
// with response_too_large. The bytes held are at most the limit plus every
// run's share: twice the limit.
type Pool struct {
	limit, share int64
	used         atomic.Int64
	refused      atomic.Int64
}

// NewPool returns a pool of limit bytes shared by up to runs concurrent
// runs; nil (no pool) when limit is not positive.
func NewPool(limit int64, runs int) *Pool {
	if limit <= 0 {
		return nil
	}
	return &Pool{limit: limit, share: limit / int64(max(runs, 1))}
}

// Limit is the pool's size in bytes.
func (p *Pool) Limit() int64 { return p.limit }

// Share is what a run may hold without ever being refused.
func (p *Pool) Share() int64 { return p.share }

// InUse is the bytes the runs in flight hold.
func (p *Pool) InUse() int64 { return p.used.Load() }

// Refused counts the reads failed because the pool was spent.
func (p *Pool) Refused() int64 { return p.refused.Load() }

// DefaultLimits are used for zero fields.
var DefaultLimits = Limits{MaxResponseBytes: 16 << 20, MaxEventBytes: 16 << 20}

// Exchange is one request and its response as observed on the wire.
type Exchange struct {
	Method      string
	ID          int64
	Era         Era
	Version     string // MCP-Protocol-Version sent, "" for none
	Status      int
	ContentType string
	Duration    time.Duration
	Result      json.RawMessage
	Err         error // nil, or an *Error
	// Notifications counts server notifications read before the response.
	Notifications int
	// TraceID and SpanID name the request's span when tracing is on.
	TraceID, SpanID string
	// Answer names a JSON body that answered with a result (a 2xx status,
	// not an event stream): what a caller keeps to know the same answer
	// again (Session.ListToolsKnown). Zero otherwise.
	Answer Known
	// Unread is set when the body was the answer the caller knew: it was
	// read and summed but not decoded, Result is nil, and Session.Read
	// decodes it if the caller needs it after all.
	Unread bool
	body   []byte // an Unread body, until Session.Read
}

// Known names one answer: the request's id and the jsonscan.Sum of the
// JSON body that answered it. The same request answered with the same
// bytes decodes to the same result, so a caller that concluded on it
// once need not decode it again.
type Known struct {
	ID  int64
	Sum jsonscan.Sum
}

// Client sends MCP requests to one endpoint. It never retries and never
// follows a redirect; the caller's http.Client must be built that way too
// (CheckRedirect returning http.ErrUseLastResponse), which Client enforces.
type Client struct {
	http       *http.Client
	url        string
	info       Implementation
	limits     Limits
	nextID     atomic.Int64
	onExchange func(*Exchange)
	tracer     Tracer
	keep       bool // Session.Close leaves the idle connection open
	onFallback func(version, why string)
	extensions []string // declared in the client's capabilities
}

// NewClient returns a Client for the endpoint url. onExchange, if not nil,
// sees every exchange after it completes.
func NewClient(hc *http.Client, url string, info Implementation, limits Limits, onExchange func(*Exchange)) *Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if limits.MaxResponseBytes <= 0 {
		limits.MaxResponseBytes = DefaultLimits.MaxResponseBytes
	}
	if limits.MaxEventBytes <= 0 || int64(limits.MaxEventBytes) > limits.MaxResponseBytes {
		limits.MaxEventBytes = int(min(limits.MaxResponseBytes, int64(DefaultLimits.MaxEventBytes)))
	}
	return &Client{http: &c, url: url, info: info, limits: limits, onExchange: onExchange}
}

// DeclareExtensions declares extensions (io.modelcontextprotocol/…) in
// the client's capabilities: the client speaks them.
func (c *Client) DeclareExtensions(ids ...string) { c.extensions = append(c.extensions, ids...) }

// capabilities are the client's capabilities as sent.
func (c *Client) capabilities() map[string]any {
	if len(c.extensions) == 0 {
		return map[string]any{}
	}
	ext := make(map[string]any, len(c.extensions))
	for _, id := range c.extensions {
		ext[id] = map[string]any{}
	}
	return map[string]any{"extensions": ext}
}

// KeepConnections makes the end of a conversation (Session.Close) leave
// the client's idle connection open, for a caller that reuses the HTTP
// client in a later conversation.
func (c *Client) KeepConnections() { c.keep = true }

// OnFallback has Connect call f when it falls back to a legacy initialize,
// with the version it asks for and why, before that request is sent: a
// caller that opens a second session like the first (Open, with that
// version and reason) can start it then instead of after the handshake.
func (c *Client) OnFallback(f func(version, why string)) { c.onFallback = f }

// CloseIdleConnections closes the client's idle keep-alive connections.
// Every response body is released before a request returns, so once a
// conversation is over (Session.Close, or a failed Connect or Open) this
// leaves no connection of the client open.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// HTTPClient returns the HTTP client c sends through, for other requests
// that must go the same way (an anonymous client's metadata GETs).
func (c *Client) HTTPClient() *http.Client { return c.http }

// call is one request of one era. It is the only place that builds a
// request envelope and its headers.
type call struct {
	era       Era
	version   string // protocol version: in _meta (modern) and the header
	method    string
	params    map[string]any
	sessionID string
	notify    bool // a notification: no id, no response body expected
	noVersion bool // legacy initialize: no MCP-Protocol-Version header
	// paramHeaders are the tool's valid x-mcp-header annotations: each
	// annotated argument of a modern tools/call travels in Mcp-Param-{Name}.
	paramHeaders []ParamHeader
	// known, if set, is an answer the caller concluded on: a JSON body
	// that is that answer is left unread (Exchange.Unread).
	known *Known

	traceparent string // W3C trace context to propagate, if tracing
}

// envelope builds the JSON-RPC body and the HTTP headers for cl. In the
// modern era the per-request _meta goes inside params and
// MCP-Protocol-Version is derived from it, so the two cannot disagree.
func (c *Client) envelope(cl call, id int64) ([]byte, http.Header, error) {
	params := make(map[string]any, len(cl.params)+1)
	for k, v := range cl.params {
		params[k] = v
	}
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Content-Type", "application/json")
	if cl.era == EraModern {
		meta := map[string]any{
			MetaProtocolVersion:    cl.version,
			MetaClientCapabilities: c.capabilities(),
			MetaClientInfo:         c.info,
		}
		params["_meta"] = meta
		h.Set(HeaderProtocolVersion, meta[MetaProtocolVersion].(string))
		h.Set(HeaderMethod, cl.method)
		if key, ok := NameHeaderMethods[cl.method]; ok {
			name, _ := params[key].(string)
			h.Set(HeaderName, EncodeHeaderValue(name))
		}
		if cl.method == "tools/call" {
			for _, kv := range paramHeaderValues(params["arguments"], cl.paramHeaders) {
				h.Set(kv[0], kv[1])
			}
		}
	} else if !cl.noVersion {
		h.Set(HeaderProtocolVersion, cl.version)
	}
	if cl.traceparent != "" {
		h.Set("Traceparent", cl.traceparent)
		meta, _ := params["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			params["_meta"] = meta
		}
		meta[MetaTraceparent] = cl.traceparent
	}
	if cl.sessionID != "" {
		h.Set(HeaderSessionID, cl.sessionID)
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": cl.method, "params": params}
	if !cl.notify {
		msg["id"] = id
	}
	body, err := json.Marshal(msg)
	return body, h, err
}

// LastID is the id of c's last request (0 before the first).
func (c *Client) LastID() int64 { return c.nextID.Load() }

// StartIDsAfter numbers c's next request id+1, and so on: a client that
// replays another's next requests from its LastID (a run's second
// connection) sends them with the same ids, so that a server answering
// both alike sends the same bytes, decoded once (Decoded). Ids are
// unique per session, and the two are different sessions.
func (c *Client) StartIDsAfter(id int64) { c.nextID.Store(id) }

// do sends cl and reads the answer. For a request the result is returned;
// any failure is an *Error carrying its Reason.
func (c *Client) do(ctx context.Context, cl call) (*Exchange, http.Header, error) {
	ex := &Exchange{Method: cl.method, Era: cl.era, Version: cl.version}
	if !cl.notify {
		ex.ID = c.nextID.Add(1)
	}
	var span RequestSpan
	if c.tracer != nil {
		name := ""
		if key, ok := NameHeaderMethods[cl.method]; ok {
			name, _ = cl.params[key].(string)
		}
		sent := cl.version
		if cl.noVersion {
			sent = ""
		}
		ctx, span = c.tracer.StartRequest(ctx, RequestInfo{Method: cl.method, Name: name, Version: sent, SessionID: cl.sessionID, ID: ex.ID})
		cl.traceparent = span.Traceparent()
		ex.TraceID, ex.SpanID = span.IDs()
	}
	start := time.Now()
	respHeader, err := c.roundTrip(ctx, cl, ex)
	ex.Duration = time.Since(start)
	if err != nil {
		var me *Error
		if !errors.As(err, &me) {
			me = &Error{Err: err}
		}
		if me.Reason == "" {
			me.Reason = Classify(err)
		}
		me.Method, me.Status = cl.method, ex.Status
		ex.Err = me
		err = me
	}
	if span != nil {
		span.End(ex)
	}
	if c.onExchange != nil {
		c.onExchange(ex)
	}
	return ex, respHeader, err
}

func (c *Client) roundTrip(ctx context.Context, cl call, ex *Exchange) (http.Header, error) {
	body, h, err := c.envelope(cl, ex.ID)
	if err != nil {
		return nil, &Error{Reason: ReasonConfig, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Reason: ReasonConfig, Err: err}
	}
	req.Header = h
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer release(resp)
	ex.Status = resp.StatusCode
	ex.ContentType = resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return resp.Header, &Error{Reason: ReasonHTTPStatus, Location: resp.Header.Get("Location"),
			Detail: "redirect not followed"}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		ch := ParseChallenge(resp.Header)
		ch.Status = resp.StatusCode
		return resp.Header, &Error{Reason: ReasonAuthRequired, Challenge: ch}
	}
	if cl.notify {
		if resp.StatusCode/100 != 2 {
			return resp.Header, &Error{Reason: ReasonHTTPStatus, Detail: "notification refused"}
		}
		return resp.Header, nil
	}
	result, err := c.readResponse(resp, ex, cl.known)
	ex.Result = result
	return resp.Header, err
}

// maxPooledBody bounds the buffers Bodies lends, so one huge answer does
// not stay allocated.
const maxPooledBody = 1 << 20

// chunkSize is the size of the pooled pieces a body of unknown length is
// read into.
const chunkSize = 32 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// readBody reads r to its end into a slice of its size (lent by lend, if
// set), which the decoded messages point into. A body of declared size
// (Content-Length, at most maxPooledBody) is read straight into a slice of
// that size. Any other (a chunked answer) is, without a lender,
// readUnlent's; with one, it is read into pooled 32 KiB pieces and copied
// once into a lent slice of its size, so that a daemon's runs reuse the
// same memory.
func readBody(r io.Reader, lend *Bodies, size int64) ([]byte, error) {
	if size <= 0 || size > maxPooledBody {
		if lend == nil {
			return readUnlent(r)
		}
		var (
			parts []*[]byte
			n     int
			err   error
		)
		for {
			p := chunks.Get().(*[]byte)
			parts = append(parts, p)
			k, rerr := io.ReadFull(r, *p)
			n += k
			if rerr != nil {
				if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
					err = rerr
				}
				break
			}
		}
		b := lend.make(n)
		off := 0
		for _, p := range parts {
			off += copy(b[off:], *p)
			chunks.Put(p)
		}
		return b, err
	}
	b := lend.make(int(size))
	n, err := io.ReadFull(r, b)
	if err != nil {
		return b[:n], err
	}
	// net/http ends the body where Content-Length says; reading to its EOF
	// is what returns the connection to the pool.
	rest, err := io.ReadAll(r)
	if len(rest) > 0 {
		b = append(b[:len(b):len(b)], rest...)
	}
	return b, err
}

// readUnlent reads a body of unknown length when no Bodies lends buffers
// (a one-shot check or capture, whose memory is all fresh): an answer that
// fits one pooled piece is copied out of it; a longer one is read straight
// into a slice that doubles, instead of into pieces and then a copy. Fresh
// memory costs a page fault per page first written, so a 160 KB listing
// written once instead of twice saves some 40 of them.
func readUnlent(r io.Reader) ([]byte, error) {
	p := chunks.Get().(*[]byte)
	defer chunks.Put(p)
	n, err := io.ReadFull(r, *p)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil
		}
		b := make([]byte, n)
		copy(b, *p)
		return b, err
	}
	b := make([]byte, n, 8*chunkSize)
	copy(b, *p)
	for {
		if len(b) == cap(b) {
			// Not append's growth: it clears the new slice's tail,
			// writing pages the body may never reach.
			grown := make([]byte, len(b), 2*cap(b))
			copy(grown, b)
			b = grown
		}
		k, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b[:len(b):len(b)], err
		}
	}
}

// Bodies lends the buffers a run's response bodies are kept in, and takes
// them all back at once (Release). A daemon's runs read some 200 KB of
// bodies each, which become garbage when the run ends: most of what a busy
// daemon allocates, and so most of its garbage collection. Whoever
// releases must be sure that nothing read from the bodies as bytes (a
// json.RawMessage, a Tool's Raw or schemas) is still in use; strings
// decoded from them are copies. Release zeroes what it lent, so a use
// after it reads NUL bytes — never JSON — instead of another run's body.
type Bodies struct {
	mu   sync.Mutex
	lent []*[]byte
}

var lendable = sync.Pool{New: func() any { return new([]byte) }}

// make returns a slice of length n: a lent buffer, or a fresh slice when
// bs is nil or n is larger than the buffers kept.
func (bs *Bodies) make(n int) []byte {
	if bs == nil || n > maxPooledBody {
		return make([]byte, n)
	}
	p := lendable.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, 0, n)
	}
	*p = (*p)[:n]
	bs.mu.Lock()
	bs.lent = append(bs.lent, p)
	bs.mu.Unlock()
	return (*p)[:n:n] // no append through it reaches the rest
}

// Release takes back every buffer lent so far.
func (bs *Bodies) Release() {
	bs.mu.Lock()
	lent := bs.lent
	bs.lent = nil
	bs.mu.Unlock()
	for _, p := range lent {
		clear(*p) // what was lent: the rest of the buffer was never handed out
		lendable.Put(p)
	}
}

// readResponse reads the JSON-RPC answer to ex from a JSON or SSE body,
// whatever the HTTP status. A JSON body that answers with a result is
// summed (Exchange.Answer); when that is known, it is left unread.
func (c *Client) readResponse(resp *http.Response, ex *Exchange, known *Known) (json.RawMessage, error) {
	body := &limitedReader{r: resp.Body, n: c.limits.MaxResponseBytes, budget: c.limits.Budget}
	mediaType, _, _ := mime.ParseMediaType(ex.ContentType)
	ok := resp.StatusCode/100 == 2
	switch {
	case mediaType == "text/event-stream":
		msg, err := c.readSSE(body, ex)
		return c.result(msg, err, ok, mediaType, ex.ID)
	case ok && mediaType != "" && mediaType != "application/json":
		// The transport answers application/json or text/event-stream; an
		// HTML page (a proxy's, a login form's) is not an MCP answer, even
		// if it happens to parse.
		return nil, &Error{Reason: ReasonInvalidResponse, Detail: fmt.Sprintf("Content-Type %s is neither application/json nor text/event-stream", sanitize.Name(mediaType))}
	}
	b, err := readBody(body, c.limits.Bodies, min(resp.ContentLength, c.limits.MaxResponseBytes))
	if err != nil {
		return c.result(nil, err, ok, mediaType, ex.ID)
	}
	answer := Known{ID: ex.ID, Sum: jsonscan.SumOf(b)}
	if ok && known != nil && *known == answer {
		ex.Answer, ex.Unread, ex.body = answer, true, b
		return nil, nil
	}
	result, err := c.decode(b, answer.Sum, ok, mediaType, ex.ID)
	if err == nil {
		ex.Answer = answer
	}
	return result, err
}

// decode is the answer to the request of id that the JSON body b, of Sum
// sum, carries (result): readResponse's, and Session.Read's of a body
// it left unread.
func (c *Client) decode(b []byte, sum jsonscan.Sum, ok bool, mediaType string, id int64) (json.RawMessage, error) {
	msg, err := c.limits.Decoded.response(b, sum)
	return c.result(msg, err, ok, mediaType, id)
}

// result is the answer to the request of id that msg decoded to, or why
// there is none: err is the read's or the decode's, ok whether the HTTP
// status was 2xx, mediaType the body's.
func (c *Client) result(msg *response, err error, ok bool, mediaType string, id int64) (json.RawMessage, error) {
	if err != nil {
		if tooLarge(err) {
			return nil, &Error{Reason: ReasonResponseTooLarge, Err: err}
		}
		if Classify(err) == ReasonTimeout {
			return nil, err
		}
		if !ok {
			return nil, &Error{Reason: ReasonHTTPStatus, Detail: describeBody(mediaType)}
		}
		return nil, &Error{Reason: ReasonInvalidResponse, Err: err}
	}
	result, rpc, err := checkResponse(msg, id)
	switch {
	case err != nil:
		return nil, &Error{Reason: ReasonInvalidResponse, Err: err}
	case rpc != nil:
		return nil, &Error{Reason: ReasonJSONRPCError, RPC: rpc}
	case !ok:
		return nil, &Error{Reason: ReasonHTTPStatus, Detail: "result carried by an error status"}
	}
	return result, nil
}

// readSSE reads events until the response to ex arrives, skipping
// notifications (and server requests, which driftd never answers).
func (c *Client) readSSE(body io.Reader, ex *Exchange) (*response, error) {
	sse := newSSEReader(body, c.limits.MaxEventBytes)
	for {
		data, err := sse.Next()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errors.New("event stream ended without a response")
		}
		if err != nil {
			return nil, err
		}
		msg, kind, err := decodeMessage(data)
		if err != nil {
			return nil, err
		}
		if kind == kindResponse {
			return msg, nil
		}
		ex.Notifications++
	}
}

func decodeResponse(b []byte) (*response, error) {
	msg, kind, err := decodeMessage(b)
	if err != nil {
		return nil, err
	}
	if kind != kindResponse {
		return nil, errors.New("body is a JSON-RPC request or notification, not a response")
	}
	return msg, nil
}

// describeBody names a non-JSON-RPC error body without quoting it.
func describeBody(mediaType string) string {
	if mediaType == "" {
		return "body without a content type"
	}
	return fmt.Sprintf("%s body is not JSON-RPC", mediaType)
}

// drainLimit bounds what release reads of a body nobody wanted.
const drainLimit = 4 << 10

// release is the one place a response body is closed. A short body of
// declared length (a redirect's, a refusal's, a notification's) is read out
// first so its connection goes back to the pool, where the Client's
// CloseIdleConnections can close it. A stream or a long body is closed
// unread: the transport then drops the connection rather than wait for a
// server that may never finish.
func release(resp *http.Response) {
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.ContentLength >= 0 && resp.ContentLength <= drainLimit && mediaType != "text/event-stream" {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	}
	resp.Body.Close()
}

// Challenge is what a 401/403 said about authentication. Values are recorded,
// never fetched.
type Challenge struct {
	Status           int    `json:"status"`
	WWWAuthenticate  bool   `json:"www_authenticate"`
	Scheme           string `json:"scheme,omitempty"`
	ResourceMetadata string `json:"resource_metadata,omitempty"`
	Scope            string `json:"scope,omitempty"`
}

// ParseChallenge reads the WWW-Authenticate header of a refusal.
func ParseChallenge(h http.Header) *Challenge {
	ch := &Challenge{}
	v := h.Get("WWW-Authenticate")
	if v == "" {
		return ch
	}
	ch.WWWAuthenticate = true
	scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
	params := parseAuthParams(rest)
	ch.Scheme = sanitize.Text(scheme)
	ch.ResourceMetadata = sanitize.Text(params["resource_metadata"])
	ch.Scope = sanitize.Text(params["scope"])
	return ch
}

// deleteSession sends the legacy session-ending DELETE and ignores the answer.
func (c *Client) deleteSession(ctx context.Context, id, version string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header.Set(HeaderSessionID, id)
	req.Header.Set(HeaderProtocolVersion, version)
	if resp, err := c.http.Do(req); err == nil {
		release(resp)
	}
}
