package probe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// answerDiscover puts a front before next that answers server/discover
// with HTTP 200 and result, as some 2025 servers answer any method.
func answerDiscover(result string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &req) == nil && req.Method == "server/discover" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// TestDiscoverWithoutKnownVersionIsLegacy: a 200 DiscoverResult naming no
// version driftd speaks, or none at all, is legacy evidence: initialize is
// tried, the server is compared, and nothing says it refused a revision.
func TestDiscoverWithoutKnownVersionIsLegacy(t *testing.T) {
	for _, result := range []string{`{}`, `{"supportedVersions":["2099-01-01"],"capabilities":{}}`} {
		t.Run(result, func(t *testing.T) {
			srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), Legacy: true, Sessions: true})
			defer srv.Close()
			front := httptest.NewServer(answerDiscover(result)(srv.Handler))
			defer front.Close()
			rep := probeOnce(t, srv, declare(t, "a"), func(tg *config.Target) { tg.URL = front.URL + mcptest.EndpointPath })
			if !rep.Success || has(rep, catalogue.DriftProtocolUnsupported) || !has(rep, catalogue.DriftLegacyServer) || rep.Era != "legacy" {
				t.Fatalf("success %v, era %q, findings %v", rep.Success, rep.Era, rep.Findings)
			}
			if srv.Count("initialize") == 0 {
				t.Errorf("initialize sent %d times", srv.Count("initialize"))
			}
		})
	}
}

// TestNamelessToolsEachCounted: every served tool without a usable name —
// null, missing, empty, not a string — is its own ERROR finding,
// identified by its position, and none is mistaken for a name-format one.
func TestNamelessToolsEachCounted(t *testing.T) {
	served := append(tools("a"),
		json.RawMessage(`{"name":null,"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":7,"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":null,"inputSchema":{"type":"object"}}`))
	srv := mcptest.NewServer(mcptest.Options{Tools: served})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), nil)
	var pointers []string
	for _, f := range rep.Findings {
		switch f.Rule {
		case catalogue.ConfToolName:
			if f.Severity != catalogue.Error {
				t.Errorf("severity %s", f.Severity)
			}
			pointers = append(pointers, f.Pointer)
		case catalogue.ConfToolNameFormat, catalogue.ConfDuplicateTool:
			t.Errorf("nameless tool reported as %s: %s", f.Rule, f.Message)
		}
	}
	slices.Sort(pointers)
	if want := []string{"/tools/1", "/tools/2", "/tools/3", "/tools/4", "/tools/5"}; !slices.Equal(pointers, want) {
		t.Errorf("pointers %v, want %v", pointers, want)
	}
}

// headerTool has optional arguments mirrored into Mcp-Param-* headers,
// one of them nested, beside a required plain one.
const headerTool = `{"name":"route","inputSchema":{"type":"object","properties":{
	"q":{"type":"string"},
	"region":{"type":"string","enum":["eu-west-1","us-east-1"],"x-mcp-header":"Region"},
	"priority":{"type":"integer","minimum":1,"maximum":9,"x-mcp-header":"Priority"},
	"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}}},
	"required":["q"]}}`

func executeTools(names ...string) func(*config.Target) {
	return func(tg *config.Target) { tg.Invoke = config.Invoke{Tools: names, Execute: true, Seed: 5} }
}

func outcomeOf(rep *probe.Report, tool string) string {
	for _, p := range rep.Invocation.Planned {
		if p.Tool == tool {
			return p.Outcome
		}
	}
	return ""
}

