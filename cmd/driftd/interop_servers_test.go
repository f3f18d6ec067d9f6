package main

// Helpers for the interoperability tests: real, independently written MCP
// servers (the official go-sdk and mark3labs/mcp-go) served in-process on
// loopback, a recorder of what went over the wire, and a way to run the
// driftd CLI against them and read its JSON report.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Typed tool inputs and outputs: the SDKs derive real JSON Schemas from them.
type (
	searchIn struct {
		Query string `json:"query" jsonschema:"the search terms"`
		Limit int    `json:"limit,omitempty" jsonschema:"at most this many results"`
	}
	searchOut struct {
		IDs   []string `json:"ids"`
		Total int      `json:"total"`
	}
	orderIn struct {
		OrderID string `json:"order_id" jsonschema:"the order to act on"`
	}
	orderOut struct {
		Status string `json:"status"`
	}
	echoIn struct {
		Text string `json:"text"`
	}
	echoOut struct {
		Text string `json:"text"`
	}
)

// goSDKTools are the tools of the go-sdk servers, sorted by name.
var goSDKTools = []string{"cancel_order", "echo", "get_order", "search_orders"}

// newGoSDKServer builds a go-sdk v1.8.0 server over Streamable HTTP with
// goSDKTools less omit. stateless selects the 2026-07-28 mode. The modern
// server answers in SSE, the legacy one in JSON, so driftd reads both.
func newGoSDKServer(stateless bool, omit string) http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-interop", Version: "1.0.0"}, nil)
	add := func(name string, f func()) {
		if name != omit {
			f()
		}
	}
	add("search_orders", func() {
		gosdk.AddTool(s, &gosdk.Tool{Name: "search_orders", Description: "Search orders by free text."},
			func(context.Context, *gosdk.CallToolRequest, searchIn) (*gosdk.CallToolResult, searchOut, error) {
				return nil, searchOut{IDs: []string{}}, nil
			})
	})
	add("get_order", func() {
		gosdk.AddTool(s, &gosdk.Tool{Name: "get_order", Description: "Fetch one order.",
			Annotations: &gosdk.ToolAnnotations{Title: "Get order", ReadOnlyHint: true, IdempotentHint: true}},
			func(context.Context, *gosdk.CallToolRequest, orderIn) (*gosdk.CallToolResult, orderOut, error) {
				return nil, orderOut{Status: "open"}, nil
			})
	})
	add("cancel_order", func() {
		no := false
		gosdk.AddTool(s, &gosdk.Tool{Name: "cancel_order", Description: "Cancel an order.",
			Annotations: &gosdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
			func(context.Context, *gosdk.CallToolRequest, orderIn) (*gosdk.CallToolResult, orderOut, error) {
				return nil, orderOut{Status: "cancelled"}, nil
			})
	})
	add("echo", func() {
		gosdk.AddTool(s, &gosdk.Tool{Name: "echo", Description: "Echo the text back."},
			func(_ context.Context, _ *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, echoOut, error) {
				return nil, echoOut(in), nil
			})
	})
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: stateless, JSONResponse: !stateless})
}

// mcpGoTools are the tools of the mcp-go servers, sorted by name.
var mcpGoTools = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"}

// mcpGoPageSize makes seven tools take three pages (3, 3, 1).
const mcpGoPageSize = 3

// newMCPGoServer builds an mcp-go v1.2.1 Streamable HTTP server with
// mcpGoTools less omit, paging tools/list by mcpGoPageSize. versions, if
// given, restricts the protocol versions it advertises and serves.
func newMCPGoServer(omit string, versions ...string) http.Handler {
	s := mcpgoserver.NewMCPServer("mcpgo-interop", "1.0.0",
		mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithPaginationLimit(mcpGoPageSize))
	for i, name := range mcpGoTools {
		if name == omit {
			continue
		}
		opts := []mcpgo.ToolOption{mcpgo.WithDescription("Tool " + name + ".")}
		switch i % 3 {
		case 0:
			opts = append(opts, mcpgo.WithInputSchema[searchIn](), mcpgo.WithOutputSchema[searchOut](),
				mcpgo.WithReadOnlyHintAnnotation(true))
			s.AddTool(mcpgo.NewTool(name, opts...), mcpgo.NewStructuredToolHandler(
				func(context.Context, mcpgo.CallToolRequest, searchIn) (searchOut, error) { return searchOut{}, nil }))
		case 1:
			opts = append(opts, mcpgo.WithInputSchema[orderIn](), mcpgo.WithOutputSchema[orderOut]())
			s.AddTool(mcpgo.NewTool(name, opts...), mcpgo.NewStructuredToolHandler(
				func(context.Context, mcpgo.CallToolRequest, orderIn) (orderOut, error) { return orderOut{}, nil }))
		default:
			opts = append(opts, mcpgo.WithString("text", mcpgo.Required(), mcpgo.Description("what to echo")))
			s.AddTool(mcpgo.NewTool(name, opts...), func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText(r.GetString("text", "")), nil
			})
		}
	}
	opts := []mcpgoserver.StreamableHTTPOption{
		mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)),
	}
	if len(versions) > 0 {
		opts = append(opts, mcpgoserver.WithStreamableHTTPProtocolVersions(versions...))
	}
	return mcpgoserver.NewStreamableHTTPServer(s, opts...)
}

