package mcp

import "context"

// Tracer starts one span per MCP request. The client sends the W3C
// traceparent of that span both as the HTTP header and in params._meta
// (the reserved "traceparent" key), so a server's own traces join.
type Tracer interface {
	StartRequest(ctx context.Context, req RequestInfo) (context.Context, RequestSpan)
}

// RequestInfo describes a request about to be sent, for span attributes.
// It carries no credentials and no argument values.
type RequestInfo struct {
	Method    string
	Name      string // the tool, prompt or resource a request names, if any
	Version   string // MCP-Protocol-Version sent, "" for none
	SessionID string
	ID        int64 // 0 for notifications
}

// RequestSpan is a started request span.
type RequestSpan interface {
	// Traceparent is the W3C traceparent header value for the span.
	Traceparent() string
	// IDs are the span's trace and span ids in hex.
	IDs() (traceID, spanID string)
	// End records the exchange's outcome and ends the span.
	End(ex *Exchange)
}

// MetaTraceparent is the reserved _meta key of W3C trace context.
const MetaTraceparent = "traceparent"

// WithTracer makes c trace every request with t.
func (c *Client) WithTracer(t Tracer) *Client {
	c.tracer = t
	return c
}
