package probe_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

func surfaceDeclared(t *testing.T) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse(surfaceManifest(surfaceLists()), ".json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// kindsOf returns the kinds of rule's findings.
func kindsOf(rep *probe.Report, rule string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f.Kind)
		}
	}
	return out
}

// TestSurfaceCleanInBothEras lists every kind in the modern and the legacy
// era and finds no drift; prompts/get and resources/read are never sent.
func TestSurfaceCleanInBothEras(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		s := surface(func(o *mcptest.Options) { o.Legacy, o.Sessions, o.PageSize = legacy, legacy, 1 })
		srv := mcptest.NewServer(s.opts)
		rep := probeOnce(t, srv, surfaceDeclared(t), nil)
		srv.Close()
		if !rep.Success || len(rep.Drift.Findings) > boolInt(legacy) {
			t.Errorf("legacy=%v: success=%v drift %v", legacy, rep.Success, rep.Drift.Findings)
		}
		for _, c := range []*probe.ToolCounts{rep.Prompts, rep.Resources, rep.ResourceTemplates} {
			if c == nil || c.Served != c.Declared || c.SecondConnection != "same" {
				t.Errorf("legacy=%v: counts %+v", legacy, c)
			}
		}
		if rep.Prompts.Pages != 2 {
			t.Errorf("legacy=%v: prompts read in %d pages, want 2", legacy, rep.Prompts.Pages)
		}
		for _, m := range []string{"prompts/get", "resources/read", "resources/subscribe"} {
			if n := srv.Count(m); n != 0 {
				t.Errorf("legacy=%v: %s sent %d times", legacy, m, n)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1 // MCP-DRIFT-LEGACY-SERVER
	}
	return 0
}

// TestItemListsShareTheListRules holds prompts/list to the rules of
// tools/list: loop detection, page cap, second connection, cache hints.
func TestItemListsShareTheListRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*mcptest.Options)
		tweak func(*config.Target)
		rule  string
	}{
		{"cursor loop", func(o *mcptest.Options) {
			o.PageSize, o.Fault, o.FaultMethods = 1, mcptest.FaultCursorLoop, []string{"prompts/list"}
		}, nil, catalogue.ConfPaginationLoop},
		{"page cap", func(o *mcptest.Options) {
			o.PageSize, o.Tools = 1, tools("a")
			o.Prompts = append(o.Prompts, prompt("x"), prompt("y"))
		}, func(t *config.Target) { t.MaxListPages = 2 }, catalogue.DriftPaginationCapped},
		{"set varies", func(o *mcptest.Options) { o.OtherConnPrompts = o.Prompts[:1] }, nil, catalogue.ConfToolsetVaries},
		{"order varies", func(o *mcptest.Options) { o.ReverseOtherConns = true }, nil, catalogue.ConfOrderVaries},
		{"cache hints", func(o *mcptest.Options) { o.OmitCacheHints = true }, nil, catalogue.ConfCacheHints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := surface(tc.edit)
			srv := mcptest.NewServer(s.opts)
			defer srv.Close()
			rep := probeOnce(t, srv, surfaceDeclared(t), tc.tweak)
			if !strings.Contains(strings.Join(kindsOf(rep, tc.rule), ","), "prompt") {
				t.Errorf("no %s finding of kind prompt: %v", tc.rule, kindsOf(rep, tc.rule))
			}
			if tc.rule == catalogue.DriftPaginationCapped && has(rep, catalogue.DriftPromptMissing) {
				t.Error("missing prompts reported although prompts/list paging was capped")
			}
		})
	}
}