// wireLog records each HTTP exchange a server saw, for failure output.
type wireLog struct {
	mu    sync.Mutex
	lines []string
}

type recordingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len() < 600 {
		w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}
func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (l *wireLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(req))
		rw := &recordingWriter{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		line := fmt.Sprintf("%s MCP-Protocol-Version=%q Mcp-Method=%q session=%t\n  > %s\n  < %d %s %s",
			r.Method, r.Header.Get("MCP-Protocol-Version"), r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Session-Id") != "",
			clip(string(req)), rw.status, rw.Header().Get("Content-Type"), clip(rw.body.String()))
		l.mu.Lock()
		l.lines = append(l.lines, line)
		l.mu.Unlock()
	})
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}

// serve runs h on 127.0.0.1:0 until the test ends and returns its URL. On
// failure the wire log is printed.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	log := &wireLog{}
	srv := httptest.NewServer(log.wrap(h))
	t.Cleanup(func() {
		srv.Close()
		if t.Failed() {
			log.mu.Lock()
			t.Logf("wire log of %s:\n%s", srv.URL, strings.Join(log.lines, "\n"))
			log.mu.Unlock()
		}
	})
	return srv.URL + "/mcp"
}

// report is the part of the report artifact (DESIGN §15) the tests read.
type report struct {
	Success          bool   `json:"success"`
	FailureReason    string `json:"failure_reason"`
	Era              string `json:"era"`
	ProtocolRevision struct {
		Value  *string `json:"value"`
		Reason string  `json:"reason"`
	} `json:"protocol_revision"`
	Tools struct {
		Served           int    `json:"served"`
		Pages            int    `json:"pages"`
		SecondConnection string `json:"second_connection"`
	} `json:"tools"`
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Tool     string `json:"tool"`
	} `json:"findings"`
}

// with returns the tools of findings of rule ("" for those without one).
func (r *report) with(rule string) []string {
	var tools []string
	for _, f := range r.Findings {
		if f.Rule == rule {
			tools = append(tools, f.Tool)
		}
	}
	return tools
}

// rulesWithPrefix returns the rules of findings whose rule starts with p.
func (r *report) rulesWithPrefix(p string) []string {
	var rules []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Rule, p) {
			rules = append(rules, f.Rule)
		}
	}
	return rules
}

// driftd runs the CLI in-process and returns its exit code and output.
func driftd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// captureManifest runs driftd capture against url and returns the path of
// the manifest it wrote.
func captureManifest(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.json")
	code, _, stderr := driftd(t, "capture", "--base-url", url, "--timeout", "10s", "-o", path)
	if code != exitOK {
		t.Fatalf("capture exited %d, want 0; stderr:\n%s", code, stderr)
	}
	return path
}

// checkReport runs driftd check --json and decodes the report. On failure
// of the calling test the full JSON report is logged.
func checkReport(t *testing.T, manifestPath, url string) (int, *report) {
	t.Helper()
	code, stdout, stderr := driftd(t, "check", manifestPath, "--base-url", url, "--json", "--timeout", "10s")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("driftd check exited %d; stderr: %s\nreport:\n%s", code, stderr, stdout)
		}
	})
	rep := &report{}
	if err := json.Unmarshal([]byte(stdout), rep); err != nil {
		t.Fatalf("check --json output is not a report: %v", err)
	}
	return code, rep
}
