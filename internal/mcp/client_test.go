package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wire serves a scripted answer per JSON-RPC method and records requests.
type wire struct {
	t       *testing.T
	answers map[string]func(w http.ResponseWriter, req map[string]any)
	seen    []recorded
}

type recorded struct {
	method string
	header http.Header
	body   map[string]any
}

func (s *wire) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &req)
	method, _ := req["method"].(string)
	s.seen = append(s.seen, recorded{method, r.Header.Clone(), req})
	if f, ok := s.answers[method]; ok {
		f(w, req)
		return
	}
	http.Error(w, "unscripted", http.StatusTeapot)
}

func newWire(t *testing.T, answers map[string]func(http.ResponseWriter, map[string]any)) (*wire, *Client) {
	s := &wire{t: t, answers: answers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := NewClient(&http.Client{}, srv.URL+"/mcp", Implementation{"driftd", "test"}, Limits{MaxResponseBytes: 1 << 16}, nil)
	t.Cleanup(c.CloseIdleConnections)
	return s, c
}

func result(res string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, req map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":%s}`, req["id"], res)
	}
}

func rpcError(status, code int, data string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, req map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if data == "" {
			data = "null"
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"error":{"code":%d,"message":"m","data":%s}}`, req["id"], code, data)
	}
}

func plain(status int, body string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) { http.Error(w, body, status) }
}

const modernDiscover = `{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{},"resultType":"complete","ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`

var legacyInit = map[string]func(http.ResponseWriter, map[string]any){
	"initialize": func(w http.ResponseWriter, req map[string]any) {
		w.Header().Set("Mcp-Session-Id", "sess-1")
		result(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"9"}}`)(w, req)
	},
	"notifications/initialized": func(w http.ResponseWriter, _ map[string]any) { w.WriteHeader(http.StatusAccepted) },
}

func with(base map[string]func(http.ResponseWriter, map[string]any), method string, f func(http.ResponseWriter, map[string]any)) map[string]func(http.ResponseWriter, map[string]any) {
	m := map[string]func(http.ResponseWriter, map[string]any){}
	for k, v := range base {
		m[k] = v
	}
	m[method] = f
	return m
}

func TestModernEnvelope(t *testing.T) {
	s, c := newWire(t, map[string]func(http.ResponseWriter, map[string]any){"server/discover": result(modernDiscover)})
	sess, err := c.Connect(context.Background())
	if err != nil || sess.Era != EraModern || sess.ServerInfo.Name != "s" {
		t.Fatalf("Connect = %+v, %v", sess, err)
	}
	got := s.seen[0]
	meta := got.body["params"].(map[string]any)["_meta"].(map[string]any)
	if meta[MetaProtocolVersion] != ModernVersion || got.header.Get(HeaderProtocolVersion) != ModernVersion {
		t.Fatalf("version: meta %v header %q", meta[MetaProtocolVersion], got.header.Get(HeaderProtocolVersion))
	}
	if caps, ok := meta[MetaClientCapabilities].(map[string]any); !ok || len(caps) != 0 {
		t.Fatalf("clientCapabilities = %v", meta[MetaClientCapabilities])
	}
	if info := meta[MetaClientInfo].(map[string]any); info["name"] != "driftd" {
		t.Fatalf("clientInfo = %v", info)
	}
	if _, top := got.body["_meta"]; top {
		t.Fatal("_meta sent beside params")
	}
	for h, want := range map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json", HeaderMethod: "server/discover"} {
		if got.header.Get(h) != want {
			t.Errorf("%s = %q, want %q", h, got.header.Get(h), want)
		}
	}
	if got.header.Get(HeaderName) != "" {
		t.Error("Mcp-Name sent on server/discover")
	}
}

func TestNameHeaderEncoded(t *testing.T) {
	s, c := newWire(t, map[string]func(http.ResponseWriter, map[string]any){"tools/call": result(`{"content":[]}`)})
	_, _, err := c.do(context.Background(), call{era: EraModern, version: ModernVersion, method: "tools/call", params: map[string]any{"name": "Hello, 世界"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.seen[0].header.Get(HeaderName); got != "=?base64?SGVsbG8sIOS4lueVjA==?=" {
		t.Fatalf("Mcp-Name = %q", got)
	}
}

func TestConnectEras(t *testing.T) {
	type answers = map[string]func(http.ResponseWriter, map[string]any)
	for _, tc := range []struct {
		name     string
		answers  answers
		era      Era
		version  string
		reason   Reason // for failures
		discover int    // server/discover requests expected
	}{
		{"modern", answers{"server/discover": result(modernDiscover)}, EraModern, ModernVersion, "", 1},
		{"-32601 falls back", with(legacyInit, "server/discover", rpcError(200, -32601, "")), EraLegacy, "2025-06-18", "", 1},
		{"400 text/plain falls back", with(legacyInit, "server/discover", plain(400, "Bad Request: Unsupported protocol version")), EraLegacy, "2025-06-18", "", 1},
		{"-32000 falls back", with(legacyInit, "server/discover", rpcError(400, -32000, "")), EraLegacy, "2025-06-18", "", 1},
		{"404 falls back", with(legacyInit, "server/discover", plain(404, "Invalid session ID")), EraLegacy, "2025-06-18", "", 1},
		{"-32022 legacy-only falls back", with(legacyInit, "server/discover", rpcError(400, -32022, `{"supported":["2025-06-18"],"requested":"2026-07-28"}`)), EraLegacy, "2025-06-18", "", 1},
		{"discover legacy-only falls back", with(legacyInit, "server/discover", result(`{"supportedVersions":["2025-11-25"],"capabilities":{}}`)), EraLegacy, "2025-06-18", "", 1},
		{"discover {} falls back", with(legacyInit, "server/discover", result(`{}`)), EraLegacy, "2025-06-18", "", 1},
		{"discover naming no known version falls back", with(legacyInit, "server/discover", result(`{"supportedVersions":["2099-01-01"],"capabilities":{}}`)), EraLegacy, "2025-06-18", "", 1},
		{"discover naming no known version, initialize fails", answers{"server/discover": result(`{"supportedVersions":["2099-01-01"],"capabilities":{}}`)}, "", "", ReasonProtocolUnsupported, 1},
		{"-32022 nothing shared", answers{"server/discover": rpcError(400, -32022, `{"supported":["1999-01-01"],"requested":"2026-07-28"}`)}, "", "", ReasonProtocolUnsupported, 1},
		{"-32022 modern retried then refused", answers{"server/discover": rpcError(400, -32022, `{"supported":["2026-07-28"],"requested":"2026-07-28"}`)}, "", "", ReasonProtocolUnsupported, 2},
		{"-32020 is modern: no fallback", with(legacyInit, "server/discover", rpcError(400, -32020, "")), "", "", ReasonJSONRPCError, 1},
		{"401 is auth, not era", with(legacyInit, "server/discover", plain(401, "no")), "", "", ReasonAuthRequired, 1},
		{"redirect not followed", answers{"server/discover": func(w http.ResponseWriter, r map[string]any) {
			w.Header().Set("Location", "/elsewhere?token=x")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}}, "", "", ReasonHTTPStatus, 1},
		{"initialize refuses version", with(with(legacyInit, "initialize", result(`{"protocolVersion":"2023-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)), "server/discover", rpcError(200, -32601, "")), "", "", ReasonProtocolUnsupported, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newWire(t, tc.answers)
			sess, err := c.Connect(context.Background())
			discovers := 0
			for _, r := range s.seen {
				if r.method == "server/discover" {
					discovers++
				}
				if r.method == "" {
					t.Errorf("a request to an unscripted path or a redirect target was sent")
				}
			}
			if discovers != tc.discover {
				t.Errorf("server/discover sent %d times, want %d", discovers, tc.discover)
			}
			if tc.reason != "" {
				if err == nil || Classify(err) != tc.reason {
					t.Fatalf("err = %v (%s), want reason %s", err, Classify(err), tc.reason)
				}
				return
			}
			if err != nil || sess.Era != tc.era || sess.Version != tc.version {
				t.Fatalf("Connect = %+v, %v", sess, err)
			}
			if tc.era == EraLegacy {
				checkLegacyHandshake(t, s.seen)
			}
		})
	}
}