// TestItemFindingsCarryNoServerText changes every text and the name of a
// resource to a marker: findings report lengths and digests only.
func TestItemFindingsCarryNoServerText(t *testing.T) {
	const marker = "MARKER-ignore-previous-instructions"
	s := surface(func(o *mcptest.Options) {
		o.Prompts[1] = json.RawMessage(`{"name":"apology","title":"` + marker + `","description":"` + marker + `"}`)
		o.Resources[0] = json.RawMessage(`{"uri":"orders://recent","name":"` + marker + `","mimeType":"application/json"}`)
		o.ResourceTemplates[0] = json.RawMessage(`{"name":"order","uriTemplate":"orders://{order_id}","mimeType":"application/json","description":"` + marker + `"}`)
	})
	srv := mcptest.NewServer(s.opts)
	defer srv.Close()
	rep := probeOnce(t, srv, surfaceDeclared(t), nil)
	if got := len(toolsOf(rep, catalogue.DriftDescription)); got != 2 {
		t.Errorf("%d description findings, want 2 (prompt, template)", got)
	}
	if got := len(toolsOf(rep, catalogue.DriftTitle)); got != 2 {
		t.Errorf("%d title findings, want 2 (prompt title, resource name)", got)
	}
	if strings.Contains(reportJSON(rep), marker) {
		t.Error("server text reached the report")
	}
}

// TestAbsentListIsServedEmpty: a manifest that declares prompts against a
// server without prompts/list (-32601) reports each prompt missing.
func TestAbsentListIsServedEmpty(t *testing.T) {
	s := surface(func(o *mcptest.Options) { o.Prompts = nil })
	srv := mcptest.NewServer(s.opts)
	defer srv.Close()
	rep := probeOnce(t, srv, surfaceDeclared(t), nil)
	if !rep.Success || len(toolsOf(rep, catalogue.DriftPromptMissing)) != 2 || rep.Prompts == nil || !rep.Prompts.MethodNotFound {
		t.Errorf("success=%v missing=%v counts=%+v", rep.Success, toolsOf(rep, catalogue.DriftPromptMissing), rep.Prompts)
	}
}

// TestAdvertisedListsAreListedWithoutAManifest: conformance of what the
// server advertises needs no manifest; what it does not advertise (and
// no manifest declares) is not asked for.
func TestAdvertisedListsAreListedWithoutAManifest(t *testing.T) {
	s := surface(func(o *mcptest.Options) { o.Prompts = append(o.Prompts, json.RawMessage(`{"name":7}`)) })
	srv := mcptest.NewServer(s.opts)
	defer srv.Close()
	rep := probeOnce(t, srv, nil, nil)
	if f := find(rep, catalogue.ConfListShape); f == nil || f.Pointer != "/prompts/2" || f.Kind != "prompt" {
		t.Errorf("list shape finding %+v", f)
	}
	srv.SetOptions(func(o *mcptest.Options) { o.HideCapabilities = true })
	srv.Reset()
	rep = probeOnce(t, srv, nil, nil)
	if rep.Prompts != nil || srv.Count("prompts/list")+srv.Count("resources/list") != 0 {
		t.Errorf("unadvertised lists were listed: %+v", rep.Prompts)
	}
}

// TestHostileItemLists: a broken or oversized item list ends the run as
// a classified failure within its deadline.
func TestHostileItemLists(t *testing.T) {
	const timeout = time.Second
	for _, tc := range []struct {
		name   string
		edit   func(*mcptest.Options)
		tweak  func(*config.Target)
		reason mcp.Reason
	}{
		{"invalid JSON", func(o *mcptest.Options) {
			o.Fault, o.FaultMethods = mcptest.FaultInvalidJSON, []string{"resources/templates/list"}
		}, nil, mcp.ReasonInvalidResponse},
		{"never answers", func(o *mcptest.Options) {
			o.Fault, o.FaultMethods = mcptest.FaultSSENeverAnswers, []string{"prompts/list"}
		}, nil, mcp.ReasonTimeout},
		{"byte budget", func(o *mcptest.Options) {
			o.Prompts = []json.RawMessage{json.RawMessage(`{"name":"big","description":"` + strings.Repeat("x", 64<<10) + `"}`)}
		}, func(t *config.Target) { t.MaxRunBytes = config.NewByteSize(32 << 10) }, mcp.ReasonResponseTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := surface(tc.edit)
			srv := mcptest.NewServer(s.opts)
			defer srv.Close()
			start := time.Now()
			rep := probeOnce(t, srv, surfaceDeclared(t), all(func(tg *config.Target) { tg.Timeout = timeout }, tc.tweak))
			if el := time.Since(start); el > timeout+time.Second {
				t.Errorf("run took %v", el)
			}
			if rep.Success || rep.FailureReason != tc.reason {
				t.Errorf("success=%v reason=%q (%s), want %q", rep.Success, rep.FailureReason, rep.FailureMessage, tc.reason)
			}
		})
	}
}

