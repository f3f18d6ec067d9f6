package probe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

func invokeTarget(url string, inv config.Invoke) config.Target {
	t := config.NewTarget("inv", url)
	t.Invoke = inv
	return t
}

func TestPlanSendsNoToolsCall(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{json.RawMessage(outTool)}})
	defer srv.Close()
	rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{json.RawMessage(outTool)}), func(tg *config.Target) {
		tg.Invoke = config.Invoke{Tools: []string{"a"}, Seed: 42}
	})
	if srv.Count("tools/call") != 0 {
		t.Fatal("the plan sent a tools/call")
	}
	inv := rep.Invocation
	if inv == nil || inv.Executed || len(inv.Planned) != 1 || inv.Planned[0].Arguments == nil || *rep.Seed != 42 {
		t.Fatalf("invocation = %+v", inv)
	}
}

func TestGatesRefuseBeforeAnyRequest(t *testing.T) {
	m := declareRaw(t, []json.RawMessage{json.RawMessage(outTool),
		json.RawMessage(`{"name":"ro","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false}}`)})
	for _, tc := range []struct {
		name string
		t    config.Target
		want string
	}{
		{"execute without tools", invokeTarget("http://127.0.0.1:1/mcp", config.Invoke{Execute: true}), "not a wildcard"},
		{"undeclared tool", invokeTarget("http://127.0.0.1:1/mcp", config.Invoke{Tools: []string{"served_only"}}), `"served_only" is not declared`},
		{"production without the flag", func() config.Target {
			tg := invokeTarget("http://127.0.0.1:1/mcp", config.Invoke{Tools: []string{"a"}, Execute: true})
			tg.Environment = "production"
			return tg
		}(), "i_know_this_is_production"},
		{"unknown class, read-only hint opens nothing", invokeTarget("https://orders.internal/mcp", config.Invoke{Tools: []string{"ro"}, Execute: true}), "classifies as unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := probe.Plan(tc.t, m)
			if !errors.Is(err, probe.ErrGate) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Plan = %v, want a gate error with %q", err, tc.want)
			}
		})
	}
	// In a run, a refusal means no tools/call at all, and the report says why.
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{json.RawMessage(outTool)}})
	defer srv.Close()
	rep := probeOnce(t, srv, m, func(tg *config.Target) {
		tg.Environment = "production"
		tg.Invoke = config.Invoke{Tools: []string{"a"}, Execute: true}
	})
	if srv.Count("tools/call") != 0 || rep.Invocation.Refused == "" || rep.Invocation.Executed {
		t.Fatalf("refused run: calls=%d invocation=%+v", srv.Count("tools/call"), rep.Invocation)
	}
	// With the flag, production opens.
	rep = probeOnce(t, srv, m, func(tg *config.Target) {
		tg.Environment = "production"
		tg.Invoke = config.Invoke{Tools: []string{"a"}, Execute: true, IKnowThisIsProduction: true}
	})
	if srv.Count("tools/call") != 1 || !rep.Invocation.Executed {
		t.Fatalf("acknowledged run: calls=%d invocation=%+v", srv.Count("tools/call"), rep.Invocation)
	}
}

func TestSameSeedSameArguments(t *testing.T) {
	m := declareRaw(t, []json.RawMessage{json.RawMessage(`{"name":"s","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":1000},"e":{"enum":["a","b","c","d"]},"s":{"type":"string"}},"required":["n","e","s"]}}`)})
	a, _ := probe.Plan(invokeTarget("http://127.0.0.1:1/mcp", config.Invoke{Tools: []string{"s"}, Seed: 9}), m)
	b, _ := probe.Plan(invokeTarget("http://127.0.0.1:1/mcp", config.Invoke{Tools: []string{"s"}, Seed: 9}), m)
	if !bytes.Equal(a.Planned[0].Arguments, b.Planned[0].Arguments) {
		t.Fatalf("%s vs %s", a.Planned[0].Arguments, b.Planned[0].Arguments)
	}
}

