package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/state"
	"github.com/driftd/driftd/internal/web"
)

// TestBaselineMode is issue 18's baseline end-to-end: a target without a
// manifest records its first served surface as the baseline and opens
// nothing; a later served change opens findings against "baseline"; an
// accept re-baselines and resolves them, recorded with who and why; a
// restart keeps the baseline.
func TestBaselineMode(t *testing.T) {
	e := newEnv(t)
	prompt := func(args string) json.RawMessage {
		return json.RawMessage(`{"name":"summarise","arguments":[` + args + `]}`)
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b"), BearerToken: marker,
		Prompts: []json.RawMessage{prompt(`{"name":"order_id","required":true}`)}})
	defer srv.Close()
	e.write("token", marker)
	e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - name: tofu
    url: %q
    baseline: first_seen
    skip_auth_probe: true
    http_client:
      authorization: {type: Bearer, credentials_file: token}
`, srv.URL))
	d, base := e.start(false)

	var baseline string
	eventually(t, 20e9, "the baseline to be recorded", func() bool {
		var code int
		code, baseline = get(t, base+"/api/v1/targets/tofu/baseline")
		return code == 200
	})
	if !strings.Contains(baseline, `"b"`) || !strings.Contains(baseline, `"summarise"`) {
		t.Fatalf("baseline lacks the served surface:\n%s", baseline)
	}
	body := waitMetric(t, base, `driftd_probe_success{target="tofu"}`, 1)
	for _, l := range strings.Split(body, "\n") {
		if (strings.HasPrefix(l, "driftd_findings{") || strings.HasPrefix(l, "driftd_findings_opened_total{")) && strings.Contains(l, `target="tofu"`) {
			t.Errorf("the first run opened a finding: %s", l)
		}
	}
	if h := history(t, base); !hasBaselineEvent(h, state.KindBaseline, "recorded from the first successful run", "") {
		t.Errorf("no first_seen baseline event in %+v", h)
	}

	// A served change: b removed, a required prompt argument added.
	srv.SetOptions(func(o *mcptest.Options) {
		o.Tools = mockTools("a")
		o.Prompts = []json.RawMessage{prompt(`{"name":"order_id","required":true},{"name":"locale","required":true}`)}
	})
	waitMetric(t, base, `driftd_findings{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="tofu"}`, 1)
	waitMetric(t, base, `driftd_finding{kind="prompt",rule="MCP-DRIFT-PROMPT-ARGUMENT",severity="ERROR",target="tofu",tool="summarise"}`, 1)
	_, rep := get(t, base+"/api/v1/targets/tofu")
	if !strings.Contains(rep, `"compared_against": "baseline"`) || !strings.Contains(rep, "declared in the baseline, not served") {
		t.Errorf("the report does not say it compared against the baseline:\n%.2000s", rep)
	}
	if _, page := get(t, base+"/targets/tofu"); !strings.Contains(page, "<dt>Compared against</dt><dd>baseline") {
		t.Error("the target page does not say it compared against the baseline")
	}

	// Accept the digest the API shows: the next run that serves it
	// re-baselines, and the run after it resolves both findings.
	if code, _ := accept(t, base, "", "alice"); code != http.StatusConflict {
		t.Fatalf("an accept without a digest: %d", code)
	}
	if code, _ := accept(t, base, servedDigest(t, base), "alice"); code != http.StatusAccepted {
		t.Fatalf("accept: %d", code)
	}
	eventually(t, 20e9, "the accepted baseline", func() bool {
		_, b := get(t, base+"/api/v1/targets/tofu/baseline")
		return !strings.Contains(b, `"b"`) && strings.Contains(b, `"locale"`)
	})
	waitMetric(t, base, `driftd_findings_resolved_total{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="tofu"}`, 1)
	eventually(t, 20e9, "the findings to resolve", func() bool {
		_, body := get(t, base+"/metrics")
		_, missing := metric(body, `driftd_findings{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="tofu"}`)
		_, arg := metric(body, `driftd_findings{rule="MCP-DRIFT-PROMPT-ARGUMENT",severity="ERROR",target="tofu"}`)
		return !missing && !arg
	})
	// Nobody is authenticated here (no web config): the history says so,
	// and keeps the body's claim apart.
	if h := history(t, base); !hasBaselineEvent(h, state.KindBaseline, "reason: reviewed in PR 7", "anonymous") || claimedBy(h, "baseline accepted") != "alice" {
		t.Errorf("no accepted baseline event by anonymous, claimed by alice, in %+v", h)
	}
	_, accepted := get(t, base+"/api/v1/targets/tofu/baseline")

	// A restart keeps the baseline, and the next run opens nothing.
	stop(t, d)
	_, base = e.start(false)
	if code, b := get(t, base+"/api/v1/targets/tofu/baseline"); code != 200 || b != accepted {
		t.Fatalf("after a restart the baseline is %d:\n%s\nwant:\n%s", code, b, accepted)
	}
	waitMetric(t, base, `driftd_probe_success{target="tofu"}`, 1)
	_, body = get(t, base+"/metrics")
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "driftd_findings{") && strings.Contains(l, `target="tofu"`) {
			t.Errorf("after the restart a finding is active: %s", l)
		}
	}
}

// servedDigest is the surface digest tofu's last successful run served,
// as the API shows it.
func servedDigest(t *testing.T, base string) string {
	t.Helper()
	_, body := get(t, base+"/api/v1/targets/tofu")
	var v struct {
		Status state.Status `json:"status"`
	}
	if err := json.Unmarshal(apiData(body), &v); err != nil || v.Status.Baseline == nil {
		t.Fatalf("no baseline status: %v\n%.1000s", err, body)
	}
	return v.Status.Baseline.ServedDigest
}

// accept posts an accept of digest for tofu, claimed by by, and returns
// the status and the digest the answer names.
func accept(t *testing.T, base, digest, by string, auth ...string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"digest": digest, "by": by, "reason": "reviewed in PR 7"})
	req, _ := http.NewRequest("POST", base+"/api/v1/targets/tofu/baseline", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.RequestHeader, "1")
	if len(auth) == 2 {
		req.SetBasicAuth(auth[0], auth[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer web.Response[web.AcceptAnswer]
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	return resp.StatusCode, answer.Data.Digest
}

func history(t *testing.T, base string) []state.Event {
	t.Helper()
	_, body := get(t, base+"/api/v1/targets/tofu/history")
	var h []state.Event
	if err := json.Unmarshal(apiData(body), &h); err != nil {
		t.Fatalf("history: %v\n%s", err, body)
	}
	return h
}

// claimedBy is the claim of the first event whose message has msg.
func claimedBy(h []state.Event, msg string) string {
	for _, e := range h {
		if strings.Contains(e.Message, msg) {
			return e.ClaimedBy
		}
	}
	return ""
}

func hasBaselineEvent(h []state.Event, kind, msg, by string) bool {
	for _, e := range h {
		if e.Kind == kind && strings.Contains(e.Message, msg) && e.By == by && !e.Time.IsZero() {
			return true
		}
	}
	return false
}
