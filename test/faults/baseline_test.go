package faults_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// The baseline cases of issues 35 and 36 (the cross-site accept is the
// web surface's case): an accept of a stale digest is refused, a deep
// nested surface stores as a baseline of its own size and survives a
// restart, and a corrupt state file holds its baseline target in "needs
// review" instead of re-trusting what is served next.

// baselineDaemon is `driftd run --web.enable-lifecycle` on a config with
// one baseline-mode target tofu at url, in dir; stop(SIGTERM) ends it.
type baselineDaemon struct{ *daemonProc }

func startBaselineDaemon(t *testing.T, dir, url string) *baselineDaemon {
	t.Helper()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	config := writeFile(t, dir, "driftd.yml", fmt.Appendf(nil, `global: {schedule: "@every 1s", timeout: 5s, state_dir: state}
targets:
  - name: tofu
    url: %q
    baseline: first_seen
    http_client: {authorization: {type: Bearer, credentials_file: token}}
`, url))
	return &baselineDaemon{startDaemon(t, config, "--web.enable-lifecycle")}
}

func (d *baselineDaemon) waitFor(what string, within time.Duration, cond func() bool) {
	d.t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			d.t.Fatalf("no %s after %v:\n%.4000s", what, within, d.log.String())
		}
	}
}

// status is tofu's baseline status from /api/v1/targets.
func (d *baselineDaemon) status() (served, digest, origin, review string) {
	var rows []struct {
		Baseline *struct {
			Served      string `json:"served_digest"`
			Digest      string `json:"digest"`
			Origin      string `json:"origin"`
			NeedsReview string `json:"needs_review"`
		} `json:"baseline"`
	}
	if json.Unmarshal(apiData(get(d.base+"/api/v1/targets").body), &rows) != nil || len(rows) != 1 || rows[0].Baseline == nil {
		return
	}
	b := rows[0].Baseline
	return b.Served, b.Digest, b.Origin, b.NeedsReview
}

func TestDaemonBaselineStaleDigest(t *testing.T) {
	needBinary(t)
	d := startBaselineDaemon(t, t.TempDir(), mock(mcptest.Options{Tools: tools("a", "b")})(t))
	d.waitFor("a first-seen baseline", 20*time.Second, func() bool { _, _, o, _ := d.status(); return o == "first_seen" })
	served, digest, _, _ := d.status()
	req, _ := http.NewRequest(http.MethodPost, d.base+"/api/v1/targets/tofu/baseline",
		strings.NewReader(`{"digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","by":"mallory"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Driftd-Request", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Status, Error string
		Data          struct{ Digest string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || answer.Status != "error" || answer.Data.Digest != served {
		t.Fatalf("a stale digest: HTTP %d %+v, want 409 naming %s", resp.StatusCode, answer, served)
	}
	time.Sleep(1500 * time.Millisecond) // a run or two
	if _, now, origin, _ := d.status(); now != digest || origin != "first_seen" {
		t.Fatalf("the baseline changed after a refused accept: %s %s", now, origin)
	}
}

// deepTool is a tool of about 36 KB whose inputSchema nests 1,000
// objects, each {"type":"object","properties":{"a":…}}.
func deepTool() json.RawMessage {
	schema := `{"type":"string"}`
	for range 1000 {
		schema = `{"type":"object","properties":{"a":` + schema + `}}`
	}
	return rawTool("deep", schema)
}

func TestDaemonDeepBaselineSize(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	url := mock(mcptest.Options{Tools: []json.RawMessage{deepTool()}})(t)
	d := startBaselineDaemon(t, dir, url)
	d.waitFor("a first-seen baseline", 20*time.Second, func() bool { _, _, o, _ := d.status(); return o == "first_seen" })
	before := get(d.base + "/api/v1/targets/tofu/baseline").body
	d.stop(syscall.SIGTERM)
	fi, err := os.Stat(filepath.Join(dir, "state", "tofu.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("state file: %d bytes for a %d-byte tool", fi.Size(), len(deepTool()))
	if fi.Size() >= 1<<20 {
		t.Fatalf("the state file is %d bytes, want under 1 MiB", fi.Size())
	}
	d = startBaselineDaemon(t, dir, url)
	d.waitFor("a run after the restart", 20*time.Second, func() bool { s, _, _, _ := d.status(); return s != "" })
	if after := get(d.base + "/api/v1/targets/tofu/baseline").body; after != before || !bytes.Contains([]byte(after), []byte(`"deep"`)) {
		t.Fatalf("the baseline changed across the restart")
	}
	if _, _, origin, _ := d.status(); origin != "first_seen" {
		t.Fatalf("origin after the restart: %q", origin)
	}
}

func TestDaemonCorruptBaselineState(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o750); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "state/tofu.json", []byte(`{"target":"tofu","version":1,"baseline":{"manifest":{"tools":[`))
	d := startBaselineDaemon(t, dir, mock(mcptest.Options{Tools: tools("a", "b")})(t))
	d.waitFor("a served digest", 20*time.Second, func() bool { s, _, _, _ := d.status(); return s != "" })
	time.Sleep(1500 * time.Millisecond) // more runs: none may record a baseline
	if _, digest, origin, review := d.status(); digest != "" || origin != "" || review == "" {
		t.Fatalf("re-trusted or not in review: digest %q origin %q review %q", digest, origin, review)
	}
	if r := get(d.base + "/api/v1/targets/tofu/baseline"); r.err == nil {
		t.Fatal("a baseline was recorded from a target in review")
	}
	if v, ok := seriesValue(get(d.base+"/metrics").body, `driftd_findings{rule="MCP-DRIFT-BASELINE-REVIEW",severity="ERROR",target="tofu"}`); !ok || v != 1 {
		t.Error("no MCP-DRIFT-BASELINE-REVIEW finding in /metrics")
	}
	if !strings.Contains(get(d.base+"/targets/tofu").body, "The baseline needs review") {
		t.Error("no needs-review banner on the target page")
	}
	if !strings.Contains(d.log.String(), "baseline needs review") {
		t.Error("no log line says the baseline needs review")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "state", "tofu.json.corrupt-*")); len(m) != 1 {
		t.Errorf("the corrupt file was not kept: %v", m)
	}
}
