package faults_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// webDaemon runs `driftd run` with a baseline-mode target and the
// lifecycle API on, with extra flags, until the test ends; it returns the
// base URL once the target's baseline is recorded.
func webDaemon(t *testing.T, flags ...string) (base string, log *cappedBuffer) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	config := writeFile(t, dir, "driftd.yml", fmt.Appendf(nil, `global: {schedule: "@every 1s", timeout: 2s, state_dir: state}
targets:
  - name: tofu
    url: %q
    baseline: first_seen
    http_client: {authorization: {type: Bearer, credentials_file: token}}
`, mock(mcptest.Options{Tools: tools("a", "b")})(t)))
	p := startDaemon(t, config, append([]string{"--web.enable-lifecycle"}, flags...)...)
	base, log = p.base, p.log
	for deadline := time.Now().Add(20 * time.Second); get(base+"/api/v1/targets/tofu/baseline").err != nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no baseline after 20 s:\n%.4000s", log.String())
		}
	}
	return base, log
}

// TestWebCrossSiteAccept: issue 35 #4's reproduction against the binary —
// a page on another site submits a text/plain form to the accept
// endpoint (it used to get 202 and re-baseline the target) — and the same
// on /-/reload and …/probe. Each is refused with 403, and two runs later
// the history holds no accept; the endpoint still answers a client that
// sends the header (whatever it then decides).
func TestWebCrossSiteAccept(t *testing.T) {
	needBinary(t)
	base, log := webDaemon(t)
	before := get(base + "/api/v1/targets/tofu/history").body
	post := func(path, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return resp.StatusCode, string(b)
	}
	form := map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
	for _, path := range []string{"/api/v1/targets/tofu/baseline", "/-/reload", "/api/v1/targets/tofu/probe"} {
		if code, body := post(path, `{"by":"mallory","reason":"x"}`, form); code != http.StatusForbidden {
			t.Errorf("cross-site form POST %s: %d %q, want 403", path, code, body)
		}
	}
	// Without the browser's headers but without X-Driftd-Request either:
	// what an old browser's form sends.
	if code, _ := post("/api/v1/targets/tofu/baseline", `{"by":"mallory"}`, map[string]string{"Content-Type": "text/plain"}); code != http.StatusForbidden {
		t.Errorf("a POST without X-Driftd-Request: %d, want 403", code)
	}
	time.Sleep(2500 * time.Millisecond) // two runs at @every 1s
	after := get(base + "/api/v1/targets/tofu/history").body
	if strings.Contains(after, "mallory") || strings.Count(after, `"kind": "baseline"`) != strings.Count(before, `"kind": "baseline"`) {
		t.Errorf("a refused accept reached the history:\nbefore %s\nafter %s", before, after)
	}
	if strings.Contains(log.String(), "mallory") {
		t.Error("a refused accept reached the log")
	}
	if code, body := post("/api/v1/targets/tofu/baseline", `{"reason":"reviewed"}`, map[string]string{"Content-Type": "application/json", "X-Driftd-Request": "1"}); code == http.StatusForbidden {
		t.Errorf("the CLI's request was refused: %d %q", code, body)
	}
}

// TestWebSlowBodies: 100 clients announce a 4 KiB body and drip it a byte
// every 100 ms against --web.read-timeout=1s (issue 36 #6: 400 held 414
// fds and /-/healthy went unreachable). /-/healthy answers within 2 s
// while they drip, the daemon closes every one of them within 15 s, and
// its open fds return to where they were.
func TestWebSlowBodies(t *testing.T) {
	needBinary(t)
	base, _ := webDaemon(t, "--web.read-timeout=1s")
	addr := strings.TrimPrefix(base, "http://")
	fds := func() float64 {
		v, _ := seriesValue(get(base+"/metrics").body, "process_open_fds")
		return v
	}
	idle := fds()
	const clients = 100
	closed := make(chan time.Duration, clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	for range clients {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /api/v1/targets/tofu/baseline HTTP/1.1\r\nHost: %s\r\nX-Driftd-Request: 1\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{", addr)
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		})
		wg.Go(func() {
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(conn)
			for {
				if _, err := r.ReadByte(); err != nil {
					closed <- time.Since(start)
					return
				}
			}
		})
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for range 3 {
		resp, err := client.Get(base + "/-/healthy")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/-/healthy with %d slow clients: %v %v", clients, err, resp)
		}
		resp.Body.Close()
	}
	var slowest time.Duration
	for range clients {
		slowest = max(slowest, <-closed)
	}
	t.Logf("%d slow-body connections closed, the last after %v; open fds %v idle", clients, slowest.Round(10*time.Millisecond), idle)
	if slowest > 15*time.Second {
		t.Errorf("a slow-body connection stayed open %v", slowest)
	}
	if now := fds(); now > idle+20 {
		t.Errorf("open fds %v after the slow clients, %v before", now, idle)
	}
}
