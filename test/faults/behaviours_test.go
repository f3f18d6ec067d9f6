package faults_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// Exit codes of DESIGN §3.
const (
	exitOK       = 0
	exitFindings = 1
	exitNoProbe  = 3
)

// A behaviour is one hostile server and what `driftd check --timeout 2s
// --json` must make of it. The manifest declares tool "a".
type behaviour struct {
	name   string
	srv    server
	code   int    // exit code
	reason string // failure_reason; "" means the run succeeds
	rule   string // a finding that must be in the report ("" for none)
	// mayTimeOut accepts a timeout (exit 3) too: the row is about memory,
	// and a loaded 2-core machine decides whether it finishes in 2 s.
	mayTimeOut bool
	// timeout overrides the probe deadline of 2 s.
	timeout time.Duration
	// slowMock marks a row about what a size becomes, not about the
	// deadline, whose in-process mock takes most of 2 s to serve it under
	// the race detector (1.3-1.4 s alone; beside the rest of the race
	// suite on 2 cores it once went past, in CI). TestCheck gives it a
	// 10 s deadline; the daemon's fleet, never run under the race
	// detector, keeps it at 2 s.
	slowMock bool
	// knownFailure, when set, says why driftd fails this row today: the
	// row is skipped with that reason (DRIFTD_FAULTS_KNOWN=1 runs it).
	knownFailure string
	// daemonKnown, when set, says why this behaviour as a daemon target
	// breaks a bound today (its state files' size or its run's duration):
	// those checks then log instead of failing.
	daemonKnown string
}

var (
	churn      atomic.Int64 // listings served by the churning-schemas row
	bigOnce    sync.Once
	bigTools   []json.RawMessage // 100,000 tiny tools
	manyVers   []byte            // a -32022 error body offering 1,000,000 versions
	fatPage    []byte            // the tools of one ~4 MiB page, with a %d hole
	dupTools   []json.RawMessage // 20,000 tools named "a"
	hugeEnum   json.RawMessage   // inputSchema with a 100,000-value enum
	deepSchema json.RawMessage   // inputSchema nested 10,000 deep
)

func bigInputs() {
	bigOnce.Do(func() {
		bigTools = make([]json.RawMessage, 100_000)
		for i := range bigTools {
			bigTools[i] = json.RawMessage(fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i))
		}
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2026-07-28","supported":[`)
		for i := range 1_000_000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"1999-%07d"`, i)
		}
		b.WriteString(`]}}}`)
		manyVers = bytes.Clone(b.Bytes()) // b is reused below
		desc := strings.Repeat("d", 1<<20)
		b.Reset()
		b.WriteByte('[')
		for i := range 4 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"p%%d_%d","description":"%s","inputSchema":{"type":"object"}}`, i, desc)
		}
		b.WriteByte(']')
		fatPage = b.Bytes()
		dupTools = make([]json.RawMessage, 20_000)
		for i := range dupTools {
			dupTools[i] = tool("a")
		}
		var e bytes.Buffer
		e.WriteString(`{"type":"object","properties":{"x":{"enum":[`)
		for i := range 100_000 {
			if i > 0 {
				e.WriteByte(',')
			}
			fmt.Fprintf(&e, `"v%d"`, i)
		}
		e.WriteString(`]}}}`)
		hugeEnum = e.Bytes()
		deepSchema = json.RawMessage(strings.Repeat(`{"type":"object","properties":{"x":`, 10_000) + `{}` + strings.Repeat(`}}`, 10_000))
	})
}

// behaviours are the rows, only those whose name matches the regular
// expression DRIFTD_FAULTS_ROWS when it is set (to bisect the daemon).
func behaviours() []behaviour {
	all := allBehaviours()
	re := os.Getenv("DRIFTD_FAULTS_ROWS")
	if re == "" {
		return all
	}
	match := regexp.MustCompile(re)
	var out []behaviour
	for _, b := range all {
		if match.MatchString(b.name) {
			out = append(out, b)
		}
	}
	return out
}

