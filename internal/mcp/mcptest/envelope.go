package mcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/driftd/driftd/internal/mcp"
)

// maxBody is the largest request body the mock accepts and logs.
const maxBody = 1 << 20

// envelope is a JSON-RPC message that passed the envelope rules.
type envelope struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage // nil when absent
}

func (e *envelope) isNotification() bool { return e.id == nil }

var integerID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`) })

// validID reports whether raw is a string or an integer id (never null,
// never fractional or in exponent form).
func validID(raw json.RawMessage) bool {
	if _, ok := stringOf(raw); ok {
		return true
	}
	return integerID().Match(bytes.TrimSpace(raw))
}

var envelopeKeys = map[string]bool{"jsonrpc": true, "id": true, "method": true, "params": true}

// parseEnvelope applies the single-message JSON-RPC rules shared by both
// eras. A rejection carries the request's id when it could be read.
func parseEnvelope(body []byte, tooBig bool) (*envelope, *reply) {
	reject := func(status, code int, id json.RawMessage, why string) (*envelope, *reply) {
		rep := rpcError(status, id, code, "Invalid Request: "+why, nil).because(why)
		return nil, &rep
	}
	if tooBig {
		return reject(http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, nil, "body exceeds 1 MiB")
	}
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		rep := rpcError(http.StatusBadRequest, nil, mcp.CodeParseError, "Parse error", nil).because("body is not valid JSON")
		return nil, &rep
	}
	if trimmed[0] == '[' {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, nil, "batch (JSON array) requests are not allowed")
	}
	msg, ok := objectOf(trimmed)
	if !ok {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, nil, "body is not a JSON object")
	}
	rawID, hasID := msg["id"]
	var id json.RawMessage
	if hasID && validID(rawID) {
		id = rawID
	}
	for k := range msg {
		if !envelopeKeys[k] {
			return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, id, fmt.Sprintf("unexpected top-level member %q", k))
		}
	}
	if v, _ := stringOf(msg["jsonrpc"]); v != "2.0" {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, id, `jsonrpc must be "2.0"`)
	}
	method, ok := stringOf(msg["method"])
	if !ok {
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, id, "method must be a string")
	}
	if hasID && id == nil {
		if string(bytes.TrimSpace(rawID)) == "null" {
			return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, nil, "id must not be null")
		}
		return reject(http.StatusBadRequest, mcp.CodeInvalidRequest, nil, "id must be a string or an integer")
	}
	return &envelope{id: id, method: method, params: msg["params"]}, nil
}

// peekMethod extracts the JSON-RPC method for the log, whatever else is wrong.
func peekMethod(body []byte) string {
	var m struct {
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	s, _ := stringOf(m.Method)
	return s
}

// gate applies the Origin rule and the auth knob.
func (c *call) gate() (reply, bool) {
	if o := c.r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host != c.r.Host {
			why := fmt.Sprintf("Origin %q not allowed", o)
			return rpcError(http.StatusForbidden, c.id(), mcp.CodeInvalidRequest, "Forbidden: "+why, nil).because(why), true
		}
	}
	if c.opts.BearerToken == "" {
		return reply{}, false
	}
	scheme, token, _ := strings.Cut(c.r.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "Bearer") && token == c.opts.BearerToken {
		return reply{}, false
	}
	status := c.opts.AuthStatus
	if status == 0 {
		status = http.StatusUnauthorized
	}
	rep := plainReply(status, http.StatusText(status)+"\n")
	rep.knob = true
	if c.opts.Challenge != "" {
		rep.header = http.Header{"Www-Authenticate": {c.opts.Challenge}}
	}
	return rep, true
}

// media applies the Content-Type and Accept rules of a POST.
func (c *call) media() (reply, bool) {
	cts := c.r.Header.Values("Content-Type")
	mt := ""
	if len(cts) == 1 {
		mt, _, _ = mime.ParseMediaType(cts[0])
	}
	if mt != "application/json" {
		why := fmt.Sprintf("Content-Type %q is not application/json", strings.Join(cts, ", "))
		return rpcError(http.StatusUnsupportedMediaType, c.id(), mcp.CodeInvalidRequest, why, nil).because(why), true
	}
	if !acceptsBoth(c.r.Header.Values("Accept")) {
		why := fmt.Sprintf("Accept %q must list both application/json and text/event-stream", strings.Join(c.r.Header.Values("Accept"), ", "))
		return rpcError(http.StatusNotAcceptable, c.id(), mcp.CodeInvalidRequest, why, nil).because(why), true
	}
	return reply{}, false
}

// acceptsBoth reports whether the Accept values name both media types
// explicitly; wildcards and q=0 entries do not count.
func acceptsBoth(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			js = js || mt == "application/json"
			sse = sse || mt == "text/event-stream"
		}
	}
	return js && sse
}