// TestParamHeadersReachTheStrictMock: the generator fills the annotated
// optional arguments, the call carries their Mcp-Param-* headers, and the
// strict mock, which rejects a missing or mismatched one with -32020,
// accepts the call.
func TestParamHeadersReachTheStrictMock(t *testing.T) {
	def := json.RawMessage(headerTool)
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{def}})
	defer srv.Close()
	rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{def}), executeTools("route"))
	if got := outcomeOf(rep, "route"); got != "result" {
		t.Fatalf("outcome %q", got)
	}
	var call *mcptest.Request
	for _, r := range srv.Requests() {
		if r.Method == "tools/call" {
			call = &r
		}
	}
	if call == nil {
		t.Fatal("no tools/call sent")
	}
	for _, h := range []string{"Mcp-Param-Region", "Mcp-Param-Priority", "Mcp-Param-Dry-Run"} {
		if call.Header.Get(h) == "" {
			t.Errorf("%s not sent; headers %v", h, call.Header)
		}
	}
}

// TestInvalidHeaderAnnotationNeverCalled: a tool whose x-mcp-header
// annotation breaks a rule is an MCP-CONF-TOOL-HEADER-INVALID finding
// naming the rule, and is never called — whether the declared definition
// or only the served one carries it.
func TestInvalidHeaderAnnotationNeverCalled(t *testing.T) {
	invalid := json.RawMessage(`{"name":"route","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}`)
	valid := json.RawMessage(`{"name":"route","inputSchema":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}`)
	for name, declared := range map[string]json.RawMessage{"declared invalid": invalid, "served only": valid} {
		t.Run(name, func(t *testing.T) {
			srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{invalid}})
			defer srv.Close()
			rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{declared}), executeTools("route"))
			f := find(rep, catalogue.ConfToolHeader)
			if f == nil || f.Tool != "route" || !strings.Contains(f.Message, `"number"`) || f.Pointer != "/properties/n/x-mcp-header" {
				t.Fatalf("finding %+v", f)
			}
			if srv.Count("tools/call") != 0 || !strings.HasPrefix(outcomeOf(rep, "route"), "refused: invalid x-mcp-header") {
				t.Fatalf("%d calls, outcome %q", srv.Count("tools/call"), outcomeOf(rep, "route"))
			}
		})
	}
}

// rejectCalls puts a front before next that answers the first n
// tools/call requests (every one when n < 0) with 400 -32020 and message,
// and records the JSON-RPC methods in order.
func rejectCalls(n int, message string, methods *[]string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		var mu sync.Mutex
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(body, &req)
			mu.Lock()
			*methods = append(*methods, req.Method)
			reject := req.Method == "tools/call" && n != 0
			if reject && n > 0 {
				n--
			}
			mu.Unlock()
			if reject {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				msg, _ := json.Marshal(message)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":%s}}`, req.ID, msg)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// TestHeaderMismatchIsARejection: -32020 to tools/call is the server
// refusing driftd's request, not a tool failure: no MCP-DRIFT-CALL-ERROR-SHAPE.
// When Mcp-Param-* may have caused it, tools/list is fetched again once
// and the call retried once; otherwise nothing is retried.
func TestHeaderMismatchIsARejection(t *testing.T) {
	plain := json.RawMessage(`{"name":"plain","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`)
	for _, tc := range []struct {
		name    string
		def     json.RawMessage
		reject  int
		message string
		outcome string
		tail    []string // the methods sent last, in order
		calls   int
	}{
		{"retried once, then served", json.RawMessage(headerTool), 1, "Header mismatch: Mcp-Param-Region",
			"result (after -32020: tools/list fetched again, call retried once)", []string{"tools/call", "tools/list", "tools/call"}, 2},
		{"retried once, still rejected", json.RawMessage(headerTool), -1, "Header mismatch",
			"rejected: header_mismatch (after -32020: tools/list fetched again, call retried once)", []string{"tools/call", "tools/list", "tools/call"}, 2},
		{"not caused by Mcp-Param: no retry", plain, -1, "Header mismatch: Mcp-Method",
			"rejected: header_mismatch", []string{"tools/call"}, 1},
		{"a message naming Mcp-Param retries", plain, 1, "Header mismatch: Mcp-Param-Zone missing",
			"result (after -32020: tools/list fetched again, call retried once)", []string{"tools/call", "tools/list", "tools/call"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{tc.def}})
			defer srv.Close()
			var methods []string
			front := httptest.NewServer(rejectCalls(tc.reject, tc.message, &methods)(srv.Handler))
			defer front.Close()
			var name struct{ Name string }
			_ = json.Unmarshal(tc.def, &name)
			rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{tc.def}), all(executeTools(name.Name),
				func(tg *config.Target) { tg.URL = front.URL + mcptest.EndpointPath }))
			if has(rep, catalogue.DriftCallErrorShape) {
				t.Error("a request rejection was reported as a tool failure (MCP-DRIFT-CALL-ERROR-SHAPE)")
			}
			if got := outcomeOf(rep, name.Name); got != tc.outcome {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
			calls := 0
			for _, m := range methods {
				if m == "tools/call" {
					calls++
				}
			}
			if calls != tc.calls || len(methods) < len(tc.tail) || !slices.Equal(methods[len(methods)-len(tc.tail):], tc.tail) {
				t.Errorf("%d calls, methods %v; want %d calls ending %v", calls, methods, tc.calls, tc.tail)
			}
		})
	}
}

