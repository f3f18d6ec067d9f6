package mcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Options are the knobs of a Handler. The zero value is a strict modern
// (2026-07-28) server with no tools.
type Options struct {
	// Tools are the served tool objects, in order.
	Tools []json.RawMessage
	// PageSize is the number of tools per tools/list page; 0 means one page.
	// Prompts, resources and templates are paged by it too.
	PageSize int

	// Prompts, Resources and ResourceTemplates are the served items of
	// prompts/list, resources/list and resources/templates/list, in order.
	// A nil list is not served: its method answers -32601 and its
	// capability is not advertised (resources is advertised when either
	// Resources or ResourceTemplates is set). Drift is these lists
	// differing from a manifest's, changed mid-test with SetOptions.
	Prompts, Resources, ResourceTemplates []json.RawMessage
	// OtherConnPrompts, if non-nil, is served as prompts to every TCP
	// connection other than the first (as OtherConnTools).
	OtherConnPrompts []json.RawMessage
	// HideCapabilities advertises only tools, whatever lists are served.
	HideCapabilities bool

	// Legacy makes the server initialize-based (2025-11-25 rules) only.
	Legacy bool
	// Sessions (legacy only) mints Mcp-Session-Id on initialize and requires
	// it, and notifications/initialized, afterwards.
	Sessions bool
	// LegacyDiscover chooses how a legacy server refuses a request whose
	// MCP-Protocol-Version it does not support: "" or "plain400" (HTTP 400
	// text/plain, go-sdk <=1.6), "method-not-found" (HTTP 200 JSON-RPC
	// -32601) or "discover-legacy-only" (server/discover answers with
	// legacy-only supportedVersions, anything else gets 400 -32022 with
	// legacy-only data.supported; go-sdk 1.8 stateful). A request inside a
	// known session is instead held to the negotiated version (a violation).
	LegacyDiscover string

	// SupportedVersions are the accepted revisions. Default
	// [2026-07-28, 2025-11-25]. Legacy members govern initialize-based
	// traffic; the others are served by the modern (stateless) path.
	SupportedVersions []string
	// RejectFirstModern answers the first modern request that would
	// otherwise succeed with 400 -32022, to exercise a client's retry-once.
	RejectFirstModern bool

	// BearerToken, if set, must arrive as "Authorization: Bearer <token>".
	BearerToken string
	// AuthStatus is the refusal status: 401 (default) or 403.
	AuthStatus int
	// Challenge is the WWW-Authenticate value sent with the refusal.
	Challenge string

	// OtherConnTools, if non-nil, is served to every TCP connection other
	// than the first one seen (a spec violation a client must detect).
	OtherConnTools []json.RawMessage
	// ReverseOtherConns serves the tools in reverse order on connections
	// other than the first.
	ReverseOtherConns bool

	// SSE answers every 200 JSON-RPC response as text/event-stream: a
	// comment, an empty priming event, one notification (progress when the
	// request carried a progressToken, else notifications/message), then the
	// response split over several data: lines. Rejections stay JSON.
	SSE bool
	// Delay is slept before answering (cut short if the client goes away).
	Delay time.Duration

	// OmitCacheHints drops ttlMs and cacheScope from modern results.
	OmitCacheHints bool
	// OmitResultType drops resultType from modern results.
	OmitResultType bool
	// OmitServerInfo drops _meta serverInfo from modern results.
	OmitServerInfo bool
	// ResultType overrides resultType (e.g. "bogus").
	ResultType string
	// TTLMs overrides ttlMs (e.g. -1).
	TTLMs *int
	// CacheScope overrides cacheScope (e.g. "none").
	CacheScope string

	// ServerName and ServerVersion identify the server; default "mcptest"
	// and "0.0.0".
	ServerName, ServerVersion string

	// NoLog keeps no request log and numbers no connections (every request
	// counts as connection 1): a long-running benchmark server's memory
	// then stays flat. Requests, Violations and Count see nothing.
	NoLog bool

	// Fault is a hostile behaviour. It replaces the answer to a parsed
	// JSON-RPC request that broke no rule and passed auth, so it never masks
	// a violation.
	Fault Fault
	// FaultMethods limits Fault to these JSON-RPC methods; empty means all.
	FaultMethods []string

	// CallTool handles tools/call (args is nil when the request had none).
	// When nil, a name not in the served tools gets -32602 and a known one
	// gets {"content":[]}.
	CallTool func(name string, args json.RawMessage) (result json.RawMessage, rpcErr *RPCError)
	// GetPrompt handles prompts/get (args is nil when the request had
	// none). When nil, a served prompt gets one user message and a name
	// not served -32602. A malformed result is a knob: return one.
	GetPrompt func(name string, args json.RawMessage) (result json.RawMessage, rpcErr *RPCError)
	// ReadResource handles resources/read. When nil, a served resource
	// gets one text content and a uri not served -32602.
	ReadResource func(uri string) (result json.RawMessage, rpcErr *RPCError)
}

// Fault is a hostile server behaviour.
type Fault int

// Faults. Each one stops when the client goes away or the Server closes.
const (
	FaultNone            Fault = iota
	FaultOversized             // 200 application/json body larger than 64 MiB
	FaultInvalidJSON           // 200 application/json "{not json"
	FaultWrongID               // a valid response whose id differs from the request's
	FaultSSENeverAnswers       // text/event-stream of ": keepalive" comments every 50ms, never the response
	FaultTrickle               // the valid JSON response, one byte every 100ms
	FaultNeverEnding           // application/json "[" followed by endless "0," chunks
	FaultRedirect              // 307 to <same server>/elsewhere
	FaultCursorLoop            // tools/list always returns the same nextCursor
	FaultRPCErrorOdd           // error object with a string code and a numeric message
	FaultStatus500             // HTTP 500 text/plain "boom"
	FaultHangUp                // the connection is closed without a byte of response
)

var faultNames = [...]string{"none", "oversized", "invalid-json", "wrong-id", "sse-never-answers",
	"trickle", "never-ending", "redirect", "cursor-loop", "rpc-error-odd", "status-500", "hang-up"}

// String returns the fault's short name.
func (f Fault) String() string {
	if f >= 0 && int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Error implements error.
func (e *RPCError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Request is one logged HTTP request and the mock's verdict on it.
type Request struct {
	Method     string      // JSON-RPC method ("" if unparseable)
	HTTPMethod string      // HTTP method
	Path       string      // URL path
	Conn       int         // 1-based TCP connection index, by RemoteAddr in first-seen order
	Header     http.Header // clone of the request headers
	Body       []byte      // raw body, capped at 1 MiB
	Status     int         // HTTP status answered; 0 if the client left first
	Violation  string      // why the request broke a rule; "" if it did not
}
