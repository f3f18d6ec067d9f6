package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func tool(name string) json.RawMessage {
	return json.RawMessage(`{"name":` + quote(name) + `,"inputSchema":{"type":"object"}}`)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func stdMeta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
	}
}

// modernMsg is a correct 2026-07-28 request body; extra params are merged.
func modernMsg(id any, method string, params map[string]any) map[string]any {
	p := map[string]any{"_meta": stdMeta()}
	for k, v := range params {
		p[k] = v
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p}
}

// modernHeader is the correct header set for method.
func modernHeader(method string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	return h
}

func legacyHeader(version string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	return h
}

func legacyMsg(id any, method string, params map[string]any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	return m
}

func initParams(version string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "test", "version": "1"},
	}
}

type result struct {
	status int
	header http.Header
	body   []byte
	msg    map[string]json.RawMessage
}

// rpcCode returns error.code, or 0 when the body holds no JSON-RPC error.
func (r result) rpcCode() int {
	var e struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(r.msg["error"], &e) != nil {
		return 0
	}
	return e.Code
}

func (r result) result(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.msg["result"], &m); err != nil {
		t.Fatalf("no result object in %s (status %d)", r.body, r.status)
	}
	return m
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func startServer(t *testing.T, opts Options) *Server {
	s := NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// do sends one request; body may be nil, []byte (raw) or any JSON value.
func do(t *testing.T, c *http.Client, method, url string, h http.Header, body any) result {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		req.Header = h.Clone()
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := result{status: resp.StatusCode, header: resp.Header, body: raw}
	_ = json.Unmarshal(raw, &r.msg)
	return r
}

func post(t *testing.T, c *http.Client, s *Server, h http.Header, body any) result {
	t.Helper()
	return do(t, c, http.MethodPost, s.URL, h, body)
}

func wantNoViolations(t *testing.T, h *Handler) {
	t.Helper()
	if err := h.CheckNoViolations(); err != nil {
		t.Fatal(err)
	}
}

func wantStatusCode(t *testing.T, r result, status, code int) {
	t.Helper()
	if r.status != status || r.rpcCode() != code {
		t.Fatalf("got status %d code %d, want %d %d; body %s", r.status, r.rpcCode(), status, code, r.body)
	}
}

// closesWithin checks that Close returns promptly.
func closesWithin(t *testing.T, s *Server, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
	t.Logf("Close took %v", time.Since(start))
}

func sseEvents(t *testing.T, body []byte) (comments []string, events []string) {
	t.Helper()
	var data []string
	has := false
	for _, line := range strings.Split(string(body), "\n") {
		switch {
		case line == "":
			if has {
				events = append(events, strings.Join(data, "\n"))
			}
			data, has = nil, false
		case strings.HasPrefix(line, ":"):
			comments = append(comments, line)
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			has = true
		}
	}
	return comments, events
}
