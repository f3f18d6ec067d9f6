package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// send posts a correct tools/list with a client-side timeout and returns
// the response (body unread) or the error.
func send(t *testing.T, s *Server, timeout time.Duration) (*http.Response, context.CancelFunc, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	raw, _ := json.Marshal(modernMsg(1, "tools/list", nil))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(raw))
	req.Header = modernHeader("tools/list")
	resp, err := newClient(t).Do(req)
	return resp, cancel, err
}

func TestFaultSimpleBodies(t *testing.T) {
	cases := []struct {
		fault  Fault
		status int
		check  func(result) bool
	}{
		{FaultInvalidJSON, 200, func(r result) bool { return string(r.body) == "{not json" }},
		{FaultWrongID, 200, func(r result) bool { return string(r.msg["id"]) == "2" && r.msg["result"] != nil }},
		{FaultRPCErrorOdd, 200, func(r result) bool {
			return string(r.body) == `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":5}}`
		}},
		{FaultStatus500, 500, func(r result) bool {
			return string(r.body) == "boom" && strings.HasPrefix(r.header.Get("Content-Type"), "text/plain")
		}},
		{FaultRedirect, 307, func(r result) bool { return strings.HasSuffix(r.header.Get("Location"), "/elsewhere") }},
	}
	for _, tc := range cases {
		t.Run(tc.fault.String(), func(t *testing.T) {
			s := startServer(t, Options{Fault: tc.fault})
			c := newClient(t)
			r := post(t, c, s, modernHeader("tools/list"), modernMsg(1, "tools/list", nil))
			if r.status != tc.status || !tc.check(r) {
				t.Fatalf("status %d header %v body %q", r.status, r.header, r.body)
			}
			if tc.fault == FaultRedirect && r.header.Get("Location") != s.BaseURL()+"/elsewhere" {
				t.Fatalf("Location %q", r.header.Get("Location"))
			}
			wantNoViolations(t, s.Handler)
		})
	}
}

func TestFaultScope(t *testing.T) {
	s := startServer(t, Options{Fault: FaultStatus500, FaultMethods: []string{"tools/list"}})
	c := newClient(t)
	if r := post(t, c, s, modernHeader("server/discover"), modernMsg(1, "server/discover", nil)); r.status != 200 {
		t.Fatalf("discover hit by a tools/list fault: %d", r.status)
	}
	if r := post(t, c, s, modernHeader("tools/list"), modernMsg(2, "tools/list", nil)); r.status != 500 {
		t.Fatalf("tools/list: %d", r.status)
	}
	// A violation is reported as such, never masked by a fault.
	h := modernHeader("tools/list")
	h.Del("Mcp-Method")
	r := post(t, c, s, h, modernMsg(3, "tools/list", nil))
	wantStatusCode(t, r, 400, -32020)
	// Nor is an auth refusal.
	s.SetOptions(func(o *Options) { o.BearerToken = "t" })
	if r := post(t, c, s, modernHeader("tools/list"), modernMsg(4, "tools/list", nil)); r.status != 401 {
		t.Fatalf("auth: %d", r.status)
	}
}

func TestFaultOversized(t *testing.T) {
	s := startServer(t, Options{Fault: FaultOversized})
	resp, cancel, err := send(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	cancel()
	if err != nil || n <= 64<<20 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("read %d bytes, err %v", n, err)
	}

	// A client that gives up early ends the stream.
	resp, cancel, err = send(t, s, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 64)
	if _, err := io.ReadFull(resp.Body, head); err != nil || !bytes.HasPrefix(head, []byte(`{"jsonrpc":"2.0","id":1,"result":`)) {
		t.Fatalf("head %q err %v", head, err)
	}
	cancel()
	resp.Body.Close()
	closesWithin(t, s, 3*time.Second)
}

// TestFaultEndlessStreams checks each never-finishing fault: the client
// sees the promised bytes, times out, and Close returns promptly.
func TestFaultEndlessStreams(t *testing.T) {
	cases := []struct {
		fault Fault
		ctype string
		check func([]byte) bool
	}{
		{FaultSSENeverAnswers, "text/event-stream", func(b []byte) bool {
			return bytes.HasPrefix(b, []byte(": keepalive\n\n: keepalive\n\n")) && !bytes.Contains(b, []byte("data:"))
		}},
		{FaultTrickle, "application/json", func(b []byte) bool {
			return len(b) >= 1 && len(b) < 10 && bytes.HasPrefix([]byte(`{"jsonrpc":"2.0"`), b)
		}},
		{FaultNeverEnding, "application/json", func(b []byte) bool { return len(b) > 1<<20 && bytes.HasPrefix(b, []byte("[0,0,0,")) }},
	}
	for _, tc := range cases {
		t.Run(tc.fault.String(), func(t *testing.T) {
			s := startServer(t, Options{Fault: tc.fault})
			resp, cancel, err := send(t, s, 400*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			got, err := io.ReadAll(io.LimitReader(resp.Body, 2<<20))
			resp.Body.Close()
			if tc.fault != FaultNeverEnding && err == nil {
				t.Fatal("stream ended by itself")
			}
			if resp.Header.Get("Content-Type") != tc.ctype || !tc.check(got) {
				t.Fatalf("type %q, %d bytes: %.80q", resp.Header.Get("Content-Type"), len(got), got)
			}
			closesWithin(t, s, 2*time.Second)
		})
	}
}

// TestCloseUnblocksStreams closes the server while clients still hold
// never-ending streams, one of them not reading at all.
func TestCloseUnblocksStreams(t *testing.T) {
	for _, f := range []Fault{FaultSSENeverAnswers, FaultNeverEnding, FaultTrickle} {
		t.Run(f.String(), func(t *testing.T) {
			s := NewServer(Options{Fault: f})
			resp, cancel, err := send(t, s, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			defer resp.Body.Close()
			// Let the unread stream fill the socket buffers, so the handler
			// blocks in Write rather than between writes.
			time.Sleep(300 * time.Millisecond)
			closesWithin(t, s, 3*time.Second)
		})
	}
}

func TestDelayRespectsClient(t *testing.T) {
	s := startServer(t, Options{Delay: time.Minute})
	_, cancel, err := send(t, s, 100*time.Millisecond)
	cancel()
	if err == nil {
		t.Fatal("delayed request answered")
	}
	closesWithin(t, s, time.Second)
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Status != 0 {
		t.Fatalf("log %+v", reqs)
	}

	s2 := startServer(t, Options{Delay: 50 * time.Millisecond})
	start := time.Now()
	if r := post(t, newClient(t), s2, modernHeader("tools/list"), modernMsg(1, "tools/list", nil)); r.status != 200 || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("delay: %d after %v", r.status, time.Since(start))
	}
}
