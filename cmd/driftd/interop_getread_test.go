package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// readReport is the part of a report these tests read.
type readReport struct {
	Era        string `json:"era"`
	Invocation struct {
		Executed bool `json:"executed"`
		Reads    []struct {
			Kind, Name, Outcome string
			Arguments           map[string]string
			Items               *int
		} `json:"reads"`
	} `json:"invocation"`
	Findings []surfaceFinding `json:"findings"`
}

// TestGetReadGatesInTheCLI: every gate refuses with exit 2 before a
// request is sent; without --execute only the plan is printed; what a
// prompt or resource returned reaches neither the text nor the JSON.
func TestGetReadGatesInTheCLI(t *testing.T) {
	const returned = "MARKER-returned-by-get-or-read"
	prompts := []json.RawMessage{json.RawMessage(`{"name":"summarise","arguments":[{"name":"order_id","required":true},{"name":"tone"}]}`)}
	resources := []json.RawMessage{json.RawMessage(`{"uri":"orders://recent","name":"recent"}`)}
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{}, Prompts: append(prompts, json.RawMessage(`{"name":"served_only"}`)), Resources: resources,
		GetPrompt: func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"description":"` + returned + `","messages":[{"role":"user","content":{"type":"text","text":"` + returned + `"}}]}`), nil
		},
		ReadResource: func(uri string) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"` + returned + `"}]}`), nil
		}})
	defer srv.Close()
	p, _ := json.Marshal(prompts)
	r, _ := json.Marshal(resources)
	m := writeFile(t, "m.json", `{"tools":[],"prompts":`+string(p)+`,"resources":`+string(r)+`}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--execute"}, "not a wildcard"},
		{[]string{"--invoke-prompt", "served_only", "--execute"}, `prompt "served_only" is not declared`},
		{[]string{"--invoke-prompt", "summ*", "--execute"}, `prompt "summ*" is not declared`},
		{[]string{"--invoke-resource", "orders://other", "--execute"}, `resource "orders://other" is not declared`},
		{[]string{"--invoke-resource", "orders://recent", "--execute", "--environment", "production"}, "--i-know-this-is-production"},
		{[]string{"--invoke-prompt-arguments", `summarise={"tone":"warm"}`}, "for a prompt named by --invoke-prompt"},
		{[]string{"--invoke-prompt", "summarise", "--invoke-prompt-arguments", `summarise={"tone":1}`}, "a JSON object of strings"},
	} {
		srv.Reset()
		code, _, stderr := driftd(t, append([]string{"check", m, "--base-url", srv.URL}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || len(srv.Requests()) != 0 {
			t.Errorf("%v: exit %d, %d requests sent, stderr %q", tc.args, code, len(srv.Requests()), stderr)
		}
	}
	plan := []string{"check", m, "--base-url", srv.URL, "--invoke-prompt", "summarise", "--invoke-resource", "orders://recent",
		"--invoke-prompt-arguments", `summarise={"tone":"warm"}`}
	srv.Reset()
	code, stdout, _ := driftd(t, plan...)
	if code != exitOK || srv.Count("prompts/get")+srv.Count("resources/read") != 0 || !strings.Contains(stdout, "not executed") ||
		!strings.Contains(stdout, `prompts/get summarise {"order_id":"driftd-`) || !strings.Contains(stdout, `"tone":"warm"}`) {
		t.Fatalf("plan: exit %d, %d sent\n%s", code, srv.Count("prompts/get")+srv.Count("resources/read"), stdout)
	}
	code, stdout, stderr := driftd(t, append(plan, "--execute")...)
	if code != exitOK || !strings.Contains(stdout, "prompts/get summarise") || !strings.Contains(stdout, "→ result (messages: 1,") ||
		!strings.Contains(stdout, "resources/read orders://recent → result (contents: 1,") {
		t.Fatalf("execute: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := srv.CheckNoViolations(); err != nil {
		t.Fatal(err)
	}
	_, jsonOut, jsonErr := driftd(t, append(plan, "--execute", "--json")...)
	if strings.Contains(stdout+stderr+jsonOut+jsonErr, returned) {
		t.Fatal("text a prompt or resource returned reached the output")
	}
}

// TestInteropGetRead: against go-sdk v1.8.0 (stateless: modern;
// stateful: legacy) and mcp-go v1.2.1, a captured manifest's prompt and
// resource are planned, got and read with outcome result and no finding,
// and the text they returned reaches no output.
func TestInteropGetRead(t *testing.T) {
	for _, sdk := range []struct {
		name string
		h    func() http.Handler
		era  string
	}{
		{"go-sdk stateless", func() http.Handler { return newGoSDKSurface(true, surfaceSame) }, "modern"},
		{"go-sdk stateful", func() http.Handler { return newGoSDKSurface(false, surfaceSame) }, "legacy"},
		{"mcp-go", func() http.Handler { return newMCPGoSurface(surfaceSame) }, ""},
	} {
		t.Run(sdk.name, func(t *testing.T) {
			noLeaks(t)
			path := captureManifest(t, serve(t, sdk.h()))
			url := serve(t, sdk.h())
			code, stdout, stderr := driftd(t, "check", path, "--base-url", url, "--json", "--timeout", "10s", "--execute",
				"--invoke-prompt", "summarise", "--invoke-prompt", "apology", "--invoke-resource", "orders://recent")
			var rep readReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, stderr)
			}
			conformance := slices.ContainsFunc(rep.Findings, func(f surfaceFinding) bool { return strings.HasPrefix(f.Rule, "MCP-CONF-") })
			if code != exitOK || !rep.Invocation.Executed || len(rep.Invocation.Reads) != 3 || conformance {
				t.Fatalf("exit %d, report %+v\n%s", code, rep, stdout)
			}
			if sdk.era != "" && rep.Era != sdk.era {
				t.Errorf("era %s, want %s", rep.Era, sdk.era)
			}
			for _, r := range rep.Invocation.Reads {
				if r.Outcome != "result" || r.Items == nil || *r.Items != 1 {
					t.Errorf("%s %s: outcome %q, items %v", r.Kind, r.Name, r.Outcome, r.Items)
				}
			}
			if strings.Contains(stdout+stderr, surfaceReturned) {
				t.Fatal("text a prompt or resource returned reached the output")
			}
		})
	}
}

