package main

// Interoperability against real, independently written MCP servers
// (DESIGN §17): the official go-sdk v1.8.0 in its stateless (2026-07-28) and
// default (legacy-only over HTTP) modes, and mark3labs/mcp-go v1.2.1 with
// pagination, in both eras. Each server runs in-process on 127.0.0.1:0.

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
)

// roundTrip is what every server must pass: capture writes a manifest of
// every tool, check of that manifest against the same server exits 0 with no
// drift beyond allowDrift, and check against a server built the same way
// minus one tool exits 1 with exactly that tool missing. It returns the
// captured manifest and the two check reports for era-specific assertions.
func roundTrip(t *testing.T, build func(omit string) http.Handler, tools []string, omit string, allowDrift ...string) (m *manifest.Manifest, same, removed *report) {
	t.Helper()
	noLeaks(t)
	url := serve(t, build(""))
	path := captureManifest(t, url)
	m, err := manifest.Load(path)
	if err != nil {
		t.Fatalf("captured manifest does not load: %v", err)
	}
	if got := m.Names(); !slices.Equal(got, tools) {
		t.Fatalf("captured manifest names = %v, want %v", got, tools)
	}
	for _, tool := range m.Tools {
		var in struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &in); err != nil || in.Type != "object" || len(in.Properties) == 0 {
			t.Errorf("captured %s inputSchema = %s, want the SDK-generated object schema", tool.Name, tool.InputSchema)
		}
		if tool.Description == "" {
			t.Errorf("captured %s lost its description", tool.Name)
		}
	}

	code, same := checkReport(t, path, url)
	if code != exitOK {
		t.Errorf("check against the captured server exited %d, want 0", code)
	}
	if !same.Success {
		t.Fatalf("check failed: %s", same.FailureReason)
	}
	for _, rule := range same.rulesWithPrefix("MCP-DRIFT-") {
		if !slices.Contains(allowDrift, rule) {
			t.Errorf("unexpected drift finding %s against the captured server", rule)
		}
	}
	if same.Tools.Served != len(tools) {
		t.Errorf("tools.served = %d, want %d", same.Tools.Served, len(tools))
	}
	if same.Tools.SecondConnection != "same" {
		t.Errorf("tools.second_connection = %q, want \"same\"", same.Tools.SecondConnection)
	}

	code, removed = checkReport(t, path, serve(t, build(omit)))
	if code != exitFindings {
		t.Errorf("check with %q removed exited %d, want 1", omit, code)
	}
	if got := removed.with(catalogue.DriftToolMissing); !slices.Equal(got, []string{omit}) {
		t.Errorf("%s findings name %q, want exactly [%q]", catalogue.DriftToolMissing, got, omit)
	}
	for _, f := range removed.Findings {
		if f.Rule == catalogue.DriftToolMissing && f.Severity != "ERROR" {
			t.Errorf("%s severity = %s, want ERROR", f.Rule, f.Severity)
		}
	}
	if got := removed.with(catalogue.DriftToolUndeclared); len(got) != 0 {
		t.Errorf("unexpected %s for %q", catalogue.DriftToolUndeclared, got)
	}
	if removed.Tools.Served != len(tools)-1 {
		t.Errorf("tools.served with %q removed = %d, want %d", omit, removed.Tools.Served, len(tools)-1)
	}
	return m, same, removed
}

// noLeaks fails the test if goroutines started during it (the SDK servers',
// driftd's HTTP clients') outlive it. Registered first, it runs after the
// servers' own cleanups have closed them.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// annotations decodes the captured annotations of the named tool.
func annotations(t *testing.T, m *manifest.Manifest, name string) map[string]any {
	t.Helper()
	for _, tool := range m.Tools {
		if tool.Name == name {
			var a map[string]any
			if err := json.Unmarshal(tool.Annotations, &a); err != nil {
				t.Errorf("captured %s annotations = %s: %v", name, tool.Annotations, err)
			}
			if len(tool.OutputSchema) == 0 {
				t.Errorf("captured %s has no outputSchema", name)
			}
			return a
		}
	}
	t.Errorf("captured manifest has no %s", name)
	return nil
}

func assertModern(t *testing.T, rep *report) {
	t.Helper()
	if rep.Era != "modern" {
		t.Errorf("era = %q, want \"modern\"", rep.Era)
	}
	if v := rep.ProtocolRevision.Value; v == nil || *v != "2026-07-28" {
		t.Errorf("protocol_revision.value = %v, want \"2026-07-28\"", deref(v))
	}
	if got := rep.with(catalogue.DriftLegacyServer); len(got) != 0 {
		t.Errorf("%s on a modern server", catalogue.DriftLegacyServer)
	}
}