// TestDiffComparesEveryList runs driftd diff's comparison over surfaces.
func TestDiffComparesEveryList(t *testing.T) {
	_, r, _ := surfaceLists()
	old := surfaceDeclared(t)
	p2 := []json.RawMessage{prompt("summarise", "order_id!", "tone", "locale!")}
	tm2 := []json.RawMessage{template("order", "orders://{tenant}/{order_id}")}
	updated, err := manifest.Parse(surfaceManifest(p2, r, tm2), ".json")
	if err != nil {
		t.Fatal(err)
	}
	rep := probe.Diff("diff", old, updated, probe.Options{Version: "test"})
	for _, rule := range []string{catalogue.DriftPromptMissing, catalogue.DriftPromptArgument, catalogue.DriftURITemplate} {
		if !has(rep, rule) {
			t.Errorf("no %s", rule)
		}
	}
	if f := find(rep, catalogue.DriftPromptArgument); f.Grade != catalogue.BrkInputRequiredAdded || f.Direction != "input" || f.Pointer != "/arguments/locale" {
		t.Errorf("argument finding %+v", f)
	}
}

// TestManyItemsAreBounded: 99,000 undeclared prompts and a prompt whose
// thousand arguments were swapped for a thousand others: linear work, the
// findings capped per rule. About the bound, not speed (under -race on
// two busy cores this takes seconds), as TestMillionToolsIsBounded.
func TestManyItemsAreBounded(t *testing.T) {
	const n = 99_000
	prompts := make([]json.RawMessage, 0, n)
	for i := range n {
		prompts = append(prompts, json.RawMessage(`{"name":"p`+strconv.Itoa(i)+`"}`))
	}
	args := make([]string, 2000)
	for i := range args {
		args[i] = "a" + strconv.Itoa(i)
	}
	prompts = append(prompts, prompt("summarise", args[1000:]...))
	s := surface(func(o *mcptest.Options) { o.Prompts = prompts })
	srv := mcptest.NewServer(s.opts)
	defer srv.Close()
	declared, err := manifest.Parse(surfaceManifest([]json.RawMessage{prompt("summarise", args[:1000]...)}, []json.RawMessage{}, []json.RawMessage{}), ".json")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep := probeOnce(t, srv, declared, func(tg *config.Target) { tg.Timeout = 30 * time.Second })
	if el := time.Since(start); el > 31*time.Second || !rep.Success {
		t.Fatalf("run took %v, success=%v (%s)", el, rep.Success, rep.FailureMessage)
	}
	if got := len(toolsOf(rep, catalogue.DriftPromptUndeclared)); got != catalogue.MaxPerRule {
		t.Errorf("%d undeclared findings listed, want the cap %d", got, catalogue.MaxPerRule)
	}
}

// refusePrompts answers prompts/list with a JSON-RPC -32603, the way some
// servers refuse a list they do not have.
func refusePrompts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "prompts/list" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32603,"message":"prompts not supported"}}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// TestUnadvertisedListRefused: a JSON-RPC error to a list the server never
// advertised means it has none (each declared prompt missing); the same
// error to a list it advertises fails the run.
func TestUnadvertisedListRefused(t *testing.T) {
	for _, advertised := range []bool{false, true} {
		s := surface(func(o *mcptest.Options) {
			if !advertised {
				o.Prompts = nil
			}
		})
		srv := mcptest.NewServer(s.opts)
		front := httptest.NewServer(refusePrompts(srv.Handler))
		rep := probeOnce(t, srv, surfaceDeclared(t), func(tg *config.Target) { tg.URL = front.URL + mcptest.EndpointPath })
		front.Close()
		srv.Close()
		switch {
		case !advertised && (!rep.Success || len(toolsOf(rep, catalogue.DriftPromptMissing)) != 2):
			t.Errorf("not advertised: success=%v (%s), missing %v", rep.Success, rep.FailureMessage, toolsOf(rep, catalogue.DriftPromptMissing))
		case advertised && (rep.Success || rep.FailureReason != mcp.ReasonJSONRPCError):
			t.Errorf("advertised: success=%v reason=%s", rep.Success, rep.FailureReason)
		}
	}
}
