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
			for _, tool := range m.Tools {
				a, err := schema.Generate(tool.InputSchema, 3)
				if err != nil {
					t.Fatalf("%s: %v", tool.Name, err)
				}
				if vs, err := schema.Validate(tool.InputSchema, a); err != nil || len(vs) > 0 {
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