// TestGoSDKRawMcpName: go-sdk v1.8.0 compares Mcp-Name raw, without
// decoding (go-sdk#1234, fixed after the release). driftd sends what the
// spec asks — the encoded value — as it does for tools/call, and records
// the server's -32020 as a rejection of driftd's request: no finding, no
// failed run. A plain-ASCII name on the same server is got as usual.
func TestGoSDKRawMcpName(t *testing.T) {
	noLeaks(t)
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-raw-name", Version: "1.0.0"}, nil)
	get := func(context.Context, *gosdk.GetPromptRequest) (*gosdk.GetPromptResult, error) {
		return &gosdk.GetPromptResult{Messages: []*gosdk.PromptMessage{{Role: "user", Content: &gosdk.TextContent{Text: surfaceReturned}}}}, nil
	}
	s.AddPrompt(&gosdk.Prompt{Name: "grüße"}, get)
	s.AddPrompt(&gosdk.Prompt{Name: "hello"}, get)
	url := serve(t, gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, &gosdk.StreamableHTTPOptions{Stateless: true}))
	path := captureManifest(t, url)
	code, stdout, stderr := driftd(t, "check", path, "--base-url", url, "--json", "--execute", "--invoke-prompt", "grüße", "--invoke-prompt", "hello")
	var rep readReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	reads := rep.Invocation.Reads
	if code != exitOK || rep.Era != "modern" || len(reads) != 2 || reads[0].Outcome != "rejected: header_mismatch" || reads[1].Outcome != "result" {
		t.Fatalf("exit %d, reads %+v\n%s", code, reads, stdout)
	}
}
