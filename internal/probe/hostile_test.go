package probe_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// TestHostileWire points driftd at servers that misbehave and checks that
// each run ends as a classified failure or finding within its deadline plus
// one second. TestMain's goleak check covers the goroutines.
func TestHostileWire(t *testing.T) {
	const timeout = time.Second
	for _, tc := range []struct {
		name    string
		opts    mcptest.Options
		limit   int64
		reason  mcp.Reason // "" when the run must succeed
		finding string
	}{
		{name: "oversized body", opts: mcptest.Options{Fault: mcptest.FaultOversized}, limit: 1 << 20, reason: mcp.ReasonResponseTooLarge},
		{name: "oversized SSE event", opts: mcptest.Options{Tools: tools(strings.Repeat("x", 4096)), SSE: true}, limit: 2048, reason: mcp.ReasonResponseTooLarge},
		{name: "SSE never answers", opts: mcptest.Options{Fault: mcptest.FaultSSENeverAnswers}, reason: mcp.ReasonTimeout},
		{name: "trickled body", opts: mcptest.Options{Fault: mcptest.FaultTrickle}, reason: mcp.ReasonTimeout},
		{name: "body never ends", opts: mcptest.Options{Fault: mcptest.FaultNeverEnding}, limit: 1 << 20, reason: mcp.ReasonResponseTooLarge},
		{name: "invalid JSON", opts: mcptest.Options{Fault: mcptest.FaultInvalidJSON}, reason: mcp.ReasonInvalidResponse},
		{name: "wrong id", opts: mcptest.Options{Fault: mcptest.FaultWrongID}, reason: mcp.ReasonInvalidResponse},
		{name: "odd JSON-RPC error", opts: mcptest.Options{Fault: mcptest.FaultRPCErrorOdd}, reason: mcp.ReasonInvalidResponse},
		{name: "HTTP 500", opts: mcptest.Options{Fault: mcptest.FaultStatus500, FaultMethods: []string{"tools/list"}}, reason: mcp.ReasonHTTPStatus},
		{name: "redirect", opts: mcptest.Options{Fault: mcptest.FaultRedirect}, reason: mcp.ReasonHTTPStatus, finding: catalogue.ConfRedirect},
		{name: "cursor loop", opts: mcptest.Options{Tools: tools("a", "b"), PageSize: 1, Fault: mcptest.FaultCursorLoop}, finding: catalogue.ConfPaginationLoop},
		{name: "deep schema", opts: mcptest.Options{Tools: []json.RawMessage{deepTool(2000)}}, finding: catalogue.ConfSchemaInvalid},
		{name: "enormous tool name", opts: mcptest.Options{Tools: tools(strings.Repeat("n", 1<<16))}, finding: catalogue.ConfToolNameFormat},
		// A key whose decoded text (U+FFFD for each invalid byte) is
		// longer than the schema itself, in an object the declared schema
		// has too: the diff's index once sliced the schema's bytes at the
		// decoded text's offsets and panicked.
		{name: "non-UTF-8 property name", opts: mcptest.Options{Tools: []json.RawMessage{json.RawMessage(
			"{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"},\"" +
				strings.Repeat("\xff", 100) + "\":{}},\"required\":[\"q\"]}}")}}},
		{name: "non-UTF-8 tool name", opts: mcptest.Options{Tools: []json.RawMessage{json.RawMessage("{\"name\":\"bad\xff\xfe\",\"inputSchema\":{\"type\":\"object\"}}")}}, finding: catalogue.ConfToolNameFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcptest.NewServer(tc.opts)
			defer srv.Close()
			start := time.Now()
			rep := probeOnce(t, srv, declare(t, "a"), func(tg *config.Target) {
				tg.Timeout = timeout
				if tc.limit > 0 {
					tg.MaxResponseBytes = config.NewByteSize(tc.limit)
				}
			})
			if el := time.Since(start); el > timeout+time.Second {
				t.Errorf("run took %v, more than its deadline plus one second", el)
			}
			if tc.reason != "" && (rep.Success || rep.FailureReason != tc.reason) {
				t.Errorf("success=%v reason=%q (%s), want failure %q", rep.Success, rep.FailureReason, rep.FailureMessage, tc.reason)
			}
			if tc.reason == "" && !rep.Success {
				t.Errorf("run failed (%s: %s), want success with a finding", rep.FailureReason, rep.FailureMessage)
			}
			if tc.finding != "" && !has(rep, tc.finding) {
				t.Errorf("no %s finding", tc.finding)
			}
			for _, f := range rep.Findings {
				if len(f.Tool) > sanitize.MaxName || !json.Valid([]byte(fmt.Sprintf("%q", f.Tool))) {
					t.Errorf("finding tool name not bounded: %d bytes", len(f.Tool))
				}
			}
		})
	}
}

// deepTool has an inputSchema nested depth levels deep.
func deepTool(depth int) json.RawMessage {
	schema := strings.Repeat(`{"type":"object","properties":{"x":`, depth) + `{}` + strings.Repeat(`}}`, depth)
	return json.RawMessage(`{"name":"a","inputSchema":` + schema + `}`)
}

func TestMillionToolsIsBounded(t *testing.T) {
	many := make([]json.RawMessage, probe.MaxTools+1)
	for i := range many {
		many[i] = json.RawMessage(fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i))
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: many, PageSize: 40_000})
	defer srv.Close()
	// About the bound, not speed: three 2 MB pages took more than the
	// usual 5 s under the race detector on a busy machine.
	rep := probeOnce(t, srv, declare(t, "a"), func(t *config.Target) { t.Timeout = 60 * time.Second })
	if rep.Success || rep.FailureReason != mcp.ReasonResponseTooLarge || has(rep, catalogue.DriftToolMissing) {
		t.Fatalf("success=%v reason=%s (%s)", rep.Success, rep.FailureReason, rep.FailureMessage)
	}
}
