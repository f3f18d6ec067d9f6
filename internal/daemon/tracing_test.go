package daemon_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// TestCheckConfigTracingCA: `driftd config check` reads the tracing
// block's CA file, as building the exporter will, and places the error
// at the block's line.
func TestCheckConfigTracingCA(t *testing.T) {
	e := newEnv(t)
	path := e.config("tracing:\n  endpoint: otel.example.com:4318\n  tls_config:\n    ca_file: missing-ca.pem\n")
	_, _, err := daemon.CheckConfig(path)
	want := path + ":3: tracing.tls_config: unable to read CA cert"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(e.dir, "missing-ca.pem")) {
		t.Errorf("CheckConfig = %v, want %q", err, want)
	}
}

// TestReloadBadTracingKeepsExporter: a reload whose tracing block cannot
// be built (its CA file is missing) fails, and the running exporter keeps
// sending to its collector.
func TestReloadBadTracingKeepsExporter(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a")})
	defer srv.Close()
	var exports atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exports.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	e.manifest("a.json", "a")
	base := fmt.Sprintf("global: {schedule: \"@every 1s\", state_dir: state}\ntargets:\n  - {name: a, url: %q, manifest: a.json}\n", srv.URL)
	e.config(base + fmt.Sprintf("tracing: {endpoint: %q}\n", collector.URL))
	_, web := e.start(false)
	eventually(t, 20*time.Second, "spans at the collector", func() bool { return exports.Load() > 0 })
	e.config(base + "tracing: {endpoint: otel.example.com:4318, tls_config: {ca_file: missing-ca.pem}}\n")
	if code, out := post(t, web+"/-/reload"); code == 200 || !strings.Contains(out, "tls_config") {
		t.Fatalf("reload with a missing CA file: %d %s", code, out)
	}
	seen := exports.Load()
	eventually(t, 20*time.Second, "spans at the first collector after the failed reload", func() bool { return exports.Load() > seen })
}

// TestCheckConfigWarnsOTLPEndpoint: `driftd config check` hands back the
// deprecation of global.otlp_endpoint with its line, and prints the
// tracing block it became.
func TestCheckConfigWarnsOTLPEndpoint(t *testing.T) {
	e := newEnv(t)
	e.manifest("a.json", "a")
	path := e.config("global:\n  state_dir: state\n  otlp_endpoint: http://otel-collector:4318\ntargets: [{name: one, url: \"http://127.0.0.1:1/mcp\", manifest: a.json}]\n")
	out, warnings, err := daemon.CheckConfig(path)
	want := path + ":3: global.otlp_endpoint: deprecated; write tracing: {endpoint: http://otel-collector:4318} (docs/tracing.md)"
	if err != nil || len(warnings) != 1 || warnings[0] != want {
		t.Errorf("CheckConfig: warnings %q, %v; want [%q]", warnings, err, want)
	}
	if !strings.Contains(string(out), "tracing:\n  client_type: http\n  endpoint: http://otel-collector:4318\n") {
		t.Errorf("effective config:\n%s", out)
	}
}
