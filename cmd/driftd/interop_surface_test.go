package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
)

// surfaceChange is one change of a served surface between capture and
// check, as a server's next release might make it.
type surfaceChange int

const (
	surfaceSame          surfaceChange = iota
	surfacePromptRemoved               // the "apology" prompt is gone
	surfaceRequiredArg                 // "summarise" gains a required "locale"
	surfaceTemplateVars                // the "order" template gains {tenant}
)

// surfaceTemplate is the order template's uriTemplate after change ch.
func surfaceTemplate(ch surfaceChange) string {
	if ch == surfaceTemplateVars {
		return "orders://{tenant}/{order_id}"
	}
	return "orders://{order_id}"
}

// surfaceReturned is the text every surface prompt and resource returns:
// a marker that must reach no output.
const surfaceReturned = "MARKER-returned-by-the-surface"

// newGoSDKSurface is a go-sdk v1.8.0 server with one tool, two prompts,
// a resource and a resource template, changed by ch.
func newGoSDKSurface(stateless bool, ch surfaceChange) http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-surface", Version: "1.0.0"}, nil)
	gosdk.AddTool(s, &gosdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, echoOut, error) {
			return nil, echoOut(in), nil
		})
	prompt := func(context.Context, *gosdk.GetPromptRequest) (*gosdk.GetPromptResult, error) {
		return &gosdk.GetPromptResult{Messages: []*gosdk.PromptMessage{{Role: "user", Content: &gosdk.TextContent{Text: surfaceReturned}}}}, nil
	}
	args := []*gosdk.PromptArgument{{Name: "order_id", Required: true}, {Name: "tone"}}
	if ch == surfaceRequiredArg {
		args = append(args, &gosdk.PromptArgument{Name: "locale", Required: true})
	}
	s.AddPrompt(&gosdk.Prompt{Name: "summarise", Description: "Summarise one order.", Arguments: args}, prompt)
	if ch != surfacePromptRemoved {
		s.AddPrompt(&gosdk.Prompt{Name: "apology", Description: "Apologise for a late order."}, prompt)
	}
	read := func(_ context.Context, r *gosdk.ReadResourceRequest) (*gosdk.ReadResourceResult, error) {
		return &gosdk.ReadResourceResult{Contents: []*gosdk.ResourceContents{{URI: r.Params.URI, MIMEType: "application/json", Text: surfaceReturned}}}, nil
	}
	s.AddResource(&gosdk.Resource{URI: "orders://recent", Name: "recent", MIMEType: "application/json"}, read)
	s.AddResourceTemplate(&gosdk.ResourceTemplate{URITemplate: surfaceTemplate(ch), Name: "order", MIMEType: "application/json"}, read)
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: stateless, JSONResponse: !stateless})
}

// newMCPGoSurface is newGoSDKSurface's surface served by mcp-go v1.2.1.
func newMCPGoSurface(ch surfaceChange) http.Handler {
	s := mcpgoserver.NewMCPServer("mcpgo-surface", "1.0.0", mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithPromptCapabilities(false), mcpgoserver.WithResourceCapabilities(false, false))
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("Echo the text back."), mcpgo.WithString("text", mcpgo.Required())),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText(r.GetString("text", "")), nil
		})
	prompt := func(context.Context, mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
		return &mcpgo.GetPromptResult{Messages: []mcpgo.PromptMessage{{Role: mcpgo.RoleUser, Content: mcpgo.NewTextContent(surfaceReturned)}}}, nil
	}
	opts := []mcpgo.PromptOption{mcpgo.WithPromptDescription("Summarise one order."),
		mcpgo.WithArgument("order_id", mcpgo.RequiredArgument()), mcpgo.WithArgument("tone")}
	if ch == surfaceRequiredArg {
		opts = append(opts, mcpgo.WithArgument("locale", mcpgo.RequiredArgument()))
	}
	s.AddPrompt(mcpgo.NewPrompt("summarise", opts...), prompt)
	if ch != surfacePromptRemoved {
		s.AddPrompt(mcpgo.NewPrompt("apology", mcpgo.WithPromptDescription("Apologise for a late order.")), prompt)
	}
	read := func(_ context.Context, r mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
		return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: r.Params.URI, MIMEType: "application/json", Text: surfaceReturned}}, nil
	}
	s.AddResource(mcpgo.NewResource("orders://recent", "recent", mcpgo.WithMIMEType("application/json")), read)
	s.AddResourceTemplate(mcpgo.NewResourceTemplate(surfaceTemplate(ch), "order", mcpgo.WithTemplateMIMEType("application/json")), read)
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
}

// surfaceFinding is the part of a finding these tests read.
type surfaceFinding struct {
	Rule   string `json:"rule"`
	Tool   string `json:"tool"`
	Kind   string `json:"kind"`
	Change string `json:"change"`
}

