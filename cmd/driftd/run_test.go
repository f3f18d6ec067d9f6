package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func scrape(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", within, what)
}

var statusLine = regexp.MustCompile(`driftd: status page http://([0-9.:]+)/`)

// TestDemoServesToolMissing: `driftd demo` shows MCP-DRIFT-TOOL-MISSING on
// /metrics within 20 s of starting, and stops cleanly.
func TestDemoServesToolMissing(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	start := time.Now()
	go func() {
		code <- run(ctx, []string{"demo", "--web.listen-address=127.0.0.1:0", "--mock.listen-address=127.0.0.1:0", "--log.level=debug"}, &stdout, &stderr)
	}()
	var addr string
	waitFor(t, 10*time.Second, "the demo to print its address", func() bool {
		m := statusLine.FindStringSubmatch(stdout.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	want := `driftd_finding{kind="tool",rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders-demo",tool="cancel_order"} 1`
	waitFor(t, 20*time.Second-time.Since(start), "MCP-DRIFT-TOOL-MISSING on /metrics", func() bool {
		return strings.Contains(scrape("http://"+addr+"/metrics"), want)
	})
	page := scrape("http://" + addr + "/targets/orders-demo")
	for _, s := range []string{"MCP-DRIFT-TOOL-MISSING", "MCP-DRIFT-SCHEMA", "MCP-DRIFT-TOOL-UNDECLARED", "MCP-AUTH-ANONYMOUS-LIST",
		"MCP-DRIFT-PROMPT-ARGUMENT", "MCP-DRIFT-URI-TEMPLATE"} {
		if !strings.Contains(page, s) {
			t.Errorf("demo target page lacks %s", s)
		}
	}
	metrics := scrape("http://" + addr + "/metrics")
	for _, s := range []string{
		`driftd_finding{kind="prompt",rule="MCP-DRIFT-PROMPT-ARGUMENT",severity="ERROR",target="orders-demo",tool="summarise_order"} 1`,
		`driftd_finding{kind="resource_template",rule="MCP-DRIFT-URI-TEMPLATE",severity="ERROR",target="orders-demo",tool="order"} 1`,
		`driftd_list_items{kind="prompt",source="served",target="orders-demo"} 2`,
	} {
		if !strings.Contains(metrics, s) {
			t.Errorf("demo /metrics lacks %s", s)
		}
	}
	waitFor(t, 20*time.Second, "the authenticated demo target", func() bool {
		return strings.Contains(scrape("http://"+addr+"/metrics"), `driftd_findings{rule="MCP-AUTH-ENFORCED",severity="INFO",target="orders-demo-auth"} 1`)
	})
	// The challenge's resource_metadata is the mock's own, and it answers.
	var rep struct {
		Data struct {
			AuthPosture struct {
				Challenge struct {
					ResourceMetadata string `json:"resource_metadata"`
				} `json:"challenge"`
			} `json:"auth_posture"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(scrape("http://"+addr+"/api/v1/targets/orders-demo-auth")), &rep); err != nil {
		t.Fatal(err)
	}
	meta := rep.Data.AuthPosture.Challenge.ResourceMetadata
	mock := regexp.MustCompile(`mock MCP server with drift: http://([0-9.:]+)/mcp`).FindStringSubmatch(stdout.String())
	if mock == nil || !strings.HasPrefix(meta, "http://"+mock[1]+"/.well-known/oauth-protected-resource") ||
		!strings.Contains(scrape(meta), `"scopes_supported":["orders:read"]`) {
		t.Errorf("the demo's challenge names %q, not the mock's own metadata", meta)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("demo exited %d: %s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("demo did not stop within 10 s")
	}
	if strings.Contains(stdout.String()+stderr.String(), "demo-token-not-a-secret") {
		t.Fatal("the demo's token was logged")
	}
}

// TestRunBinarySignals builds the binary and drives it the way an operator
// does: SIGHUP reloads a changed config, SIGTERM stops it with exit 0 within
// 10 s.
func TestRunBinarySignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "driftd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), Delay: 200 * time.Millisecond})
	defer srv.Close()
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`), 0o644)
	cfg := filepath.Join(dir, "driftd.yml")
	writeCfg := func(names ...string) {
		s := "global: {schedule: \"@every 1s\", timeout: 5s, state_dir: state}\ntargets:\n"
		for _, n := range names {
			s += fmt.Sprintf("  - {name: %s, url: %q, manifest: a.json}\n", n, srv.URL)
		}
		os.WriteFile(cfg, []byte(s), 0o644)
	}
	writeCfg("one")
	ln := freePort(t)
	var stderr lockedBuffer
	cmd := exec.Command(bin, "run", "--config.file", cfg, "--web.listen-address="+ln, "--log.format=json")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://" + ln
	waitFor(t, 15*time.Second, "driftd to be ready", func() bool { return strings.Contains(scrape(base+"/-/ready"), "OK") })
	waitFor(t, 15*time.Second, "target one", func() bool { return strings.Contains(scrape(base+"/metrics"), `driftd_probe_success{target="one"} 1`) })

	// The file watch would reload too; an unchanged checksum then makes
	// the SIGHUP a no-op, so test SIGHUP with the watch racing it: either
	// way "two" must appear.
	writeCfg("one", "two")
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 15*time.Second, "target two after SIGHUP", func() bool { return strings.Contains(scrape(base+"/metrics"), `driftd_probe_success{target="two"} 1`) })

	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Fatalf("stopped after %v", el)
		}
	case <-time.After(12 * time.Second):
		t.Fatalf("driftd did not stop within 10 s of SIGTERM\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop logged:\n%s", stderr.String())
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	srv := mcptest.NewServer(mcptest.Options{})
	addr := strings.TrimPrefix(srv.BaseURL(), "http://")
	srv.Close()
	return addr
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "good.yml"), []byte(`targets:
  - name: one
    url: https://one.example/mcp
    manifest: a.json
    http_client:
      http_headers:
        X-Key: {secrets: [`+marker+`]}
`), 0o644)
	code, stdout, stderr := driftd(t, "config", "check", filepath.Join(dir, "good.yml"))
	if code != 0 || !strings.Contains(stdout, "<secret>") || strings.Contains(stdout, marker) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	os.WriteFile(filepath.Join(dir, "bad.yml"), []byte("targets:\n  - name: one\n    url: https://one.example/mcp\n    manifest: missing.json\n    severity: {MCP-NOPE: ERROR}\n"), 0o644)
	code, _, stderr = driftd(t, "config", "check", filepath.Join(dir, "bad.yml"))
	if code != exitUsage || !strings.Contains(stderr, "missing.json") || !strings.Contains(stderr, "MCP-NOPE") {
		t.Fatalf("bad config: exit %d\n%s", code, stderr)
	}
	// The invocation gates, prompts and resources included, with the line.
	os.WriteFile(filepath.Join(dir, "reads.yml"), []byte("targets:\n  - name: one\n    url: http://127.0.0.1:1/mcp\n    manifest: a.json\n    invoke:\n      prompts: [summarise]\n"), 0o644)
	code, _, stderr = driftd(t, "config", "check", filepath.Join(dir, "reads.yml"))
	if code != exitUsage || !strings.Contains(stderr, `reads.yml:5: targets[0].invoke: invocation refused: prompt "summarise" is not declared in the manifest`) {
		t.Fatalf("undeclared prompt: exit %d\n%s", code, stderr)
	}
	code, _, stderr = driftd(t, "config", "check", filepath.Join(dir, "nope.yml"))
	if code != exitUsage || !strings.Contains(stderr, "nope.yml") {
		t.Fatalf("missing file: exit %d %s", code, stderr)
	}
}

// TestCheckWithCollectorDown: tracing to a collector that is down changes
// neither the exit code nor the findings, warns once, and stays within the
// deadline plus the bounded flush.
func TestCheckWithCollectorDown(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer srv.Close()
	m := writeManifest(t, "a", "c")
	base := []string{"check", m, "--base-url", srv.URL, "--json", "--timeout", "5s"}
	code1, out1, _ := driftd(t, base...)
	start := time.Now()
	code2, out2, stderr := driftd(t, append(base, "--otlp-endpoint", "http://"+freePort(t))...)
	elapsed := time.Since(start)
	if code1 != code2 || code1 != exitFindings {
		t.Fatalf("exit %d without tracing, %d with the collector down", code1, code2)
	}
	rules := func(out string) string {
		var rep struct {
			Findings []struct{ Rule, Tool string } `json:"findings"`
		}
		json.Unmarshal([]byte(out), &rep)
		var s []string
		for _, f := range rep.Findings {
			s = append(s, f.Rule+"/"+f.Tool)
		}
		return strings.Join(s, ",")
	}
	if rules(out1) != rules(out2) {
		t.Fatalf("findings differ:\n%s\n%s", rules(out1), rules(out2))
	}
	if strings.Count(stderr, "warning") != 1 {
		t.Fatalf("want one warning on stderr, got:\n%s", stderr)
	}
	if elapsed > 5*time.Second+flushTimeout+time.Second {
		t.Fatalf("check took %v", elapsed)
	}
}
