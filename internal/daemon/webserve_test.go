package daemon_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/web"
)

// oneTarget writes a config with one clean target.
func oneTarget(t *testing.T, e *env) {
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	t.Cleanup(srv.Close)
	e.manifest("a.json", "a")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1h\", state_dir: state}\ntargets:\n  - {name: orders, url: %q, manifest: a.json}\n", srv.URL))
}

// TestSlowBodyClients: 100 clients each announce a 4 KiB body and drip it
// a byte every 100 ms (issue 36 #6: 400 of them held 414 fds and
// /-/healthy went unreachable). /-/healthy answers while they drip, and
// the server closes each of them once ReadTimeout (1 s here; 30 s by
// default) has passed, long before their bodies would end (400 s).
func TestSlowBodyClients(t *testing.T) {
	e := newEnv(t)
	oneTarget(t, e)
	const readTimeout = time.Second
	e.tweak = func(o *daemon.Options) { o.WebLimits = daemon.WebLimits{ReadTimeout: readTimeout} }
	_, base := e.start(false)
	addr := strings.TrimPrefix(base, "http://")

	const clients = 100
	closedAfter := make(chan time.Duration, clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range clients {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		start := time.Now()
		fmt.Fprintf(conn, "POST /api/v1/targets/orders/baseline HTTP/1.1\r\nHost: %s\r\n%s: 1\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{", addr, web.RequestHeader)
		wg.Go(func() { // drips until the server hangs up or the test ends
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
		wg.Go(func() { // the server's answer, if any, then its close
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(conn)
			for {
				if _, err := r.ReadByte(); err != nil {
					closedAfter <- time.Since(start)
					return
				}
			}
		})
	}
	for range 3 {
		code, body := get(t, base+"/-/healthy")
		if code != 200 {
			t.Fatalf("/-/healthy with %d slow clients: %d %s", clients, code, body)
		}
	}
	var slowest time.Duration
	for range clients {
		d := <-closedAfter
		slowest = max(slowest, d)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d slow-body connections closed by the server, the last after %v", clients, slowest.Round(10*time.Millisecond))
	if slowest > 15*time.Second {
		t.Errorf("a slow-body connection stayed open %v (ReadTimeout %v)", slowest, readTimeout)
	}
	if code, _ := get(t, base+"/-/healthy"); code != 200 {
		t.Errorf("/-/healthy after the slow clients: %d", code)
	}
}

// TestHealthWithoutCredentials: with basic auth in --web.config.file,
// /-/healthy and /-/ready answer without credentials (the chart's probes
// send none) while every other endpoint still needs them.
func TestHealthWithoutCredentials(t *testing.T) {
	e := newEnv(t)
	oneTarget(t, e)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	e.write("web.yml", fmt.Sprintf("basic_auth_users:\n  alice: %s\n", hash))
	e.tweak = func(o *daemon.Options) { o.WebConfigFile = e.dir + "/web.yml" }
	_, base := e.start(false)

	send := func(method, path string, auth bool) int {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		if auth {
			req.SetBasicAuth("alice", "s3cret")
		}
		req.Header.Set(web.RequestHeader, "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	eventually(t, 10*time.Second, "/-/ready without credentials", func() bool { return send("GET", "/-/ready", false) == 200 })
	for _, tc := range []struct {
		method, path string
		auth         bool
		want         int
	}{
		{"GET", "/-/healthy", false, 200},
		{"HEAD", "/-/healthy", false, 200},
		{"GET", "/-/ready", false, 200},
		{"GET", "/metrics", false, 401},
		{"GET", "/metrics", true, 200},
		{"GET", "/", false, 401},
		{"GET", "/api/v1/targets", false, 401},
		{"GET", "/-/healthy/", false, 401},
		{"GET", "/-/healthy/../metrics", false, 401},
		{"POST", "/-/healthy", false, 401},
		{"POST", "/-/reload", false, 401},
		{"GET", "/-/healthy", true, 200},
	} {
		if got := send(tc.method, tc.path, tc.auth); got != tc.want {
			t.Errorf("%s %s (credentials %v) = %d, want %d", tc.method, tc.path, tc.auth, got, tc.want)
		}
	}
}