func TestReturnedValuesReachNoArtifact(t *testing.T) {
	const returned = "MARKER-tool-returned-value"
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{json.RawMessage(outTool)},
		CallTool: func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"content":[{"type":"text","text":"` + returned + `"}],"structuredContent":{"hits":"` + returned + `","extra":"` + returned + `"}}`), nil
		}})
	defer srv.Close()
	rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{json.RawMessage(outTool)}), func(tg *config.Target) {
		tg.Invoke = config.Invoke{Tools: []string{"a"}, Execute: true}
	})
	f := find(rep, catalogue.DriftCallOutputSchema)
	if f == nil || f.Pointer != "/hits" || !strings.Contains(f.Message, `expected type "array", got string`) {
		t.Fatalf("finding = %+v", f)
	}
	mustNotContain(t, "report", reportJSON(rep), returned)
	var text bytes.Buffer
	probe.WriteText(&text, rep)
	mustNotContain(t, "text output", text.String(), returned)
}

func TestNonASCIIToolNameIsEncoded(t *testing.T) {
	tool := json.RawMessage(`{"name":"Hello, 世界","inputSchema":{"type":"object"}}`)
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{tool}})
	defer srv.Close()
	rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{tool}), func(tg *config.Target) {
		tg.Invoke = config.Invoke{Tools: []string{"Hello, 世界"}, Execute: true}
	})
	if rep.Invocation.Planned[0].Outcome != "result" {
		t.Fatalf("outcome %q", rep.Invocation.Planned[0].Outcome)
	}
	for _, r := range srv.Requests() {
		if r.Method == "tools/call" && r.Header.Get(mcp.HeaderName) != "=?base64?SGVsbG8sIOS4lueVjA==?=" {
			t.Fatalf("Mcp-Name = %q", r.Header.Get(mcp.HeaderName))
		}
	}
}

// TestReturnedKeysReachNoArtifact: keys a tool chose — 20,000 of them, one
// a megabyte long — are positions, never names, in findings: one finding
// for the schema keyword they break, no key in any output.
func TestReturnedKeysReachNoArtifact(t *testing.T) {
	const closed = `{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"hits":{"type":"array"}},"additionalProperties":{"type":"integer"}}}`
	var sc strings.Builder
	sc.WriteString(`{"hits":[],"` + strings.Repeat("K", 1<<20) + `":"x"`)
	for i := range 20000 {
		fmt.Fprintf(&sc, `,"MARKERKEY%d":"v"`, i)
	}
	sc.WriteString("}")
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{json.RawMessage(closed)},
		CallTool: func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"content":[],"structuredContent":` + sc.String() + `}`), nil
		}})
	defer srv.Close()
	rep := probeOnce(t, srv, declareRaw(t, []json.RawMessage{json.RawMessage(closed)}), func(tg *config.Target) {
		tg.Invoke = config.Invoke{Tools: []string{"a"}, Execute: true}
		tg.MaxResponseBytes = config.NewByteSize(8 << 20)
	})
	calls := toolsOf(rep, catalogue.DriftCallOutputSchema)
	if len(calls) != 1 {
		t.Fatalf("%d output-schema findings, want 1: %s", len(calls), reportJSON(rep)[:min(2000, len(reportJSON(rep)))])
	}
	if f := find(rep, catalogue.DriftCallOutputSchema); f.Pointer != "/*" {
		t.Errorf("pointer %q, want /*", f.Pointer)
	}
	out := reportJSON(rep)
	mustNotContain(t, "report", out, "MARKERKEY")
	mustNotContain(t, "report", out, "KKKKKKKK")
	if len(out) > 64<<10 {
		t.Errorf("report is %d bytes", len(out))
	}
}

// TestConfiguredArguments: configured arguments replace generated ones
// after the same schema check; a null member is left out as not provided.
func TestConfiguredArguments(t *testing.T) {
	m := declareRaw(t, []json.RawMessage{json.RawMessage(outTool)}) // q: string, required
	for _, tc := range []struct {
		name, want, wantErr string
		args                map[string]any
	}{
		{"used as given", `{"q":"orders"}`, "", map[string]any{"q": "orders"}},
		{"null means not provided", `{"q":"x"}`, "", map[string]any{"q": "x", "limit": nil}},
		{"checked against the schema", "", `configured arguments do not match the declared inputSchema: /q: expected type "string", got integer`, map[string]any{"q": 7}},
		{"a null required one is missing", "", "configured arguments do not match", map[string]any{"q": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := probe.Plan(invokeTarget("http://127.0.0.1:1/mcp", config.Invoke{Tools: []string{"a"},
				Arguments: map[string]map[string]any{"a": tc.args}}), m)
			if err != nil {
				t.Fatal(err)
			}
			pc := plan.Planned[0]
			if string(pc.Arguments) != tc.want || !strings.Contains(pc.Error, tc.wantErr) {
				t.Fatalf("arguments %s, error %q; want %s, %q", pc.Arguments, pc.Error, tc.want, tc.wantErr)
			}
		})
	}
}
