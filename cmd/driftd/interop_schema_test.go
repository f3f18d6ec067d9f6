package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/driftd/driftd/internal/catalogue"
)

// Version 2 of the go-sdk server's search tool: a new required argument,
// and a result property gone.
type (
	searchInV2 struct {
		Query  string `json:"query" jsonschema:"the search terms"`
		Limit  int    `json:"limit,omitempty" jsonschema:"at most this many results"`
		Region string `json:"region" jsonschema:"where to search"`
	}
	searchOutV2 struct {
		IDs []string `json:"ids"`
	}
)

// newGoSDKDrifted serves search_orders v1 or v2, and get_order with every
// annotation hint spelled out at its default value.
func newGoSDKDrifted(v2 bool) http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-drift", Version: "2.0.0"}, nil)
	if v2 {
		gosdk.AddTool(s, &gosdk.Tool{Name: "search_orders", Description: "Search orders by free text."},
			func(context.Context, *gosdk.CallToolRequest, searchInV2) (*gosdk.CallToolResult, searchOutV2, error) {
				return nil, searchOutV2{}, nil
			})
	} else {
		gosdk.AddTool(s, &gosdk.Tool{Name: "search_orders", Description: "Search orders by free text."},
			func(context.Context, *gosdk.CallToolRequest, searchIn) (*gosdk.CallToolResult, searchOut, error) {
				return nil, searchOut{}, nil
			})
	}
	yes := true
	gosdk.AddTool(s, &gosdk.Tool{Name: "get_order", Description: "Fetch one order.",
		Annotations: &gosdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
		func(context.Context, *gosdk.CallToolRequest, orderIn) (*gosdk.CallToolResult, orderOut, error) {
			return nil, orderOut{}, nil
		})
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, &gosdk.StreamableHTTPOptions{Stateless: true})
}

// TestInteropGoSDKSchemaDrift captures a live go-sdk server, then checks the
// capture against the server's next version: the added required argument
// and the removed result property must be graded breaking in their
// directions, and go-sdk spelling out default hints must not be drift.
func TestInteropGoSDKSchemaDrift(t *testing.T) {
	noLeaks(t)
	path := captureManifest(t, serve(t, newGoSDKDrifted(false)))
	code, stdout, stderr := driftd(t, "check", path, "--base-url", serve(t, newGoSDKDrifted(true)), "--json")
	var rep struct {
		Findings []catalogue.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("report:\n%s", stdout)
		}
	})
	if code != exitFindings {
		t.Errorf("exit %d, want 1", code)
	}
	want := map[string]bool{
		"input /properties/region CHG-REQUIRED-ADDED BRK-INPUT-REQUIRED-ADDED":      false,
		"output /properties/total CHG-PROPERTY-REMOVED BRK-OUTPUT-PROPERTY-REMOVED": false,
		"output /properties/total CHG-REQUIRED-REMOVED BRK-OUTPUT-REQUIRED-REMOVED": false,
		"input /properties/region CHG-PROPERTY-ADDED BRK-COMPATIBLE":                false,
	}
	for _, f := range rep.Findings {
		key := f.Direction + " " + f.Pointer + " " + f.Change + " " + f.Grade
		if _, ok := want[key]; ok {
			want[key] = true
			if f.Tool != "search_orders" {
				t.Errorf("%s names tool %q", key, f.Tool)
			}
			if g, _ := catalogue.LookupGrade(f.Grade); g.Breaking != (f.Rule == catalogue.DriftSchema) {
				t.Errorf("%s has rule %s", key, f.Rule)
			}
		}
		if f.Rule == catalogue.DriftAnnotation {
			t.Errorf("go-sdk's explicit default hints reported as drift: %s", f.Message)
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("no finding %s", k)
		}
	}
	// The manifest declares no annotations for get_order at all; the
	// served ones spell out defaults: effective values are equal.
	manifestNoHints := writeFile(t, "declared.json", `{"tools":[{"name":"get_order","description":"Fetch one order.",
		"inputSchema":{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string","description":"the order to act on"}},"additionalProperties":false}}]}`)
	_, stdout, _ = driftd(t, "check", manifestNoHints, "--base-url", serve(t, newGoSDKDrifted(false)), "--json")
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule == catalogue.DriftAnnotation {
			t.Errorf("annotation drift against explicit defaults: %s", f.Message)
		}
	}
}