func allBehaviours() []behaviour {
	bigInputs()
	one := func(s string) []json.RawMessage { return []json.RawMessage{json.RawMessage(s)} }
	onDiscover := func(answer func(w http.ResponseWriter, q rpcReq)) server {
		return intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "server/discover" {
				return false
			}
			answer(w, q)
			return true
		})
	}
	list := func(members string) server {
		return onList(func(q rpcReq) []byte { return modernBody(q.idText(), members) })
	}
	return []behaviour{
		// The mock's faults.
		{name: "fault oversized", srv: mock(mcptest.Options{Fault: mcptest.FaultOversized}), code: exitNoProbe, reason: "response_too_large"},
		{name: "fault oversized on tools/list", srv: mock(mcptest.Options{Fault: mcptest.FaultOversized, FaultMethods: []string{"tools/list"}}), code: exitNoProbe, reason: "response_too_large"},
		{name: "fault invalid JSON", srv: mock(mcptest.Options{Fault: mcptest.FaultInvalidJSON}), code: exitNoProbe, reason: "invalid_response"},
		{name: "fault wrong id", srv: mock(mcptest.Options{Fault: mcptest.FaultWrongID}), code: exitNoProbe, reason: "invalid_response"},
		{name: "fault wrong id over SSE", srv: mock(mcptest.Options{Fault: mcptest.FaultWrongID, SSE: true}), code: exitNoProbe, reason: "invalid_response"},
		{name: "fault SSE never answers", srv: mock(mcptest.Options{Fault: mcptest.FaultSSENeverAnswers}), code: exitNoProbe, reason: "timeout"},
		{name: "fault SSE never answers tools/list", srv: mock(mcptest.Options{Fault: mcptest.FaultSSENeverAnswers, FaultMethods: []string{"tools/list"}}), code: exitNoProbe, reason: "timeout"},
		{name: "fault trickle", srv: mock(mcptest.Options{Fault: mcptest.FaultTrickle}), code: exitNoProbe, reason: "timeout"},
		{name: "fault never-ending body", srv: mock(mcptest.Options{Fault: mcptest.FaultNeverEnding}), code: exitNoProbe, reason: "response_too_large"},
		{name: "fault redirect", srv: mock(mcptest.Options{Fault: mcptest.FaultRedirect}), code: exitNoProbe, reason: "http_status", rule: "MCP-CONF-REDIRECT"},
		{name: "fault cursor loop", srv: mock(mcptest.Options{Tools: tools("a", "b"), PageSize: 1, Fault: mcptest.FaultCursorLoop}), code: exitFindings, rule: "MCP-CONF-PAGINATION-LOOP"},
		{name: "fault odd JSON-RPC error", srv: mock(mcptest.Options{Fault: mcptest.FaultRPCErrorOdd}), code: exitNoProbe, reason: "invalid_response"},
		{name: "fault HTTP 500 on tools/list", srv: mock(mcptest.Options{Fault: mcptest.FaultStatus500, FaultMethods: []string{"tools/list"}}), code: exitNoProbe, reason: "http_status"},
		{name: "fault HTTP 500 everywhere", srv: mock(mcptest.Options{Fault: mcptest.FaultStatus500}), code: exitNoProbe, reason: "http_status"},

		// The mock's other knobs.
		{name: "legacy server", srv: mock(mcptest.Options{Legacy: true}), code: exitOK, rule: "MCP-DRIFT-LEGACY-SERVER"},
		{name: "legacy with sessions", srv: mock(mcptest.Options{Legacy: true, Sessions: true}), code: exitOK, rule: "MCP-DRIFT-LEGACY-SERVER"},
		{name: "legacy discover method-not-found", srv: mock(mcptest.Options{Legacy: true, Sessions: true, LegacyDiscover: "method-not-found"}), code: exitOK, rule: "MCP-DRIFT-LEGACY-SERVER"},
		{name: "legacy discover-legacy-only", srv: mock(mcptest.Options{Legacy: true, Sessions: true, LegacyDiscover: "discover-legacy-only"}), code: exitOK, rule: "MCP-DRIFT-LEGACY-SERVER"},
		{name: "legacy with trickle", srv: mock(mcptest.Options{Legacy: true, Sessions: true, Fault: mcptest.FaultTrickle, FaultMethods: []string{"tools/list"}}), code: exitNoProbe, reason: "timeout"},
		{name: "reject first modern request", srv: mock(mcptest.Options{RejectFirstModern: true}), code: exitOK},
		{name: "no version in common", srv: mock(mcptest.Options{SupportedVersions: []string{"1999-01-01"}}), code: exitNoProbe, reason: "protocol_unsupported", rule: "MCP-DRIFT-PROTOCOL-UNSUPPORTED"},
		{name: "SSE responses", srv: mock(mcptest.Options{SSE: true}), code: exitOK},
		// Slow but inside the deadline: the five requests of a run take 1 s of 2.
		{name: "delay 200ms", srv: mock(mcptest.Options{Delay: 200 * time.Millisecond}), code: exitOK},
		// Slow past the deadline once listed: timeout, never success.
		{name: "delay 700ms", srv: mock(mcptest.Options{Delay: 700 * time.Millisecond}), code: exitNoProbe, reason: "timeout"},
		{name: "delay beyond deadline", srv: mock(mcptest.Options{Delay: 10 * time.Second}), code: exitNoProbe, reason: "timeout"},
		{name: "wrong token 401", srv: mock(mcptest.Options{BearerToken: "someone-else"}), code: exitNoProbe, reason: "auth_required"},
		{name: "wrong token 403 no challenge", srv: mock(mcptest.Options{BearerToken: "someone-else", AuthStatus: 403, Challenge: " "}), code: exitNoProbe, reason: "auth_required"},
		{name: "401 with 64 KiB WWW-Authenticate", srv: mock(mcptest.Options{BearerToken: "someone-else", Challenge: `Bearer realm="` + strings.Repeat("r", 64<<10) + `"`}), code: exitNoProbe, reason: "auth_required"},
		{name: "tool set varies per connection", srv: mock(mcptest.Options{Tools: tools("a", "b"), OtherConnTools: tools("a", "c")}), code: exitFindings, rule: "MCP-CONF-TOOLSET-VARIES"},
		{name: "order varies per connection", srv: mock(mcptest.Options{Tools: tools("a", "b", "c"), ReverseOtherConns: true}), code: exitOK, rule: "MCP-CONF-ORDER-VARIES"},
		{name: "no cache hints, result type, server info", srv: mock(mcptest.Options{OmitCacheHints: true, OmitResultType: true, OmitServerInfo: true}), code: exitOK, rule: "MCP-CONF-RESULT-TYPE"},
		{name: "bogus resultType, ttl and scope", srv: mock(mcptest.Options{ResultType: "bogus", TTLMs: new(-1), CacheScope: "none"}), code: exitOK, rule: "MCP-CONF-CACHE-HINTS"},
		{name: "control characters in serverInfo", srv: mock(mcptest.Options{ServerName: "evil\x1b]0;pwn\x07\u202e\r\nX-Injected: 1\x00", ServerVersion: strings.Repeat("\u202e\x1b[2J", 10_000)}), code: exitOK},
		{name: "60 pages of one tool, cap 50", slowMock: true, srv: mock(mcptest.Options{Tools: tools(names(60)...), PageSize: 1}), code: exitOK, rule: "MCP-DRIFT-PAGINATION-CAPPED"},

		// Sizes and shapes the mock serves as asked.
		{name: "100,000 tiny tools in one page", srv: mock(mcptest.Options{Tools: bigTools}), code: exitFindings, rule: "MCP-DRIFT-TOOL-MISSING", mayTimeOut: true,
			daemonKnown: "the state file holds a bounded name and a hash per served tool (docs/daemon.md: about 250 B a tool), 8 MiB for 100,000 tools, above the suite's flat 1 MiB (found by this suite)"},
		{name: "100,001 tools over 3 pages", slowMock: true, srv: mock(mcptest.Options{Tools: append(tools("a"), bigTools...), PageSize: 40_000}), code: exitNoProbe, reason: "response_too_large"},
		{name: "tool name of 1 MiB", slowMock: true, srv: mock(mcptest.Options{Tools: append(tools("a"), tool(strings.Repeat("n", 1<<20)))}), code: exitOK, rule: "MCP-CONF-TOOL-NAME-FORMAT"},
		{name: "20,000 duplicate tool names", srv: mock(mcptest.Options{Tools: dupTools}), code: exitFindings},
		{name: "control characters in tool names", srv: mock(mcptest.Options{Tools: append(tools("a"), tools("\x1b[31mred\x1b[0m", "cr\rlf\nnul\x00", "rtl\u202eexe.cod", "bell\x07")...)}), code: exitFindings, rule: "MCP-SEC-TERMINAL-ESCAPE"}, // an ESC in a name is an ERROR since issue 20
		{name: "non-UTF-8 tool name", srv: mock(mcptest.Options{Tools: append(tools("a"), json.RawMessage("{\"name\":\"bad\xff\xfe\",\"inputSchema\":{\"type\":\"object\"}}"))}), code: exitOK, rule: "MCP-CONF-TOOL-NAME-FORMAT"},
		{name: "$ref cycle", srv: mock(mcptest.Options{Tools: one(`{"name":"a","inputSchema":{"type":"object","$defs":{"p":{"$ref":"#/$defs/q"},"q":{"$ref":"#/$defs/p"}},"properties":{"x":{"$ref":"#/$defs/p"}}}}`)}), code: exitOK, rule: "MCP-DRIFT-SCHEMA-COMPATIBLE"},
		{name: "100,000-value enum", slowMock: true, srv: mock(mcptest.Options{Tools: []json.RawMessage{rawTool("a", string(hugeEnum))}}), code: exitOK, rule: "MCP-DRIFT-SCHEMA-COMPATIBLE"},
		{name: "property name of 1 MiB", slowMock: true, srv: mock(mcptest.Options{Tools: []json.RawMessage{rawTool("a", `{"type":"object","properties":{"`+strings.Repeat("p", 1<<20)+`":{"type":"string"}}}`)}}), code: exitOK, rule: "MCP-DRIFT-SCHEMA-COMPATIBLE"},
		{name: "10,000-deep schema", srv: list(`"tools":[` + string(rawTool("a", string(deepSchema))) + `]`), code: exitNoProbe, reason: "invalid_response"}, // 20,000 JSON levels: past encoding/json's 10,000

		// Custom servers, for what the mock lacks.
		{name: "connection refused", srv: refused, code: exitNoProbe, reason: "connect"},
		// A hang-up before any response byte is a connection failure, every time.
		{name: "accept then close", srv: rawConn(func(c net.Conn, _ <-chan struct{}) {}), code: exitNoProbe, reason: "connect"},
		{name: "reset mid-body", srv: rawConn(func(c net.Conn, _ <-chan struct{}) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":"))
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		}), code: exitNoProbe, reason: "invalid_response"},
		{name: "never sends headers", srv: rawConn(waitGone), code: exitNoProbe, reason: "timeout"},
		{name: "slowloris headers", srv: rawConn(func(c net.Conn, stop <-chan struct{}) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nX-Slow: "))
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}), code: exitNoProbe, reason: "timeout"},
		{name: "512 KiB bad header line", srv: rawConn(func(c net.Conn, _ <-chan struct{}) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + strings.Repeat("x", 512<<10) + "\r\n\r\n{}"))
		}), code: exitNoProbe, reason: "invalid_response"},
		{name: "3 offered unknown versions in -32022", srv: onDiscover(func(w http.ResponseWriter, q rpcReq) {
			writeJSON(w, http.StatusBadRequest, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2026-07-28","supported":["1999-01","1999-02","1999-03"]}}}`))
		}), code: exitNoProbe, reason: "protocol_unsupported", rule: "MCP-DRIFT-PROTOCOL-UNSUPPORTED"},
		// Decoding the 15 MB error body is about 0.9 s of CPU on its own;
		// beside the race suite and two other checks on 2 cores it once
		// took the run past the 2 s deadline. The row may time out; the one
		// after it, with a 10 s deadline, always checks the classification.
		{name: "1,000,000 offered versions in -32022", mayTimeOut: true, srv: onDiscover(func(w http.ResponseWriter, q rpcReq) {
			writeJSON(w, http.StatusBadRequest, fmt.Appendf(nil, string(manyVers), q.idText()))
		}), code: exitNoProbe, reason: "protocol_unsupported", rule: "MCP-DRIFT-PROTOCOL-UNSUPPORTED",
			daemonKnown: "decoding the 15 MB error body costs about 0.8 s of CPU that the deadline cannot interrupt; with ~60 hostile targets on 2 cores the daemon's run ended at 4.06 s, past deadline + 1 s (check alone: 0.8-0.9 s)"},
		{name: "1,000,000 offered versions in -32022, 10 s deadline", timeout: 10 * time.Second, srv: onDiscover(func(w http.ResponseWriter, q rpcReq) {
			writeJSON(w, http.StatusBadRequest, fmt.Appendf(nil, string(manyVers), q.idText()))
		}), code: exitNoProbe, reason: "protocol_unsupported", rule: "MCP-DRIFT-PROTOCOL-UNSUPPORTED"},
		{name: "JSON-RPC error then failing legacy initialize", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			switch q.Method {
			case "server/discover":
				writeJSON(w, http.StatusOK, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"error":{"code":-32601,"message":"Method not found"}}`))
			case "initialize":
				writeJSON(w, http.StatusOK, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"error":{"code":-32603,"message":"initialize exploded"}}`))
			default:
				http.Error(w, "no session", http.StatusBadRequest)
			}
			return true
		}), code: exitNoProbe, reason: "jsonrpc_error"},
		{name: "HTTP 200 empty body", srv: onList(func(rpcReq) []byte { return nil }), code: exitNoProbe, reason: "invalid_response"},
		{name: "result null", srv: onList(func(q rpcReq) []byte { return []byte(`{"jsonrpc":"2.0","id":` + q.idText() + `,"result":null}`) }), code: exitNoProbe, reason: "invalid_response"},
		{name: "tools not an array", srv: list(`"tools":{"a":{"inputSchema":{}}}`), code: exitNoProbe, reason: "invalid_response"},
		{name: "tools that are not objects", srv: list(`"tools":["a",1,null]`), code: exitFindings, rule: "MCP-CONF-TOOL-NAME"},
		// Issue 13: 64 changing 256 KiB schemas a run took the daemon to 7 GB.
		// Here 24 of them, new on every listing, so every parse misses the
		// schema caches: the daemon's memory must stay flat all the same.
		// Two listings of 6 MiB take about 2 s under the race detector on a
		// busy machine, so this row, about memory, has a 10 s deadline.
		{name: "churning 256 KiB schemas", timeout: 10 * time.Second, srv: onList(func(q rpcReq) []byte {
			n := churn.Add(1)
			var b strings.Builder
			b.WriteString(`"tools":[{"name":"a","inputSchema":{"type":"object"}}`)
			for i := range 24 {
				fmt.Fprintf(&b, `,{"name":"c%02d","inputSchema":{"type":"object","description":"%d-%s"}}`, i, n, strings.Repeat("s", 256<<10))
			}
			b.WriteString("]")
			return modernBody(q.idText(), b.String())
		}), code: exitOK, rule: "MCP-DRIFT-TOOL-UNDECLARED"},
		{name: "50 pages of ~4 MiB", srv: fiftyFatPages(), code: exitNoProbe, reason: "response_too_large", mayTimeOut: true},                         // max_run_bytes (64 MiB) stops it, if the deadline does not
		{name: "50 pages of ~4 MiB, 30 s deadline", timeout: 30 * time.Second, srv: fiftyFatPages(), code: exitNoProbe, reason: "response_too_large"}, // max_run_bytes (64 MiB) stops it
		{name: "echoes Authorization everywhere", srv: echoAuth(), code: exitFindings},
		{name: "echoes Authorization in a JSON-RPC error", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "tools/list" {
				return false
			}
			msg, _ := json.Marshal("denied for " + q.Auth)
			writeJSON(w, http.StatusOK, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"error":{"code":-32000,"message":`+string(msg)+`,"data":{"auth":`+string(msg)+`}}}`))
			return true
		}), code: exitNoProbe, reason: "jsonrpc_error"},
		{name: "echoes Authorization in a 500 body and header", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			w.Header().Set("X-Echo", q.Auth)
			w.Header().Set("WWW-Authenticate", `Bearer error="`+q.Auth+`"`)
			http.Error(w, "bad token "+q.Auth, http.StatusInternalServerError)
			return true
		}), code: exitNoProbe, reason: "http_status"},
		{name: "SSE with CR-only line endings", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "tools/list" {
				return false
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("event: message\rdata: " + string(modernBody(q.idText(), `"tools":[{"name":"a","inputSchema":{"type":"object"}}]`)) + "\r\r"))
			return true
		}), code: exitOK},
		{name: "SSE of endless notifications", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "tools/list" {
				return false
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			ev := bytes.Repeat([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"), 64)
			for r.Context().Err() == nil {
				if _, err := w.Write(ev); err != nil {
					break
				}
			}
			return true
		}), code: exitNoProbe, reason: "response_too_large"},
		{name: "gzip Content-Encoding garbage", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "tools/list" {
				return false
			}
			w.Header().Set("Content-Encoding", "gzip")
			writeJSON(w, http.StatusOK, []byte("\x1f\x8b\x08\x00garbage, not a gzip stream"))
			return true
		}), code: exitNoProbe, reason: "invalid_response"},
		{name: "wrong Content-Type", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "tools/list" {
				return false
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			w.Write(modernBody(q.idText(), `"tools":[{"name":"a","inputSchema":{"type":"object"}}]`))
			return true
		}), code: exitNoProbe, reason: "invalid_response"},
		{name: "slowloris body", srv: intercept(func(w http.ResponseWriter, r *http.Request, q rpcReq) bool {
			if q.Method != "tools/list" {
				return false
			}
			trickle(w, r, []byte(`{"jsonrpc":"2.0","id":`+q.idText()+`,"result":{"tools":[`), ' ')
			return true
		}), code: exitNoProbe, reason: "timeout"},
	}
}

// names are n tool names, "a" first.
func names(n int) []string {
	out := []string{"a"}
	for i := 1; i < n; i++ {
		out = append(out, fmt.Sprintf("t%d", i))
	}
	return out
}

// fiftyFatPages serves tools/list as 50 pages of ~4 MiB (fatPage), 200 MiB
// in all, the first page with the declared tool "a".
func fiftyFatPages() server {
	return onList(func(q rpcReq) []byte {
		n := 0
		fmt.Sscanf(q.Params.Cursor, "c%d", &n)
		members := `"tools":` + fmt.Sprintf(string(fatPage), n, n, n, n)
		if n == 0 {
			members = `"tools":[{"name":"a","inputSchema":{"type":"object"}},` + members[len(`"tools":[`):]
		}
		if n < 49 {
			members += fmt.Sprintf(`,"nextCursor":"c%d"`, n+1)
		}
		return modernBody(q.idText(), members)
	})
}
