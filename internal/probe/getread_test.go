package probe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

func readsInvoke(execute bool) func(*config.Target) {
	return func(tg *config.Target) {
		tg.Invoke = config.Invoke{Prompts: []string{"summarise", "apology"}, Resources: []string{"orders://recent"}, Execute: execute, Seed: 7,
			PromptArguments: map[string]map[string]string{"apology": {}}}
	}
}

func TestPlanSendsNoGetOrRead(t *testing.T) {
	s := surface(nil)
	srv := mcptest.NewServer(s.opts)
	defer srv.Close()
	rep := probeOnce(t, srv, surfaceDeclared(t), readsInvoke(false))
	if srv.Count("prompts/get")+srv.Count("resources/read") != 0 {
		t.Fatal("the plan sent a prompts/get or resources/read")
	}
	inv := rep.Invocation
	if inv == nil || inv.Executed || len(inv.Reads) != 3 {
		t.Fatalf("invocation = %+v", inv)
	}
	// The required order_id gets a generated value, the optional tone none.
	got := inv.Reads[0].Arguments
	if len(got) != 1 || !strings.HasPrefix(got["order_id"], "driftd-") || inv.Reads[0].Outcome != "" {
		t.Fatalf("summarise planned %+v", inv.Reads[0])
	}
	again := probeOnce(t, srv, surfaceDeclared(t), readsInvoke(false))
	if again.Invocation.Reads[0].Arguments["order_id"] != got["order_id"] {
		t.Fatal("the same seed generated a different argument")
	}
	var b bytes.Buffer
	if err := probe.WriteText(&b, rep); err != nil || !strings.Contains(b.String(), "not executed") ||
		!strings.Contains(b.String(), "prompts/get summarise {\"order_id\":\"driftd-") || !strings.Contains(b.String(), "resources/read orders://recent\n") {
		t.Fatalf("text:\n%s", b.String())
	}
}

func TestReadGates(t *testing.T) {
	m := surfaceDeclared(t)
	url := "http://127.0.0.1:1/mcp"
	for _, tc := range []struct {
		name string
		inv  config.Invoke
		env  string
		want string
	}{
		{"undeclared prompt, served or not", config.Invoke{Prompts: []string{"extra"}}, "", `prompt "extra" is not declared`},
		{"undeclared resource", config.Invoke{Resources: []string{"orders://*"}}, "", `resource "orders://*" is not declared`},
		{"a template is not a resource", config.Invoke{Resources: []string{"orders://{order_id}"}}, "", "is not declared"},
		{"production without the flag", config.Invoke{Prompts: []string{"apology"}, Execute: true}, "production", "i_know_this_is_production"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := invokeTarget(url, tc.inv)
			tg.Environment = tc.env
			_, err := probe.Plan(tg, m)
			if !errors.Is(err, probe.ErrGate) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Plan = %v, want a gate error with %q", err, tc.want)
			}
		})
	}
	// An argument the declared prompt lacks is refused in the plan: that
	// prompt is not fetched.
	inv, err := probe.Plan(invokeTarget(url, config.Invoke{Prompts: []string{"summarise"},
		PromptArguments: map[string]map[string]string{"summarise": {"order_id": "o-1", "bogus": "x"}}}), m)
	if err != nil || inv.Reads[0].Error != `argument "bogus" is not declared by the prompt` {
		t.Fatalf("plan %+v, %v", inv, err)
	}
	inv, _ = probe.Plan(invokeTarget(url, config.Invoke{Prompts: []string{"summarise"},
		PromptArguments: map[string]map[string]string{"summarise": {"order_id": "o-1", "tone": "warm"}}}), m)
	if a := inv.Reads[0].Arguments; a["order_id"] != "o-1" || a["tone"] != "warm" || len(a) != 2 {
		t.Fatalf("given arguments %v", a)
	}
}

