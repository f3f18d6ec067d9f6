package mcptest

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/driftd/driftd/internal/mcp"
)

// reply is the mock's verdict on one request, before it is written.
type reply struct {
	status    int
	header    http.Header // extra response headers
	ctype     string
	body      []byte
	rpc       bool                        // body is one JSON-RPC response: eligible for SSE framing and faults
	violation string                      // the client broke a rule
	knob      bool                        // a knob-induced refusal (auth) that faults must not replace
	stream    func(w http.ResponseWriter) // writes the whole response itself (faults)
}

// because marks the reply as the answer to a client violation.
func (r reply) because(v string) reply {
	r.violation = v
	return r
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func encodeResponse(resp rpcResponse) []byte {
	resp.JSONRPC = "2.0"
	b, err := json.Marshal(resp)
	if err != nil {
		// Only served tool objects or CallTool results can be invalid JSON;
		// surface that as an obviously broken answer rather than panicking.
		e := &RPCError{Code: -32603, Message: "mcptest: cannot encode response: " + err.Error()}
		b, _ = json.Marshal(rpcResponse{JSONRPC: "2.0", ID: resp.ID, Error: e})
	}
	return b
}

// rpcError builds a JSON-RPC error reply; a nil id is sent as null.
func rpcError(status int, id json.RawMessage, code int, msg string, data any) reply {
	body := encodeResponse(rpcResponse{ID: id, Error: &RPCError{Code: code, Message: msg, Data: data}})
	return reply{status: status, ctype: "application/json", body: body, rpc: true}
}

func rpcResult(id json.RawMessage, result any) reply {
	return reply{status: http.StatusOK, ctype: "application/json", body: encodeResponse(rpcResponse{ID: id, Result: result}), rpc: true}
}

func plainReply(status int, text string) reply {
	return reply{status: status, ctype: "text/plain; charset=utf-8", body: []byte(text)}
}

// modernStatus maps a JSON-RPC error code to the HTTP status of a modern
// answer. The spec fixes 400 for the envelope, _meta and header errors and
// 404 for -32601; for other handler errors it is silent, and the mock
// answers in-band with 200.
func modernStatus(code int) int {
	switch code {
	case mcp.CodeMethodNotFound:
		return http.StatusNotFound
	case mcp.CodeParseError, mcp.CodeInvalidRequest, mcp.CodeInvalidParams,
		mcp.CodeHeaderMismatch, mcp.CodeMissingClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case -32603:
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

// objectOf decodes raw as a JSON object; ok is false for anything else,
// including null.
func objectOf(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// stringOf decodes raw as a JSON string; ok is false for anything else.
func stringOf(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func isObject(raw json.RawMessage) bool {
	_, ok := objectOf(raw)
	return ok
}
