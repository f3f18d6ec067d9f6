package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The x-mcp-header tools of the header interop tests. Both are valid, so
// the SDKs register them; "zone" is made invalid on its way to driftd by
// invalidateZone, which is the only way to have an SDK serve one (both
// refuse invalid annotations at registration).
const (
	routeSchema = `{"type":"object","properties":{
		"q":{"type":"string"},
		"region":{"type":"string","enum":["eu-west-1","us-east-1"],"x-mcp-header":"Region"},
		"priority":{"type":"integer","minimum":1,"maximum":9,"x-mcp-header":"Priority"}},
		"required":["q"]}`
	zoneSchema = `{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}},"required":["zone"]}`
)

func newGoSDKHeaderServer() http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-headers", Version: "1.0.0"}, nil)
	for name, schema := range map[string]string{"route": routeSchema, "zone": zoneSchema} {
		var m map[string]any
		_ = json.Unmarshal([]byte(schema), &m)
		s.AddTool(&gosdk.Tool{Name: name, Description: "Header tool " + name + ".", InputSchema: m},
			func(context.Context, *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
				return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "ok"}}}, nil
			})
	}
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true})
}

func newMCPGoHeaderServer() http.Handler {
	s := mcpgoserver.NewMCPServer("mcpgo-headers", "1.0.0", mcpgoserver.WithToolCapabilities(false))
	for name, schema := range map[string]string{"route": routeSchema, "zone": zoneSchema} {
		s.AddTool(mcpgo.NewToolWithRawSchema(name, "Header tool "+name+".", json.RawMessage(schema)),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("ok"), nil
			})
	}
	return mcpgoserver.NewStreamableHTTPServer(s)
}

// headerFront records the tools/call requests that reach h, and rewrites
// every answer so that tool zone's annotation is no RFC 9110 token.
type headerFront struct {
	h     http.Handler
	mu    sync.Mutex
	calls []http.Header // headers of tools/call requests, by tool name in Mcp-Name
}

type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedWriter) Header() http.Header         { return w.header }
func (w *bufferedWriter) WriteHeader(code int)        { w.status = code }
func (w *bufferedWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *bufferedWriter) Flush()                      {}

func (f *headerFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") == "tools/call" {
		f.mu.Lock()
		f.calls = append(f.calls, r.Header.Clone())
		f.mu.Unlock()
	}
	bw := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
	f.h.ServeHTTP(bw, r)
	body := bytes.ReplaceAll(bw.body.Bytes(), []byte(`"x-mcp-header":"Zone"`), []byte(`"x-mcp-header":"Zone Name"`))
	for k, v := range bw.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(bw.status)
	_, _ = w.Write(body)
}

func (f *headerFront) callsOf(tool string) []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []http.Header
	for _, h := range f.calls {
		if h.Get("Mcp-Name") == tool {
			out = append(out, h)
		}
	}
	return out
}

// TestInteropParamHeaders: against go-sdk v1.8.0 (stateless, 2026-07-28)
// and mcp-go v1.2.1, which both check Mcp-Param-* against the body and
// answer -32020 on a missing or wrong one, a tool whose optional arguments
// carry x-mcp-header is called successfully with the headers sent; a tool
// whose served annotation is invalid is MCP-CONF-TOOL-HEADER-INVALID and
// is never called.
func TestInteropParamHeaders(t *testing.T) {
	noLeaks(t)
	for name, h := range map[string]http.Handler{
		"go-sdk stateless": newGoSDKHeaderServer(),
		"mcp-go":           newMCPGoHeaderServer(),
	} {
		t.Run(name, func(t *testing.T) {
			// The server really enforces the header: a call without it is refused.
			direct := serve(t, h)
			if status, body := postCall(t, direct, `{"q":"x","region":"eu-west-1"}`); status != http.StatusBadRequest || !strings.Contains(body, "-32020") {
				t.Fatalf("a call without Mcp-Param-Region: HTTP %d %s; the test needs a server that checks", status, body)
			}
			manifest := captureManifest(t, direct)
			front := &headerFront{h: h}
			url := serve(t, front)
			code, stdout, stderr := driftd(t, "check", manifest, "--base-url", url, "--json", "--timeout", "10s",
				"--execute", "--seed", "2", "--invoke-tool", "route", "--invoke-tool", "zone")
			var rep struct {
				Findings []struct {
					Rule, Tool, Message string
				} `json:"findings"`
				Invocation struct {
					Planned []struct{ Tool, Outcome string }
				} `json:"invocation"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, stderr)
			}
			outcomes := map[string]string{}
			for _, p := range rep.Invocation.Planned {
				outcomes[p.Tool] = p.Outcome
			}
			if outcomes["route"] != "result" || !strings.HasPrefix(outcomes["zone"], "refused: invalid x-mcp-header") {
				t.Fatalf("outcomes %v\n%s", outcomes, stdout)
			}
			calls := front.callsOf("route")
			if len(calls) != 1 || calls[0].Get("Mcp-Param-Region") == "" || calls[0].Get("Mcp-Param-Priority") == "" {
				t.Fatalf("route calls %v", calls)
			}
			if n := len(front.callsOf("zone")); n != 0 {
				t.Fatalf("zone called %d times", n)
			}
			found := false
			for _, f := range rep.Findings {
				if f.Rule == "MCP-CONF-TOOL-HEADER-INVALID" && f.Tool == "zone" && strings.Contains(f.Message, "not an RFC 9110 token") {
					found = true
				}
				if strings.HasPrefix(f.Rule, "MCP-DRIFT-CALL-") {
					t.Errorf("call finding %s %s: %s", f.Rule, f.Tool, f.Message)
				}
			}
			if !found {
				t.Fatalf("no MCP-CONF-TOOL-HEADER-INVALID for zone:\n%s", stdout)
			}
		})
	}
}

// postCall sends a modern tools/call of route with arguments and no
// Mcp-Param-* header, and returns the status and body.
func postCall(t *testing.T, url, arguments string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"route","arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`, arguments)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "route"} {
		req.Header.Set(k, v)
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