// surfaceReport is the part of a report these tests read.
type surfaceReport struct {
	Era      string           `json:"era"`
	Findings []surfaceFinding `json:"findings"`
	Prompts  *struct {
		Served           int    `json:"served"`
		SecondConnection string `json:"second_connection"`
	} `json:"prompts"`
}

func checkSurface(t *testing.T, path, url string) (int, *surfaceReport) {
	t.Helper()
	code, stdout, stderr := driftd(t, "check", path, "--base-url", url, "--json", "--timeout", "10s")
	rep := &surfaceReport{}
	if err := json.Unmarshal([]byte(stdout), rep); err != nil {
		t.Fatalf("check --json: %v; stderr: %s", err, stderr)
	}
	if t.Failed() {
		t.Logf("report:\n%s", stdout)
	}
	return code, rep
}

// TestInteropSurface: capture then check is clean against each SDK's
// server; removing a prompt, adding a required prompt argument and
// changing a template's variables each give their finding and exit 1.
func TestInteropSurface(t *testing.T) {
	for _, sdk := range []struct {
		name  string
		build func(surfaceChange) http.Handler
		era   string
	}{
		{"go-sdk stateless", func(ch surfaceChange) http.Handler { return newGoSDKSurface(true, ch) }, "modern"},
		{"go-sdk stateful", func(ch surfaceChange) http.Handler { return newGoSDKSurface(false, ch) }, "legacy"},
		{"mcp-go", newMCPGoSurface, ""},
	} {
		t.Run(sdk.name, func(t *testing.T) {
			noLeaks(t)
			path := captureManifest(t, serve(t, sdk.build(surfaceSame)))
			m, err := manifest.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Tools) != 1 || len(m.Items[mcp.KindPrompt]) != 2 || len(m.Items[mcp.KindResource]) != 1 || len(m.Items[mcp.KindResourceTemplate]) != 1 {
				t.Fatalf("captured %d tools, %v", len(m.Tools), m.Items)
			}
			code, rep := checkSurface(t, path, serve(t, sdk.build(surfaceSame)))
			if code != exitOK || slices.ContainsFunc(rep.Findings, func(f surfaceFinding) bool { return f.Kind != "" }) {
				t.Errorf("check against the captured server exited %d with %+v", code, rep.Findings)
			}
			if sdk.era != "" && rep.Era != sdk.era {
				t.Errorf("era %s, want %s", rep.Era, sdk.era)
			}
			if rep.Prompts == nil || rep.Prompts.Served != 2 || rep.Prompts.SecondConnection != "same" {
				t.Errorf("prompts %+v", rep.Prompts)
			}
			for _, tc := range []struct {
				ch         surfaceChange
				rule, name string
				change     string
			}{
				{surfacePromptRemoved, catalogue.DriftPromptMissing, "apology", ""},
				{surfaceRequiredArg, catalogue.DriftPromptArgument, "summarise", "CHG-REQUIRED-ADDED"},
				{surfaceTemplateVars, catalogue.DriftURITemplate, "order", catalogue.ChgURITemplateVariables},
			} {
				code, rep := checkSurface(t, path, serve(t, sdk.build(tc.ch)))
				found := false
				for _, f := range rep.Findings {
					found = found || f.Rule == tc.rule && f.Tool == tc.name && f.Change == tc.change
				}
				if code != exitFindings || !found {
					t.Errorf("change %d: exit %d, findings %+v; want exit 1 and %s on %s", tc.ch, code, rep.Findings, tc.rule, tc.name)
				}
			}
		})
	}
}

// TestInteropSurfaceNotServed: a manifest that declares prompts, resources
// and templates against SDK servers that serve none (and do not advertise
// them) is compared, not failed: each declared item is missing.
func TestInteropSurfaceNotServed(t *testing.T) {
	path := writeFile(t, "surface.json", `{"tools":[],"prompts":[{"name":"summarise"}],"resources":[{"uri":"orders://recent","name":"recent"}],"resourceTemplates":[{"name":"order","uriTemplate":"orders://{id}"}]}`)
	for _, sdk := range []struct {
		name  string
		build func() http.Handler
	}{
		{"go-sdk stateless", func() http.Handler { return newGoSDKServer(true, "") }},
		{"go-sdk stateful", func() http.Handler { return newGoSDKServer(false, "") }},
		{"mcp-go", func() http.Handler { return newMCPGoServer("") }},
	} {
		t.Run(sdk.name, func(t *testing.T) {
			noLeaks(t)
			code, rep := checkSurface(t, path, serve(t, sdk.build()))
			want := map[string]bool{catalogue.DriftPromptMissing: false, catalogue.DriftResourceMissing: false, catalogue.DriftResourceTemplateMissing: false}
			for _, f := range rep.Findings {
				if _, ok := want[f.Rule]; ok {
					want[f.Rule] = true
				}
			}
			if code != exitFindings || !want[catalogue.DriftPromptMissing] || !want[catalogue.DriftResourceMissing] || !want[catalogue.DriftResourceTemplateMissing] {
				t.Errorf("exit %d, missing findings %v", code, want)
			}
		})
	}
}
