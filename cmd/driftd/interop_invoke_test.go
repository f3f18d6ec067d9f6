package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/schema"
)

// TestGeneratedArgumentsForSDKTools: arguments generated from every tool of
// the go-sdk and mcp-go test servers validate against its inputSchema, and
// calling them for real produces no MCP-DRIFT-CALL-* finding.
func TestGeneratedArgumentsForSDKTools(t *testing.T) {
	noLeaks(t)
	for name, h := range map[string]http.Handler{
		"go-sdk stateless": newGoSDKServer(true, ""),
		"go-sdk stateful":  newGoSDKServer(false, ""),
		"mcp-go":           newMCPGoServer(""),
	} {
		t.Run(name, func(t *testing.T) {
			url := serve(t, h)
			path := captureManifest(t, url)
			m, err := manifest.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"check", path, "--base-url", url, "--json", "--execute", "--seed", "3"}
			schemas := schema.NewCache(1 << 20)
			for _, tool := range m.Tools {
				a, err := schemas.Generate(tool.InputSchema, 3)
				if err != nil {
					t.Fatalf("%s: %v", tool.Name, err)
				}
				if vs, err := schemas.Validate(tool.InputSchema, a); err != nil || len(vs) > 0 {
					t.Fatalf("%s: generated %s does not validate: %v %v", tool.Name, a, vs, err)
				}
				args = append(args, "--invoke-tool", tool.Name)
			}
			code, stdout, stderr := driftd(t, args...)
			var rep struct {
				Invocation struct {
					Executed bool `json:"executed"`
					Planned  []struct{ Tool, Outcome string }
					Findings []catalogue.Finding `json:"findings"`
				} `json:"invocation"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, stderr)
			}
			if code != exitOK || !rep.Invocation.Executed || len(rep.Invocation.Findings) != 0 {
				t.Fatalf("exit %d, invocation %+v\n%s", code, rep.Invocation, stdout)
			}
			for _, p := range rep.Invocation.Planned {
				if p.Outcome != "result" {
					t.Errorf("%s: outcome %q", p.Tool, p.Outcome)
				}
			}
		})
	}
}

func TestInvokeGatesInTheCLI(t *testing.T) {
	const returned = "MARKER-returned-by-the-tool"
	tool := json.RawMessage(`{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}`)
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{tool}, CallTool: func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
		return json.RawMessage(`{"content":[{"type":"text","text":"` + returned + `"}],"structuredContent":{"n":"` + returned + `"}}`), nil
	}})
	defer srv.Close()
	m := writeFile(t, "m.json", `{"tools":[`+string(tool)+`]}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--execute"}, "not a wildcard"},
		{[]string{"--invoke-tool", "nope", "--execute"}, `"nope" is not declared`},
		{[]string{"--invoke-tool", "search_*", "--execute"}, `"search_*" is not declared`},
		{[]string{"--invoke-tool", "a", "--execute", "--environment", "production"}, "--i-know-this-is-production"},
	} {
		srv.Reset()
		code, _, stderr := driftd(t, append([]string{"check", m, "--base-url", srv.URL}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || len(srv.Requests()) != 0 {
			t.Errorf("%v: exit %d, %d requests sent, stderr %q", tc.args, code, len(srv.Requests()), stderr)
		}
	}
	srv.Reset()
	code, stdout, _ := driftd(t, "check", m, "--base-url", srv.URL, "--invoke-tool", "a")
	if code != exitOK || srv.Count("tools/call") != 0 || !strings.Contains(stdout, "not executed") || !strings.Contains(stdout, "a {}") {
		t.Fatalf("plan: exit %d, %d calls\n%s", code, srv.Count("tools/call"), stdout)
	}
	code, stdout, stderr := driftd(t, "check", m, "--base-url", srv.URL, "--invoke-tool", "a", "--execute")
	if code != exitFindings || !strings.Contains(stdout, "MCP-DRIFT-CALL-OUTPUT-SCHEMA a /n: structuredContent /n: expected type \"integer\", got string") {
		t.Fatalf("execute: exit %d\n%s", code, stdout)
	}
	_, jsonOut, _ := driftd(t, "check", m, "--base-url", srv.URL, "--invoke-tool", "a", "--execute", "--json")
	if strings.Contains(stdout+stderr+jsonOut, returned) {
		t.Fatal("a value the tool returned reached the output")
	}
}

// TestInvokeArgumentsKeepLargeIntegers: an integer above 2^53 given with
// --invoke-arguments reaches the server as written, not rounded.
func TestInvokeArgumentsKeepLargeIntegers(t *testing.T) {
	const big = "9007199254740993" // 2^53 + 1: a float64 makes it ...992
	tool := json.RawMessage(`{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}`)
	var got json.RawMessage
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{tool}, CallTool: func(_ string, args json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
		got = args
		return json.RawMessage(`{"content":[]}`), nil
	}})
	defer srv.Close()
	m := writeFile(t, "m.json", `{"tools":[`+string(tool)+`]}`)
	code, stdout, stderr := driftd(t, "check", m, "--base-url", srv.URL, "--invoke-tool", "a", "--execute", "--invoke-arguments", `a={"n": `+big+`}`)
	if code != exitOK || !strings.Contains(string(got), big) {
		t.Fatalf("exit %d, the server got %s\n%s%s", code, got, stdout, stderr)
	}
}

// TestGlobLookingNamesAreExact: a declared name with *, ? or [ is invoked
// by its exact name, and the sentinel-looking name of the Mcp-Name rule
// reaches the wire encoded; the characters refuse nothing, only a name
// the manifest does not declare does.
func TestGlobLookingNamesAreExact(t *testing.T) {
	names := []string{"=?base64?SGVsbG8=?=", "search_*", "a?b", "x[1]"}
	var defs []string
	for _, n := range names {
		b, _ := json.Marshal(n)
		defs = append(defs, `{"name":`+string(b)+`,"inputSchema":{"type":"object"}}`)
	}
	var served []json.RawMessage
	for _, d := range defs {
		served = append(served, json.RawMessage(d))
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: served})
	defer srv.Close()
	m := writeFile(t, "m.json", `{"tools":[`+strings.Join(defs, ",")+`]}`)
	args := []string{"check", m, "--base-url", srv.URL, "--execute"}
	for _, n := range names {
		args = append(args, "--invoke-tool", n)
	}
	code, stdout, stderr := driftd(t, args...)
	if code != exitFindings && code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sent := map[string]bool{}
	for _, r := range srv.Requests() {
		if r.Method != "tools/call" {
			continue
		}
		if r.Violation != "" {
			t.Errorf("tools/call broke a rule: %s", r.Violation)
		}
		sent[r.Header.Get("Mcp-Name")] = true
	}
	for _, want := range []string{"=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?=", "search_*", "a?b", "x[1]"} {
		if !sent[want] {
			t.Errorf("no tools/call with Mcp-Name %q; sent %v", want, sent)
		}
	}
}
