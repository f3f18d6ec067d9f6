package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

var (
	mockPrompts   = []json.RawMessage{json.RawMessage(`{"name":"summarise","arguments":[{"name":"order_id","required":true}]}`), json.RawMessage(`{"name":"apology"}`)}
	mockResources = []json.RawMessage{json.RawMessage(`{"uri":"orders://recent","name":"recent"}`)}
	mockTemplates = []json.RawMessage{json.RawMessage(`{"uriTemplate":"orders://{id}","name":"order"}`)}
)

func TestCaptureWritesEveryAdvertisedList(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), Prompts: mockPrompts, Resources: mockResources, ResourceTemplates: mockTemplates, PageSize: 1})
	defer srv.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		only  string
		kinds []mcp.Kind
	}{
		{"", mcp.Kinds},
		{"tools,prompts", []mcp.Kind{mcp.KindTool, mcp.KindPrompt}},
		{"resourceTemplates", []mcp.Kind{mcp.KindResourceTemplate}},
	} {
		path := filepath.Join(dir, "m.json")
		args := []string{"capture", "--base-url", srv.URL, "-o", path}
		if tc.only != "" {
			args = append(args, "--only", tc.only)
		}
		if code, _, stderr := driftd(t, args...); code != exitOK {
			t.Fatalf("--only %q: exit %d: %s", tc.only, code, stderr)
		}
		m, err := manifest.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range mcp.Kinds {
			want := false
			for _, w := range tc.kinds {
				want = want || w == k
			}
			if m.Declares(k) != want {
				t.Errorf("--only %q: declares %s = %v", tc.only, k, m.Declares(k))
			}
		}
		// What was captured checks clean.
		if code, stdout, _ := driftd(t, "check", path, "--base-url", srv.URL); code != exitOK {
			t.Errorf("--only %q: check of the capture exited %d:\n%s", tc.only, code, stdout)
		}
	}
	if code, _, stderr := driftd(t, "capture", "--base-url", srv.URL, "--only", "tools,widgets"); code != exitUsage || !strings.Contains(stderr, `unknown list "widgets"`) {
		t.Errorf("bad --only: exit %d: %s", code, stderr)
	}
	// A server that advertises no prompts: asked for by name, warned about.
	plain := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer plain.Close()
	code, stdout, stderr := driftd(t, "capture", "--base-url", plain.URL, "--only", "tools,prompts")
	if code != exitOK || !strings.Contains(stderr, "does not advertise prompts") || strings.Contains(stdout, "prompts") {
		t.Errorf("unadvertised prompts: exit %d: %s\n%s", code, stderr, stdout)
	}
	if code, _, stderr := driftd(t, "capture", "--base-url", plain.URL, "--only", "prompts"); code != exitNoProbe || !strings.Contains(stderr, "nothing to capture") {
		t.Errorf("nothing to capture: exit %d: %s", code, stderr)
	}
}

func TestDiffComparesSurfaces(t *testing.T) {
	old := writeFile(t, "old.json", `{"tools":[],"prompts":[{"name":"p","arguments":[{"name":"a"}]}],"resourceTemplates":[{"name":"t","uriTemplate":"x://{a}"}]}`)
	updated := writeFile(t, "new.json", `{"tools":[],"prompts":[{"name":"p","arguments":[{"name":"a","required":true}]}],"resourceTemplates":[{"name":"t","uriTemplate":"x://{a}{?b}"}]}`)
	code, stdout, _ := driftd(t, "diff", old, updated)
	if code != exitFindings || !strings.Contains(stdout, "0 tools → 0 tools, 1 prompts → 1 prompts, 1 resourceTemplates → 1 resourceTemplates") ||
		!strings.Contains(stdout, "prompt p /arguments/a") || !strings.Contains(stdout, catalogue.DriftURITemplate) {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}