func assertLegacy(t *testing.T, rep *report) {
	t.Helper()
	if rep.Era != "legacy" {
		t.Errorf("era = %q, want \"legacy\"", rep.Era)
	}
	if v := rep.ProtocolRevision.Value; v != nil {
		t.Errorf("protocol_revision.value = %q, want null for a legacy server", *v)
	}
	if rep.ProtocolRevision.Reason == "" {
		t.Error("protocol_revision.reason is empty; a legacy run must say why no revision is claimed")
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Rule == catalogue.DriftLegacyServer {
			n++
			if f.Severity != "INFO" {
				t.Errorf("%s severity = %s, want INFO", f.Rule, f.Severity)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d %s findings, want 1", n, catalogue.DriftLegacyServer)
	}
	for _, f := range rep.Findings {
		if catalogue.FamilyOf(f.Rule) == catalogue.FamilyConf && f.Rule != catalogue.ConfOrderVaries {
			// Modern-only rules (cache hints, resultType, serverInfo) must
			// not be applied to a legacy server.
			t.Errorf("conformance finding %s against a legacy server", f.Rule)
		}
	}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// go-sdk v1.8.0 with Stateless: true serves 2026-07-28 (reference §9.1,
// §10): server/discover lists it, tools/list carries resultType, ttlMs,
// cacheScope and serverInfo, so nothing but the removed tool is reported.
func TestInteropGoSDKStateless(t *testing.T) {
	build := func(omit string) http.Handler { return newGoSDKServer(true, omit) }
	m, same, removed := roundTrip(t, build, goSDKTools, "cancel_order")
	if a := annotations(t, m, "get_order"); a["readOnlyHint"] != true || a["title"] != "Get order" {
		t.Errorf("captured get_order annotations = %v, want readOnlyHint true and title \"Get order\"", a)
	}
	assertModern(t, same)
	assertModern(t, removed)
	if same.Tools.Pages != 1 {
		t.Errorf("tools.pages = %d, want 1", same.Tools.Pages)
	}
	if got := same.rulesWithPrefix("MCP-CONF-"); len(got) != 0 {
		t.Errorf("conformance findings against go-sdk stateless: %v", got)
	}
}

// go-sdk v1.8.0 in its default (stateful) mode is legacy-only over HTTP
// (reference §2, §9.1, §10): server/discover answers 200 with a
// DiscoverResult listing only 2025-11-25 … 2024-11-05, so driftd must fall
// back to initialize, keep the Mcp-Session-Id it mints, and compare anyway.
func TestInteropGoSDKStateful(t *testing.T) {
	build := func(omit string) http.Handler { return newGoSDKServer(false, omit) }
	_, same, removed := roundTrip(t, build, goSDKTools, "echo", catalogue.DriftLegacyServer)
	assertLegacy(t, same)
	assertLegacy(t, removed)
	if same.Tools.Pages != 1 {
		t.Errorf("tools.pages = %d, want 1", same.Tools.Pages)
	}
}

// mcp-go v1.2.1 serves both eras on one endpoint, deciding per request from
// the version in _meta and MCP-Protocol-Version. By default its
// server/discover lists 2026-07-28 first, so driftd stays modern; restricted
// with WithStreamableHTTPProtocolVersions to the legacy revisions it answers
// a 2026-07-28 server/discover with 400 + -32022 listing only those, and
// driftd falls back to initialize (reference §5.2: a -32022 whose supported
// list holds only legacy versions means initialize with the best one).
// Seven tools with a page size of three take three pages in either era.
func TestInteropMCPGo(t *testing.T) {
	t.Run("modern", func(t *testing.T) {
		build := func(omit string) http.Handler { return newMCPGoServer(omit) }
		m, same, removed := roundTrip(t, build, mcpGoTools, "delta")
		if a := annotations(t, m, "alpha"); a["readOnlyHint"] != true {
			t.Errorf("captured alpha annotations = %v, want readOnlyHint true", a)
		}
		assertModern(t, same)
		assertModern(t, removed)
		if same.Tools.Pages != 3 {
			t.Errorf("tools.pages = %d, want 3", same.Tools.Pages)
		}
		if got := same.rulesWithPrefix("MCP-CONF-"); len(got) != 0 {
			t.Errorf("conformance findings against mcp-go: %v", got)
		}
	})
	t.Run("legacy", func(t *testing.T) {
		build := func(omit string) http.Handler {
			return newMCPGoServer(omit, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
		}
		_, same, removed := roundTrip(t, build, mcpGoTools, "golf", catalogue.DriftLegacyServer)
		assertLegacy(t, same)
		assertLegacy(t, removed)
		if same.Tools.Pages != 3 {
			t.Errorf("tools.pages = %d, want 3", same.Tools.Pages)
		}
	})
}
