package probe_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

func TestModernCleanRun(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b", "c"), PageSize: 2, SSE: true})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a", "b", "c"), nil)
	if !rep.Success || rep.Era != "modern" || rep.ProtocolRevision.Value == nil || *rep.ProtocolRevision.Value != mcp.ModernVersion {
		t.Fatalf("success=%v era=%s revision=%v", rep.Success, rep.Era, rep.ProtocolRevision)
	}
	if rep.Tools.Served != 3 || rep.Tools.Pages != 2 || rep.Tools.SecondConnection != "same" {
		t.Fatalf("tools = %+v", rep.Tools)
	}
	if rep.ServerInfo == nil || rep.ServerInfo.Name != "mcptest" {
		t.Fatalf("server_info = %v", rep.ServerInfo)
	}
	// The only finding on a clean loopback server: it lists without credentials.
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != catalogue.AuthAnonymousList || rep.Findings[0].Severity != catalogue.Info {
		t.Fatalf("findings = %+v", rep.Findings)
	}
	for _, f := range rep.Findings {
		if len(f.Fingerprint) != 16 {
			t.Fatalf("fingerprint %q", f.Fingerprint)
		}
	}
}

// The second connection is one TCP connection of its own: a legacy
// server's second session (initialize, the notification, tools/list) on
// it alone, not on the first connection and not one connection a request;
// and the run leaves no connection open.
func TestSecondConnectionIsAFreshTCPConnection(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			opts := clean.opts
			opts.Legacy, opts.Sessions = legacy, legacy
			srv := mcptest.NewServer(opts)
			defer srv.Close()
			probeOnce(t, srv, declare(t, clean.declared...), nil)
			byConn := map[int][]string{} // conn 1 is the first: it sent the first request
			for _, r := range srv.Requests() {
				byConn[r.Conn] = append(byConn[r.Conn], r.Method)
			}
			want := []string{"tools/list"}
			if legacy {
				want = []string{"initialize", "notifications/initialized", "tools/list"}
			}
			first, second := byConn[1], byConn[2]
			if len(byConn) != 2 || !slices.Contains(first, "tools/list") || len(second) < len(want) || !slices.Equal(second[:len(want)], want) {
				t.Fatalf("requests by connection %v: want 2 connections, tools/list on the first, the second beginning %v", byConn, want)
			}
			if n := srv.WaitConnsClosed(5 * time.Second); n != 0 {
				t.Fatalf("%d connection(s) still open after the run", n)
			}
		})
	}
}

// Whatever way a run ends, it leaves no connection open: a legacy server
// that answers with event streams (each answer ends its connection, so a
// conversation opens several), and one too slow for the run's deadline,
// so the run ends while both conversations wait.
func TestRunLeavesNoConnectionOpen(t *testing.T) {
	for _, row := range []struct {
		name    string
		opts    mcptest.Options
		timeout time.Duration
		success bool
	}{
		{"legacy, event streams", mcptest.Options{Legacy: true, Sessions: true, SSE: true}, 5 * time.Second, true},
		{"legacy, past the deadline", mcptest.Options{Legacy: true, Sessions: true, Delay: 150 * time.Millisecond}, 400 * time.Millisecond, false},
		{"modern, past the deadline", mcptest.Options{Delay: 300 * time.Millisecond}, 400 * time.Millisecond, false},
	} {
		t.Run(row.name, func(t *testing.T) {
			opts := row.opts
			opts.Tools = clean.opts.Tools
			srv := mcptest.NewServer(opts)
			defer srv.Close()
			rep := probeOnce(t, srv, declare(t, clean.declared...), func(tg *config.Target) { tg.Timeout = row.timeout })
			if rep.Success != row.success {
				t.Fatalf("success %v (%s: %s), want %v", rep.Success, rep.FailureReason, rep.FailureMessage, row.success)
			}
			if n := srv.WaitConnsClosed(5 * time.Second); n != 0 {
				t.Fatalf("%d connection(s) still open after the run", n)
			}
		})
	}
}

// The seed's three silences.
func TestPageCapSuppressesMissingTools(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b", "c", "d"), PageSize: 1})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a", "b", "c", "d", "e"), func(tg *config.Target) { tg.MaxListPages = 2 })
	if !has(rep, catalogue.DriftPaginationCapped) || !rep.Tools.PageCapReached || rep.Tools.Pages != 2 {
		t.Fatalf("cap not reported: %+v", rep.Tools)
	}
	if has(rep, catalogue.DriftToolMissing) {
		t.Fatal("a capped listing emitted MCP-DRIFT-TOOL-MISSING")
	}
}

func TestUnsupportedProtocolStopsBeforeComparison(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), SupportedVersions: []string{"2099-01-01"}})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a", "b"), nil)
	if rep.Success || rep.FailureReason != mcp.ReasonProtocolUnsupported || !has(rep, catalogue.DriftProtocolUnsupported) {
		t.Fatalf("success=%v reason=%s", rep.Success, rep.FailureReason)
	}
	if has(rep, catalogue.DriftToolMissing) || has(rep, catalogue.DriftToolUndeclared) || srv.Count("tools/list") != 0 {
		t.Fatalf("tools were compared (tools/list sent %d times)", srv.Count("tools/list"))
	}
}

