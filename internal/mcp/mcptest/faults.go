package mcptest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// oversizePad is the padding of FaultOversized: just over 64 MiB, so the
// whole body is larger than any sane client limit of that size.
const oversizePad = 64<<20 + 64<<10

// faultOn reports whether fault f applies to this request: it must be the
// configured fault, the request must be a parsed JSON-RPC message, and its
// method must be selected.
func (c *call) faultOn(f Fault) bool {
	if c.opts.Fault != f || f == FaultNone || c.env == nil {
		return false
	}
	return len(c.opts.FaultMethods) == 0 || slices.Contains(c.opts.FaultMethods, c.env.method)
}

// applyFault replaces the answer to a request that broke no rule with the
// configured hostile behaviour.
func (c *call) applyFault(rep *reply) {
	f := c.opts.Fault
	if rep.violation != "" || rep.knob || !c.faultOn(f) {
		return
	}
	ctx := c.r.Context()
	switch f {
	case FaultOversized:
		head := `{"jsonrpc":"2.0","id":` + c.idText() + `,"result":{"resultType":"complete","pad":"`
		*rep = c.streamed(http.StatusOK, "application/json", []byte(head), bytes.Repeat([]byte{' '}, 64<<10), oversizePad, []byte(`"}}`))
	case FaultInvalidJSON:
		*rep = reply{status: http.StatusOK, ctype: "application/json", body: []byte("{not json")}
	case FaultWrongID:
		if rep.rpc {
			rep.body = withID(rep.body, wrongID(c.id()))
		}
	case FaultSSENeverAnswers:
		*rep = reply{status: http.StatusOK, stream: func(w http.ResponseWriter) {
			setSSEHeaders(w)
			w.WriteHeader(http.StatusOK)
			for c.flushWrite(w, []byte(": keepalive\n\n")) && c.h.pause(ctx, 50*time.Millisecond) {
			}
		}}
	case FaultTrickle:
		body, status, ctype := rep.body, rep.status, rep.ctype
		*rep = reply{status: status, stream: func(w http.ResponseWriter) {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			w.WriteHeader(status)
			for i := range body {
				if !c.flushWrite(w, body[i:i+1]) || (i < len(body)-1 && !c.h.pause(ctx, 100*time.Millisecond)) {
					return
				}
			}
		}}
	case FaultNeverEnding:
		*rep = c.streamed(http.StatusOK, "application/json", []byte("["), bytes.Repeat([]byte("0,"), 8<<10), -1, nil)
	case FaultRedirect:
		scheme := "http"
		if c.r.TLS != nil {
			scheme = "https"
		}
		*rep = plainReply(http.StatusTemporaryRedirect, "Temporary Redirect\n")
		rep.header = http.Header{"Location": {scheme + "://" + c.r.Host + "/elsewhere"}}
	case FaultRPCErrorOdd:
		*rep = reply{status: http.StatusOK, ctype: "application/json",
			body: []byte(`{"jsonrpc":"2.0","id":` + c.idText() + `,"error":{"code":"x","message":5}}`)}
	case FaultStatus500:
		*rep = plainReply(http.StatusInternalServerError, "boom")
	case FaultHangUp:
		*rep = reply{stream: func(w http.ResponseWriter) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}}
	}
}

// streamed writes head, then chunk repeatedly until total bytes (forever
// when total < 0), then tail, stopping as soon as the client or server goes.
func (c *call) streamed(status int, ctype string, head, chunk []byte, total int, tail []byte) reply {
	return reply{status: status, stream: func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		if !c.flushWrite(w, head) {
			return
		}
		for n := 0; total < 0 || n < total; n += len(chunk) {
			if c.h.stopped(c.r.Context()) {
				return
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		c.flushWrite(w, tail)
	}}
}

// flushWrite writes and flushes b; it reports whether the stream should go on.
func (c *call) flushWrite(w http.ResponseWriter, b []byte) bool {
	if c.h.stopped(c.r.Context()) {
		return false
	}
	if _, err := w.Write(b); err != nil {
		return false
	}
	return http.NewResponseController(w).Flush() == nil
}

func (c *call) idText() string {
	if id := c.id(); id != nil {
		return string(id)
	}
	return "null"
}

// wrongID returns an id of the same type that differs from id.
func wrongID(id json.RawMessage) json.RawMessage {
	if s, ok := stringOf(id); ok {
		b, _ := json.Marshal(s + "-wrong")
		return b
	}
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil && n < 1<<62 {
		return json.RawMessage(strconv.FormatInt(n+1, 10))
	}
	return json.RawMessage(`"wrong"`)
}

func withID(body []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}
