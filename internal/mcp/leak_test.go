package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// newRunClient builds a client the way a run does: its own transport, so
// whatever the run leaves open is the run's.
func newRunClient(url string) *mcp.Client {
	hc := &http.Client{Transport: &http.Transport{}}
	return mcp.NewClient(hc, url, mcp.Implementation{Name: "driftd", Version: "test"},
		mcp.Limits{MaxResponseBytes: 1 << 16}, nil)
}

// TestFailedConnectReleasesEverything: a Connect that fails after an HTTP
// answer (or none) leaves no goroutine and no connection behind, without
// the caller doing anything more (it has no Session to close).
func TestFailedConnectReleasesEverything(t *testing.T) {
	cases := []struct {
		name    string
		opts    mcptest.Options
		timeout time.Duration
		reason  mcp.Reason
	}{
		{"redirect", mcptest.Options{Fault: mcptest.FaultRedirect}, 0, mcp.ReasonHTTPStatus},
		{"rpc error then failed fallback", mcptest.Options{Legacy: true, LegacyDiscover: "method-not-found",
			Fault: mcptest.FaultInvalidJSON, FaultMethods: []string{"initialize"}}, 0, mcp.ReasonInvalidResponse},
		{"-32022 then failed fallback", mcptest.Options{SupportedVersions: []string{"2025-11-25"},
			Fault: mcptest.FaultStatus500, FaultMethods: []string{"initialize"}}, 0, mcp.ReasonHTTPStatus},
		{"legacy-only discover then failed fallback", mcptest.Options{Legacy: true, LegacyDiscover: "discover-legacy-only",
			Fault: mcptest.FaultRedirect, FaultMethods: []string{"initialize"}}, 0, mcp.ReasonHTTPStatus},
		{"malformed body", mcptest.Options{Fault: mcptest.FaultInvalidJSON}, 0, mcp.ReasonInvalidResponse},
		{"oversized body", mcptest.Options{Fault: mcptest.FaultOversized}, 0, mcp.ReasonResponseTooLarge},
		{"timeout mid-body", mcptest.Options{Fault: mcptest.FaultTrickle}, 300 * time.Millisecond, mcp.ReasonTimeout},
		{"endless SSE", mcptest.Options{Fault: mcptest.FaultSSENeverAnswers}, 300 * time.Millisecond, mcp.ReasonTimeout},
		{"accept then close", mcptest.Options{Fault: mcptest.FaultHangUp}, 0, mcp.ReasonConnect},
		{"plain 400 then failed fallback", mcptest.Options{Legacy: true,
			Fault: mcptest.FaultStatus500, FaultMethods: []string{"initialize"}}, 0, mcp.ReasonHTTPStatus},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcptest.NewServer(tc.opts)
			defer srv.Close()
			before := goleak.IgnoreCurrent()
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			sess, err := newRunClient(srv.URL).Connect(ctx)
			if err == nil {
				sess.Close(ctx)
				t.Fatalf("Connect succeeded; want a failure")
			}
			var me *mcp.Error
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, not an *mcp.Error", err)
			}
			if tc.reason != "" && me.Reason != tc.reason {
				t.Errorf("reason = %s, want %s (%v)", me.Reason, tc.reason, err)
			}
			if strings.Contains(tc.name, "fallback") && srv.Count("initialize") != 1 {
				t.Errorf("initialize sent %d times, want 1 (the fallback)", srv.Count("initialize"))
			}
			if n := srv.WaitConnsClosed(2 * time.Second); n != 0 {
				t.Errorf("server still holds %d connection(s) open", n)
			}
			if err := goleak.Find(before); err != nil {
				t.Errorf("goroutines left behind: %v", err)
			}
		})
	}
}

// TestSessionCloseReleasesEverything: a successful conversation, modern or
// legacy, leaves nothing open once its Session is closed.
func TestSessionCloseReleasesEverything(t *testing.T) {
	for _, opts := range []mcptest.Options{{}, {SSE: true}, {Legacy: true, Sessions: true}} {
		srv := mcptest.NewServer(opts)
		before := goleak.IgnoreCurrent()
		ctx := context.Background()
		sess, err := newRunClient(srv.URL).Connect(ctx)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		if _, err := sess.ListTools(ctx, ""); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		sess.Close(ctx)
		if n := srv.WaitConnsClosed(2 * time.Second); n != 0 {
			t.Errorf("%+v: server still holds %d connection(s) open", opts, n)
		}
		if err := goleak.Find(before); err != nil {
			t.Errorf("%+v: goroutines left behind: %v", opts, err)
		}
		srv.Close()
	}
}

// TestHangUpIsConnect: a server that closes the connection before answering
// is one reason, connect, however the race between the client's write and
// the server's close falls (EOF, reset or broken pipe).
func TestHangUpIsConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	defer func() { ln.Close(); <-done }()
	mock := mcptest.NewServer(mcptest.Options{Fault: mcptest.FaultHangUp})
	defer mock.Close()

	for name, url := range map[string]string{
		"on accept":     "http://" + ln.Addr().String() + "/mcp",
		"after request": mock.URL,
	} {
		seen := map[mcp.Reason][]string{}
		for range 20 {
			_, err := newRunClient(url).Connect(context.Background())
			r := mcp.Classify(err)
			seen[r] = append(seen[r], fmt.Sprint(err))
		}
		if len(seen) != 1 || seen[mcp.ReasonConnect] == nil {
			t.Errorf("%s: reasons over 20 runs: %v", name, seen)
		}
	}
}
