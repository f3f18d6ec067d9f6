package daemon_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestDaemonGetReadLeavesNoText: a target whose invoke: gets a prompt and
// reads a resource records the outcomes in its report, and what the server
// returned reaches no endpoint, log line (at debug) or state file.
func TestDaemonGetReadLeavesNoText(t *testing.T) {
	const returned = "MARKER-daemon-prompt-and-resource-text"
	prompts := []json.RawMessage{json.RawMessage(`{"name":"summarise","arguments":[{"name":"order_id","required":true}]}`)}
	resources := []json.RawMessage{json.RawMessage(`{"uri":"orders://recent","name":"recent"}`)}
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), Prompts: prompts, Resources: resources,
		GetPrompt: func(string, json.RawMessage) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"description":"` + returned + `","messages":[{"role":"user","content":{"type":"text","text":"` + returned + `"}}]}`), nil
		},
		ReadResource: func(uri string) (json.RawMessage, *mcptest.RPCError) {
			return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"` + returned + `"}]}`), nil
		}})
	defer srv.Close()
	e := newEnv(t)
	m, _ := json.Marshal(map[string]any{"tools": mockTools("a"), "prompts": prompts, "resources": resources})
	e.write("m.json", string(m))
	e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - name: reads
    url: %q
    manifest: m.json
    invoke: {prompts: [summarise], resources: ["orders://recent"], execute: true}
`, srv.URL))
	d, base := e.start(false)
	waitMetricAtLeast(t, base, `driftd_probes_total{result="success",target="reads"}`, 2)
	var rep struct {
		Invocation struct {
			Reads []struct{ Kind, Name, Outcome string } `json:"reads"`
		} `json:"invocation"`
	}
	eventually(t, 10*time.Second, "reads in the report", func() bool {
		_, r := get(t, base+"/api/v1/targets/reads")
		json.Unmarshal(apiData(r), &rep)
		return len(rep.Invocation.Reads) == 2
	})
	for _, r := range rep.Invocation.Reads {
		if r.Outcome != "result" {
			t.Errorf("%s %s: outcome %q", r.Kind, r.Name, r.Outcome)
		}
	}
	e.nowhere(d, base, []string{"/", "/targets/reads", "/api/v1/targets", "/api/v1/targets/reads", "/api/v1/targets/reads/history", "/metrics"}, returned, "returned text")
	if err := srv.CheckNoViolations(); err != nil {
		t.Error(err)
	}
}