func checkLegacyHandshake(t *testing.T, seen []recorded) {
	t.Helper()
	var methods []string
	for _, r := range seen {
		methods = append(methods, r.method)
		switch r.method {
		case "initialize":
			if v := r.header.Get(HeaderProtocolVersion); v != "" {
				t.Errorf("initialize carried MCP-Protocol-Version %q", v)
			}
			p := r.body["params"].(map[string]any)
			if p["protocolVersion"] == "" || p["capabilities"] == nil || p["clientInfo"] == nil {
				t.Errorf("initialize params = %v", p)
			}
		case "notifications/initialized":
			if _, hasID := r.body["id"]; hasID {
				t.Error("notifications/initialized carries an id")
			}
			if r.header.Get(HeaderSessionID) != "sess-1" || r.header.Get(HeaderProtocolVersion) != "2025-06-18" {
				t.Errorf("initialized headers: session %q version %q", r.header.Get(HeaderSessionID), r.header.Get(HeaderProtocolVersion))
			}
		}
	}
	if got := strings.Join(methods, ","); !strings.HasSuffix(got, "initialize,notifications/initialized") {
		t.Errorf("sequence = %s", got)
	}
}

func TestResponses(t *testing.T) {
	sse := func(events ...string) func(http.ResponseWriter, map[string]any) {
		return func(w http.ResponseWriter, req map[string]any) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range events {
				io.WriteString(w, strings.ReplaceAll(e, "{{id}}", fmt.Sprint(req["id"])))
			}
		}
	}
	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter, map[string]any)
		reason Reason
		notes  int
	}{
		{"json", result(`{"tools":[]}`), "", 0},
		{"sse with comments, priming, notifications", sse(
			": keep-alive\n\n",
			"id: 1\ndata:\n\n",
			`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`+"\n\n",
			`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`+"\r\n\r\n",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":{{id}},\"result\":{\"tools\":[]}}\n\n"), "", 2},
		{"sse with CR line endings", sse(
			": keep-alive\r\r",
			`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`+"\r\r",
			"event: message\rdata: {\"jsonrpc\":\"2.0\",\rdata: \"id\":{{id}},\"result\":{\"tools\":[]}}\r\r"), "", 1},
		{"sse ends without response", sse(": only a comment\n\n"), ReasonInvalidResponse, 0},
		{"sse wrong id", sse(`data: {"jsonrpc":"2.0","id":999,"result":{}}` + "\n\n"), ReasonInvalidResponse, 0},
		{"error in 400", rpcError(400, -32602, ""), ReasonJSONRPCError, 0},
		{"error in 200", rpcError(200, -32603, ""), ReasonJSONRPCError, 0},
		{"result in 500", func(w http.ResponseWriter, req map[string]any) {
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{}}`, req["id"])
		}, ReasonHTTPStatus, 0},
		{"plain 503", plain(503, "down"), ReasonHTTPStatus, 0},
		{"html 200", plain(200, "<html>"), ReasonInvalidResponse, 0},
		{"jsonrpc 1.0", func(w http.ResponseWriter, req map[string]any) {
			fmt.Fprintf(w, `{"jsonrpc":"1.0","id":%v,"result":{}}`, req["id"])
		}, ReasonInvalidResponse, 0},
		{"result and error", func(w http.ResponseWriter, req map[string]any) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{},"error":{"code":1,"message":"x"}}`, req["id"])
		}, ReasonInvalidResponse, 0},
		{"null id error", func(w http.ResponseWriter, req map[string]any) {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`)
		}, ReasonJSONRPCError, 0},
		{"too large", func(w http.ResponseWriter, req map[string]any) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{"pad":"%s"}}`, req["id"], strings.Repeat("x", 1<<17))
		}, ReasonResponseTooLarge, 0},
		{"HTML page", func(w http.ResponseWriter, req map[string]any) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{"tools":[]}}`, req["id"])
		}, ReasonInvalidResponse, 0},
		{"not a ListToolsResult", result(`{"tools":{}}`), ReasonInvalidResponse, 0},
		{"cursor not a string", result(`{"tools":[],"nextCursor":5}`), ReasonInvalidResponse, 0},
		{"401 challenge", func(w http.ResponseWriter, _ map[string]any) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="https://a.example/prm", scope="r w"`)
			w.WriteHeader(401)
		}, ReasonAuthRequired, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newWire(t, map[string]func(http.ResponseWriter, map[string]any){"tools/list": tc.answer})
			s := &Session{c: c, Era: EraModern, Version: ModernVersion}
			page, err := s.ListTools(context.Background(), "")
			if Classify(err) != tc.reason {
				t.Fatalf("err = %v (reason %q), want %q", err, Classify(err), tc.reason)
			}
			if page.Exchange.Notifications != tc.notes {
				t.Errorf("notifications = %d, want %d", page.Exchange.Notifications, tc.notes)
			}
			var me *Error
			if tc.reason == ReasonAuthRequired && (!errors.As(err, &me) || me.Challenge.ResourceMetadata != "https://a.example/prm" || me.Challenge.Scope != "r w" || me.Challenge.Status != 401) {
				t.Fatalf("challenge = %+v", me.Challenge)
			}
		})
	}
}

