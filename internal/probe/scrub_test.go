package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// TestEchoedCredentialIsRedacted: a server that reflects the configured
// bearer token into tool names, descriptions and schema text gets it into
// no artifact: not the report, not the human output, not the served set
// that capture writes and state stores.
func TestEchoedCredentialIsRedacted(t *testing.T) {
	const secret = "MARKER-echo-5ecr3t-token"
	echo := json.RawMessage(fmt.Sprintf(`{"name":"echo_%s","description":"you sent %s","inputSchema":{"type":"object","properties":{"%s":{"type":"string"}}}}`, secret, secret, secret))
	// Prompts and resources echo it too: in a name, a uri, a description.
	prompts := []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"name":"p_%s","description":"%s"}`, secret, secret))}
	resources := []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"uri":"x://%s","name":"%s"}`, secret, secret))}
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{echo, tool("a")}, BearerToken: secret, Prompts: prompts, Resources: resources})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), withBearer(t, secret))
	if !rep.Success || !has(rep, "MCP-DRIFT-TOOL-UNDECLARED") {
		t.Fatalf("want a successful run with the echoing tool undeclared: %s", reportJSON(rep))
	}
	var text bytes.Buffer
	if err := probe.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	served, _ := json.Marshal(rep.Served())
	var raws []string
	for _, tl := range rep.Served() {
		raws = append(raws, string(tl.Raw), tl.Name, tl.Description)
	}
	for _, k := range mcp.ItemKinds {
		items, _ := rep.ServedItems(k)
		for _, it := range items {
			raws = append(raws, string(it.Raw), it.Key, it.Name, it.Description, it.URI)
		}
	}
	if items, _ := rep.ServedItems(mcp.KindPrompt); len(items) != 1 {
		t.Fatalf("prompts not listed: %v", items)
	}
	for what, out := range map[string]string{"report": reportJSON(rep), "text": text.String(), "served": string(served), "raw": strings.Join(raws, "\n")} {
		mustNotContain(t, what, out, secret)
	}
	if !strings.Contains(text.String(), sanitize.Redacted) {
		t.Error("the report does not show where the secret was redacted")
	}
}

// TestControlCharactersAreVisible: a tool name that would forge a line in
// a CI log or reorder text reaches the human output escaped.
func TestControlCharactersAreVisible(t *testing.T) {
	forged, _ := json.Marshal("x\r\nFORGED 0 ERROR, 0 WARN, 0 INFO\x1b[2K\u202e")
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"name":%s,"inputSchema":{"type":"object"}}`, forged)), tool("a")}})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), nil)
	var text bytes.Buffer
	if err := probe.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !has(rep, "MCP-DRIFT-TOOL-UNDECLARED") {
		t.Fatalf("the forged name was not listed: %s", reportJSON(rep))
	}
	for _, bad := range []string{"\r", "\x1b", "\u202e", "\nFORGED"} {
		if strings.Contains(text.String(), bad) || strings.Contains(reportJSON(rep), bad) {
			t.Errorf("output carries %q raw:\n%s", bad, text.String())
		}
	}
}

// TestFindingsPerRuleAreCapped: 250 undeclared tools are 100 findings and
// a count of 150, which the summary and the text include.
func TestFindingsPerRuleAreCapped(t *testing.T) {
	names := []string{"a"}
	for i := range 250 {
		names = append(names, fmt.Sprintf("extra_%03d", i))
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: tools(names...)})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), nil)
	got := toolsOf(rep, "MCP-DRIFT-TOOL-UNDECLARED")
	if len(got) != 100 || got[0] != "extra_000" || got[99] != "extra_099" {
		t.Fatalf("listed %d undeclared tools (%v…), want the first 100", len(got), got[:min(3, len(got))])
	}
	if len(rep.FindingsOmitted) != 1 || rep.FindingsOmitted[0].Count != 150 || rep.Summary.Warn+rep.Summary.Error+rep.Summary.Info < 250 {
		t.Fatalf("omitted %+v, summary %v", rep.FindingsOmitted, rep.Summary)
	}
	var text bytes.Buffer
	_ = probe.WriteText(&text, rep)
	if !strings.Contains(text.String(), "150 more not listed") {
		t.Errorf("text output does not say what was left out:\n%s", text.String()[max(0, text.Len()-400):])
	}
}

// TestDeadlineCoversTheWholeRun: a run whose deadline passes after the
// listing (here the second connection never answers) ends as timeout, not
// success, and returns within its deadline plus one second.
func TestDeadlineCoversTheWholeRun(t *testing.T) {
	h := mcptest.NewHandler(mcptest.Options{Tools: tools("a")})
	var lists atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" && lists.Add(1) > 1 {
			_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client hang up
			select {                           // the second connection's listing never answers
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	target := config.NewTarget("slow", ts.URL+mcptest.EndpointPath)
	target.Timeout = time.Second
	start := time.Now()
	rep := probe.Run(context.Background(), probe.Prepare(target, declare(t, "a")), probe.Options{})
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("run took %v", el)
	}
	if rep.Success || rep.FailureReason != "timeout" {
		t.Fatalf("success=%v reason=%q (%s), want a timeout", rep.Success, rep.FailureReason, rep.FailureMessage)
	}
}

// TestRunByteBudget: pages that each fit max_response_bytes still end the
// run as response_too_large once together they pass max_run_bytes.
func TestRunByteBudget(t *testing.T) {
	big := make([]json.RawMessage, 20)
	for i := range big {
		big[i] = json.RawMessage(fmt.Sprintf(`{"name":"t%02d","description":%q,"inputSchema":{"type":"object"}}`, i, strings.Repeat("x", 512<<10)))
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: big, PageSize: 1})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "t00"), func(tg *config.Target) {
		tg.MaxResponseBytes, tg.MaxRunBytes = config.NewByteSize(1<<20), config.NewByteSize(4<<20)
	})
	if rep.Success || rep.FailureReason != "response_too_large" || !strings.Contains(rep.FailureMessage, "max_run_bytes") {
		t.Fatalf("success=%v reason=%q (%s), want response_too_large naming max_run_bytes", rep.Success, rep.FailureReason, rep.FailureMessage)
	}
	if rep.Tools.Pages > 8 {
		t.Errorf("read %d pages of 512 KiB with a 4 MiB budget", rep.Tools.Pages)
	}
}