func TestLegacyServerComparedNormally(t *testing.T) {
	for _, style := range []string{"plain400", "method-not-found", "discover-legacy-only"} {
		t.Run(style, func(t *testing.T) {
			srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b"), Legacy: true, Sessions: true, LegacyDiscover: style})
			defer srv.Close()
			rep := probeOnce(t, srv, declare(t, "a", "b", "gone"), nil)
			if !rep.Success || rep.Era != "legacy" || rep.ProtocolRevision.Value != nil || rep.ProtocolRevision.Reason == "" {
				t.Fatalf("success=%v era=%s revision=%+v", rep.Success, rep.Era, rep.ProtocolRevision)
			}
			if got := toolsOf(rep, catalogue.DriftToolMissing); !slices.Equal(got, []string{"gone"}) {
				t.Fatalf("missing = %v, want [gone]", got)
			}
			if !has(rep, catalogue.DriftLegacyServer) {
				t.Fatal("no MCP-DRIFT-LEGACY-SERVER")
			}
		})
	}
}

func TestRetryOnceAfterUnsupportedVersion(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), RejectFirstModern: true})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), nil)
	if !rep.Success || rep.Era != "modern" || srv.Count("server/discover") != 2 {
		t.Fatalf("success=%v era=%s discover sent %d times", rep.Success, rep.Era, srv.Count("server/discover"))
	}
}

func TestToolNameNeedingEncodingIsListed(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("Hello, 世界", "a")})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "Hello, 世界", "a"), nil)
	if !rep.Success || has(rep, catalogue.DriftToolMissing) || !slices.Equal(toolsOf(rep, catalogue.ConfToolNameFormat), []string{"Hello, 世界"}) {
		t.Fatalf("findings = %+v", rep.Findings)
	}
}

func TestClassification(t *testing.T) {
	for _, tc := range []struct{ url, env, class string }{
		{"http://127.0.0.1:1/mcp", "", "local"},
		{"http://[::1]:1/mcp", "", "local"},
		{"http://localhost/mcp", "", "local"},
		{"http://api.localhost/mcp", "", "local"},
		{"https://orders.dev.example.com/mcp", "", "dev"},
		{"https://orders-sandbox.example.com/mcp", "", "dev"},
		{"https://stg-orders.example.com/mcp", "", "staging"},
		{"https://orders.uat.example.com/mcp", "", "staging"},
		{"https://orders.prod.example.com/mcp", "", "production"},
		{"https://live.example.com/mcp", "", "production"},
		{"https://orders.internal/mcp", "", "unknown"},
		{"https://mcp.tools.svc.cluster.local/mcp", "", "unknown"},
		{"https://10.0.0.7/mcp", "", "unknown"},
		{"https://developer.example.com/mcp", "", "unknown"},
		{"http://127.0.0.1:1/mcp", "production", "production"},
	} {
		tg := config.NewTarget("x", tc.url)
		tg.Environment = tc.env
		if got := probe.Classify(tg); got.Class != tc.class || got.Reason == "" {
			t.Errorf("Classify(%s, env=%q) = %+v, want %s", tc.url, tc.env, got, tc.class)
		}
	}
}

func TestRunReturnsWithinDeadlineWhenServerHangs(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), Delay: time.Hour})
	defer srv.Close()
	start := time.Now()
	rep := probeOnce(t, srv, declare(t, "a"), func(tg *config.Target) { tg.Timeout = 300 * time.Millisecond })
	if el := time.Since(start); el > 300*time.Millisecond+time.Second {
		t.Fatalf("run took %v", el)
	}
	if rep.Success || rep.FailureReason != mcp.ReasonTimeout {
		t.Fatalf("success=%v reason=%s", rep.Success, rep.FailureReason)
	}
}

func TestCancelledContext(t *testing.T) {
	srv := mcptest.NewServer(clean.opts)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep := probe.Run(ctx, probe.Prepare(config.NewTarget("x", srv.URL), nil), probe.Options{})
	if rep.Success || rep.FailureReason != mcp.ReasonTimeout {
		t.Fatalf("success=%v reason=%s", rep.Success, rep.FailureReason)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := mcptest.NewServer(clean.opts)
	url := srv.URL
	srv.Close()
	rep := probe.Run(context.Background(), probe.Prepare(config.NewTarget("x", url), nil), probe.Options{})
	if rep.Success || rep.FailureReason != mcp.ReasonConnect {
		t.Fatalf("success=%v reason=%s (%s)", rep.Success, rep.FailureReason, rep.FailureMessage)
	}
}

func TestMissingSecretFileIsAConfigFailure(t *testing.T) {
	srv := mcptest.NewServer(clean.opts)
	defer srv.Close()
	rep := probeOnce(t, srv, nil, func(tg *config.Target) {
		withBearer(t, "x")(tg)
		tg.HTTPClient.Authorization.CredentialsFile += ".missing"
	})
	if rep.Success || rep.FailureReason != mcp.ReasonConfig {
		t.Fatalf("success=%v reason=%s (%s)", rep.Success, rep.FailureReason, rep.FailureMessage)
	}
}