// TestInputRequiredIsAFinding: an InputRequiredResult is recorded as
// MCP-DRIFT-CALL-INPUT-REQUIRED and never pursued; its shape is checked
// (ERROR when broken) and nothing it carried reaches the report.
func TestInputRequiredIsAFinding(t *testing.T) {
	for _, tc := range []struct {
		result   string
		severity catalogue.Severity
		says     string
	}{
		{`{"resultType":"input_required","requestState":"MARKER-state"}`, catalogue.Info, "a requestState of 12 bytes"},
		{`{"resultType":"input_required"}`, catalogue.Error, "neither inputRequests nor requestState"},
		{`{"resultType":"input_required","requestState":7}`, catalogue.Error, "requestState is not a string"},
		{`{"resultType":"input_required","inputRequests":["MARKER"]}`, catalogue.Error, "inputRequests is not an object"},
		{`{"resultType":"input_required","inputRequests":{"MARKER-key":{"method":"elicitation/create","params":{"message":"MARKER-ask"}}},"requestState":"s"}`,
			catalogue.Error, "1 input request(s) although driftd declared no client capability"},
		{`{"resultType":"input_required","inputRequests":{"k":"MARKER"},"requestState":"s"}`, catalogue.Error, "not a request object"},
	} {
		t.Run(tc.result, func(t *testing.T) {
			sc := callScenario(tc.result, nil)
			srv := mcptest.NewServer(sc.opts)
			defer srv.Close()
			rep := probeOnce(t, srv, declareRaw(t, sc.declaredTools), sc.tweak)
			f := find(rep, catalogue.DriftCallInputRequired)
			if f == nil || f.Severity != tc.severity || !strings.Contains(f.Message, tc.says) || f.Tool != "a" {
				t.Fatalf("finding %+v", f)
			}
			if outcomeOf(rep, "a") != "input_required" || srv.Count("tools/call") != 1 {
				t.Errorf("outcome %q, %d calls", outcomeOf(rep, "a"), srv.Count("tools/call"))
			}
			mustNotContain(t, "report", reportJSON(rep), "MARKER")
		})
	}
}

// TestOutputSchemaInsideArrays: the case end to end — a number
// declared inside array elements, a string returned.
func TestOutputSchemaInsideArrays(t *testing.T) {
	def := json.RawMessage(`{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"hits":{"type":"array","items":{"type":"object","properties":{"total":{"type":"number"}}}}}}}`)
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{def}, CallTool: func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
		return json.RawMessage(`{"content":[],"structuredContent":{"hits":[{"total":1},{"total":"MARKER"}]}}`), nil
	}})
	defer srv.Close()
	rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{def}), executeTools("a"))
	f := find(rep, catalogue.DriftCallOutputSchema)
	if f == nil || f.Pointer != "/hits/*/total" || f.Message != `structuredContent /hits/*/total: expected type "number", got string` {
		t.Fatalf("finding %+v", f)
	}
	mustNotContain(t, "report", reportJSON(rep), "MARKER")
}