func TestClassifyTransportErrors(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(&http.Client{}, "http://"+addr+"/mcp", Implementation{"d", "t"}, Limits{}, nil)
	_, _, err := c.do(context.Background(), call{era: EraModern, version: ModernVersion, method: "tools/list"})
	if Classify(err) != ReasonConnect {
		t.Errorf("refused: %v -> %s", err, Classify(err))
	}

	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	c = NewClient(&http.Client{}, tlsSrv.URL, Implementation{"d", "t"}, Limits{}, nil)
	_, _, err = c.do(context.Background(), call{era: EraModern, version: ModernVersion, method: "tools/list"})
	if Classify(err) != ReasonTLS {
		t.Errorf("untrusted certificate: %v -> %s", err, Classify(err))
	}
	c.CloseIdleConnections()

	if got := Classify(&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}); got != ReasonDNS {
		t.Errorf("DNS error -> %s", got)
	}

	var hits atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only after the body
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	c = NewClient(&http.Client{}, slow.URL, Implementation{"d", "t"}, Limits{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err = c.do(ctx, call{era: EraModern, version: ModernVersion, method: "tools/list"})
	if Classify(err) != ReasonTimeout {
		t.Errorf("deadline: %v -> %s", err, Classify(err))
	}
	c.CloseIdleConnections()
}

// TestBodies: a body read with or without its declared size holds the
// bytes, cannot be appended into the rest of its lent buffer, and reads NUL
// bytes once released; without Bodies each body is its own.
var errBudget = errors.New("budget")

func TestBodies(t *testing.T) {
	read := func(bs *Bodies, body string, size int64) []byte {
		t.Helper()
		b, err := readBody(strings.NewReader(body), bs, size)
		if err != nil || string(b) != body {
			t.Fatalf("readBody(%q, size %d) = %q, %v", body, size, b, err)
		}
		return b
	}
	var none *Bodies
	read(none, `{"a":1}`, -1)
	read(none, `{"a":1}`, 7)
	read(none, `{"a":1}`, 3) // longer than declared: all of it, never cut
	// Unknown length, read in pieces (lent) or into a slice that grows
	// (not lent): empty, one byte, a piece exactly, one past it, many, and
	// past the first slice's 8 pieces; read twice so the pooled pieces are
	// reused with stale bytes in them. Nothing can be appended into what
	// follows a body.
	for range 2 {
		for _, bs := range []*Bodies{none, {}} {
			for _, n := range []int{0, 1, chunkSize, chunkSize + 1, 5*chunkSize + 17, 8 * chunkSize, 19*chunkSize + 5} {
				body := strings.Repeat("0123456789abcdef", n/16+1)[:n]
				if b := read(bs, body, -1); cap(b) != len(b) {
					t.Fatalf("a body of %d bytes has capacity %d", n, cap(b))
				}
			}
			if bs != nil {
				bs.Release()
			}
		}
	}
	failing := io.MultiReader(strings.NewReader(strings.Repeat("y", chunkSize+3)), iotest.ErrReader(errBudget))
	if b, err := readBody(failing, none, -1); err != errBudget || len(b) != chunkSize+3 {
		t.Fatalf("a read failing after %d bytes: %d bytes, %v", chunkSize+3, len(b), err)
	}
	if b, err := readBody(strings.NewReader(`{"a"`), none, 7); err != io.ErrUnexpectedEOF || string(b) != `{"a"` {
		t.Fatalf("short body: %q, %v", b, err)
	}
	bs := &Bodies{}
	a, b := read(bs, `{"a":1}`, 7), read(bs, `[2]`, -1)
	if cap(a) != len(a) || cap(b) != len(b) {
		t.Fatalf("lent %q (cap %d), %q (cap %d)", a, cap(a), b, cap(b))
	}
	bs.Release()
	for _, x := range [][]byte{a, b} {
		for _, c := range x {
			if c != 0 {
				t.Fatalf("released buffer still reads %q", x)
			}
		}
	}
	if len(bs.lent) != 0 {
		t.Fatal("Release kept buffers")
	}
}
