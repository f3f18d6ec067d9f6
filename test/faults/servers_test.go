package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// A server starts one hostile MCP endpoint on 127.0.0.1, registers its
// shutdown with tb.Cleanup and returns the endpoint URL.
type server func(tb testing.TB) string

// challenge is the refusal of the servers that want the marker.
const challenge = `Bearer realm="faults"`

func tool(name string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
	return b
}

func tools(names ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = tool(n)
	}
	return out
}

// rawTool is a tool named name with the given inputSchema text.
func rawTool(name, schema string) json.RawMessage {
	n, _ := json.Marshal(name)
	return json.RawMessage(`{"name":` + string(n) + `,"inputSchema":` + schema + `}`)
}

// mock is the strict mcptest server with opts. Unless the row sets its own,
// it serves tool "a" and wants the marker as its bearer token, so the
// anonymous auth probe is refused and the fault meets authenticated traffic.
func mock(opts mcptest.Options) server {
	return func(tb testing.TB) string {
		if opts.Tools == nil {
			opts.Tools = tools("a")
		}
		if opts.BearerToken == "" {
			opts.BearerToken = marker
		}
		if opts.Challenge == "" {
			opts.Challenge = challenge
		}
		s := mcptest.NewServer(opts)
		tb.Cleanup(s.Close)
		return s.URL
	}
}

// rpcReq is the part of a request an interceptor looks at.
type rpcReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Cursor string `json:"cursor"`
	} `json:"params"`
	Auth string `json:"-"` // the Authorization header value
}

// idText is the request id, or null.
func (q rpcReq) idText() string {
	if len(q.ID) == 0 {
		return "null"
	}
	return string(q.ID)
}

// intercept wraps the strict mock (serving tool "a", wanting the marker):
// answer sees every request that carries credentials and reports whether it
// answered it itself; the rest go to the mock. Anonymous requests always go
// to the mock, so the auth probe is refused as usual.
func intercept(answer func(w http.ResponseWriter, r *http.Request, q rpcReq) bool) server {
	return interceptOpts(mcptest.Options{}, answer)
}

func interceptOpts(opts mcptest.Options, answer func(w http.ResponseWriter, r *http.Request, q rpcReq) bool) server {
	return func(tb testing.TB) string {
		if opts.Tools == nil {
			opts.Tools = tools("a")
		}
		opts.BearerToken, opts.Challenge = marker, challenge
		m := mcptest.NewHandler(opts)
		ctx, cancel := context.WithCancel(context.Background())
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			var q rpcReq
			_ = json.Unmarshal(body, &q)
			q.Auth = r.Header.Get("Authorization")
			if q.Auth != "" && answer(w, r, q) {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			m.ServeHTTP(w, r)
		}))
		// Request contexts end when the server stops, so a stream ends.
		ts.Config.BaseContext = func(net.Listener) context.Context { return ctx }
		ts.Start()
		tb.Cleanup(func() {
			cancel()
			ts.CloseClientConnections()
			ts.Close()
		})
		return ts.URL + "/mcp"
	}
}

// modernBody is a JSON-RPC response carrying a complete modern result made
// of the given members (JSON text without braces).
func modernBody(id, members string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{` + members +
		`,"resultType":"complete","ttlMs":0,"cacheScope":"public"}}`)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// onList answers tools/list with the tools members produced by list; every
// other request goes to the mock.
func onList(list func(q rpcReq) []byte) server {
	return intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
		if q.Method != "tools/list" {
			return false
		}
		writeJSON(w, http.StatusOK, list(q))
		return true
	})
}

// trickle writes head, then pad one byte at a time every 100 ms until the
// client or the server goes away.
func trickle(w http.ResponseWriter, r *http.Request, head []byte, pad byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_, _ = w.Write(head)
	for rc.Flush() == nil {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := w.Write([]byte{pad}); err != nil {
			return
		}
	}
}

// rawConn is a TCP server that is not HTTP-shaped: handle gets each
// connection after the request head was read from it.
func rawConn(handle func(c net.Conn, stop <-chan struct{})) server {
	return func(tb testing.TB) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		stop := make(chan struct{})
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			conns = map[net.Conn]bool{}
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns[c] = true
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						c.Close()
						mu.Lock()
						delete(conns, c)
						mu.Unlock()
					}()
					if readHead(c) == nil {
						handle(c, stop)
					}
				}()
			}
		}()
		tb.Cleanup(func() {
			close(stop)
			ln.Close()
			mu.Lock()
			for c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
		})
		return "http://" + ln.Addr().String() + "/mcp"
	}
}

// readHead reads an HTTP request head and up to 64 KiB of body.
func readHead(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 64<<10))
	return nil
}

// waitGone blocks until the peer closes c, stop closes, or 20 s pass.
func waitGone(c net.Conn, stop <-chan struct{}) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, _ = io.Copy(io.Discard, c)
	}()
	select {
	case <-done:
	case <-stop:
		c.Close()
		<-done
	}
}

// refused is a URL on which nothing listens.
func refused(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// serverInfoMeta is a result _meta member naming the server.
func serverInfoMeta(name, version string) string {
	b, _ := json.Marshal(map[string]any{mcp.MetaServerInfo: map[string]string{"name": name, "version": version}})
	return `"_meta":` + string(b)
}

// echoAuth serves the Authorization header it receives back in every
// server-controlled string it can: tool names, titles, descriptions,
// annotations, schema text and serverInfo.
func echoAuth() server {
	return intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
		a := q.Auth
		tok := strings.TrimPrefix(a, "Bearer ")
		switch q.Method {
		case "server/discover":
			writeJSON(w, http.StatusOK, modernBody(q.idText(),
				`"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},`+serverInfoMeta(a, tok)))
		case "tools/list":
			schema := map[string]any{"type": "object", "title": a, "description": a,
				"properties": map[string]any{tok: map[string]any{"type": "string", "default": tok, "enum": []string{a, tok}, "description": a}},
				"required":   []string{tok}}
			list := []any{
				map[string]any{"name": a, "description": a, "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": tok, "title": tok, "description": "token " + tok, "inputSchema": schema,
					"annotations": map[string]any{"title": a}, "outputSchema": schema},
				map[string]any{"name": "a", "description": a, "inputSchema": schema},
			}
			b, _ := json.Marshal(list)
			writeJSON(w, http.StatusOK, modernBody(q.idText(), `"tools":`+string(b)+`,`+serverInfoMeta(tok, a)))
		default:
			return false
		}
		return true
	})
}
