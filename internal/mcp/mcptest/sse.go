package mcptest

import (
	"bytes"
	"encoding/json"
	"net/http"
)

func setSSEHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
}

// writeSSE frames a JSON-RPC response as an event stream that exercises a
// client's parser: a comment, an empty priming event, one related
// notification, then the response split over several data: lines.
func (c *call) writeSSE(w http.ResponseWriter, msg []byte) {
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	priming := "data:\n\n"
	if c.legacyEra() {
		// 2025-11-25 servers prime resumability with an event id; the
		// 2026-07-28 revision removed event ids.
		priming = "id: 0\ndata:\n\n"
	}
	var indented bytes.Buffer
	if json.Indent(&indented, msg, "", "  ") != nil {
		indented.Reset()
		indented.Write(msg)
	}
	var resp bytes.Buffer
	resp.WriteString("event: message\n")
	// Indented JSON only breaks lines between tokens, so joining the data
	// lines with LF (as the SSE parser does) yields valid JSON again.
	for _, line := range bytes.Split(indented.Bytes(), []byte("\n")) {
		resp.WriteString("data: ")
		resp.Write(line)
		resp.WriteByte('\n')
	}
	resp.WriteByte('\n')
	for _, ev := range [][]byte{[]byte(": mcptest stream\n\n"), []byte(priming), c.notification(), resp.Bytes()} {
		if !c.flushWrite(w, ev) {
			return
		}
	}
}

// notification returns the related notification event: progress when the
// request asked for it with a progressToken, else a log message.
func (c *call) notification() []byte {
	var meta map[string]json.RawMessage
	if c.env != nil {
		p, _ := objectOf(c.env.params)
		meta, _ = objectOf(p["_meta"])
	}
	msg := map[string]any{"jsonrpc": "2.0"}
	if tok, ok := meta["progressToken"]; ok {
		msg["method"] = "notifications/progress"
		msg["params"] = map[string]any{"progressToken": tok, "progress": 1, "total": 1}
	} else {
		level := "info"
		if l, ok := stringOf(meta["io.modelcontextprotocol/logLevel"]); ok {
			level = l
		}
		msg["method"] = "notifications/message"
		msg["params"] = map[string]any{"level": level, "logger": "mcptest", "data": "answering " + c.methodName()}
	}
	b, _ := json.Marshal(msg)
	return append(append([]byte("data: "), b...), '\n', '\n')
}

func (c *call) methodName() string {
	if c.env == nil {
		return ""
	}
	return c.env.method
}

// legacyEra reports whether the request is initialize-era traffic.
func (c *call) legacyEra() bool {
	return c.opts.Legacy || (c.env != nil && c.legacyShaped())
}