func TestExecuteGetAndRead(t *testing.T) {
	const marker = "MARKER-prompt-and-resource-text"
	for _, legacy := range []bool{false, true} {
		s := surface(func(o *mcptest.Options) {
			o.Legacy, o.Sessions = legacy, legacy
			o.Resources = append(o.Resources, resource("orders://größe", "text/plain"))
			o.GetPrompt = func(name string, args json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
				if name == "apology" {
					return nil, &mcptest.RPCError{Code: -32603, Message: marker}
				}
				return json.RawMessage(`{"description":"` + marker + `","messages":[{"role":"user","content":{"type":"text","text":"` + marker + `"}},{"role":"assistant","content":{"type":"text","text":"` + marker + `"}}]}`), nil
			}
			o.ReadResource = func(uri string) (json.RawMessage, *mcptest.RPCError) {
				return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"` + marker + `"},{"uri":"` + uri + `","blob":"TUFSS0VS"}]}`), nil
			}
		})
		srv := mcptest.NewServer(s.opts)
		p, r, tm := surfaceLists()
		m, err := manifest.Parse(surfaceManifest(p, append(r, resource("orders://größe", "text/plain")), tm), ".json")
		if err != nil {
			t.Fatal(err)
		}
		rep := probeOnce(t, srv, m, func(tg *config.Target) {
			readsInvoke(true)(tg)
			tg.Invoke.Resources = append(tg.Invoke.Resources, "orders://größe")
		})
		reads := rep.Invocation.Reads
		if len(reads) != 4 || reads[0].Outcome != "result" || *reads[0].Items != 2 || reads[1].Outcome != "jsonrpc_error -32603" ||
			reads[2].Outcome != "result" || *reads[2].Items != 2 || reads[3].Outcome != "result" || reads[3].Bytes == 0 {
			t.Fatalf("legacy %v: reads %+v", legacy, reads)
		}
		if has(rep, catalogue.ConfGetResultShape) || has(rep, catalogue.ConfReadResultShape) || has(rep, catalogue.ConfResultType) || has(rep, catalogue.ConfCacheHints) {
			t.Fatalf("legacy %v: findings %v", legacy, rep.Findings)
		}
		names := map[string]bool{}
		for _, q := range srv.Requests() {
			if q.Method == "prompts/get" || q.Method == "resources/read" {
				names[q.Header.Get("Mcp-Name")] = true
			}
		}
		want := map[string]bool{"summarise": true, "apology": true, "orders://recent": true, "=?base64?b3JkZXJzOi8vZ3LDtsOfZQ==?=": true}
		if legacy {
			want = map[string]bool{"": true} // Mcp-Name is a 2026-07-28 header
		}
		if len(names) != len(want) {
			t.Fatalf("legacy %v: Mcp-Name headers %v, want %v", legacy, names, want)
		}
		for n := range want {
			if !names[n] {
				t.Fatalf("legacy %v: Mcp-Name headers %v, want %v", legacy, names, want)
			}
		}
		var text bytes.Buffer
		_ = probe.WriteText(&text, rep)
		mustNotContain(t, "report", reportJSON(rep)+text.String(), marker)
		mustNotContain(t, "report", reportJSON(rep), "TUFSS0VS")
		srv.Close()
	}
}

func TestReadResultConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(*mcptest.Options)
		rule string
		want string
	}{
		{"no cache hints on resources/read", func(o *mcptest.Options) {
			o.OmitCacheHints = true
		}, catalogue.ConfCacheHints, "the resources/read result for orders://recent has no \"ttlMs\""},
		{"unknown resultType", func(o *mcptest.Options) { o.ResultType = "bogus" }, catalogue.ConfResultType, "prompts/get"},
		{"messages not an array", func(o *mcptest.Options) {
			o.GetPrompt = func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
				return json.RawMessage(`{"messages":{"role":"user"}}`), nil
			}
		}, catalogue.ConfGetResultShape, `"messages" is missing or not an array`},
		{"content without text or blob", func(o *mcptest.Options) {
			o.ReadResource = func(string) (json.RawMessage, *mcptest.RPCError) {
				return json.RawMessage(`{"contents":[{"uri":"orders://recent"},{"text":"x"},{"uri":"orders://recent","blob":"%%%"}]}`), nil
			}
		}, catalogue.ConfReadResultShape, `contents[0] has neither of "text" and "blob" (exactly one is required); contents[1] has no "uri" string; contents[2].blob is not a base64 string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcptest.NewServer(surface(tc.opts).opts)
			defer srv.Close()
			rep := probeOnce(t, srv, surfaceDeclared(t), readsInvoke(true))
			found := false
			for _, f := range rep.Findings {
				found = found || f.Rule == tc.rule && strings.Contains(f.Message, tc.want)
			}
			if !found {
				t.Fatalf("no %s with %q in %+v", tc.rule, tc.want, rep.Findings)
			}
		})
	}
}

// TestReadsShareTheLimits: a read answers within the response size limit
// and the run's deadline like every other request; past them the outcome
// is failed with the reason, and the run itself still succeeds.
func TestReadsShareTheLimits(t *testing.T) {
	big := strings.Repeat("x", 4096)
	srv := mcptest.NewServer(surface(func(o *mcptest.Options) {
		o.ReadResource = func(uri string) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"` + big + `"}]}`), nil
		}
	}).opts)
	defer srv.Close()
	rep := probeOnce(t, srv, surfaceDeclared(t), func(tg *config.Target) {
		readsInvoke(true)(tg)
		tg.MaxResponseBytes = config.NewByteSize(2048)
	})
	reads := rep.Invocation.Reads
	if !rep.Success || len(reads) != 3 || reads[0].Outcome != "result" || reads[2].Outcome != "failed: response_too_large" {
		t.Fatalf("success %v, reads %+v", rep.Success, reads)
	}
}
