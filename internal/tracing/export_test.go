package tracing_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/tracing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// token is the bearer token the collectors demand; no error may quote it.
const token = "MARKER-5c1e-collector-token"

// export is one request a collector accepted.
type export struct {
	encoding string // Content-Encoding
	spans    []string
}

// collector is an OTLP/HTTP receiver over TLS on loopback. It demands the
// bearer token, decodes the protobuf body (gunzipped when it says gzip)
// with the generated OTLP types, and echoes a refused Authorization in
// its 401, as a careless collector might.
type collector struct {
	*httptest.Server
	mu      sync.Mutex
	exports []export
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	c.Server = httptest.NewTLSServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("Authorization"); got != "Bearer "+token {
		http.Error(w, fmt.Sprintf("refused Authorization %q", got), http.StatusUnauthorized)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.Method != http.MethodPost || r.URL.Path != "/v1/traces" ||
		r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	e := export{encoding: r.Header.Get("Content-Encoding")}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				e.spans = append(e.spans, s.Name)
			}
		}
	}
	c.mu.Lock()
	c.exports = append(c.exports, e)
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (c *collector) received() []export {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.exports)
}

// spans is every span name the collector received.
func (c *collector) spans() []string {
	var names []string
	for _, e := range c.received() {
		names = append(names, e.spans...)
	}
	return names
}

// caFile writes the certificate srv presents to a PEM file, for
// tls_config.ca_file.
func caFile(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "collector-ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// errorLog collects what New reports through onExportError.
type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err.Error())
}

func (l *errorLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

// probeOnce runs one real probe of a mock MCP server through p, so the
// spans are the ones driftd produces, and flushes them.
func probeOnce(t *testing.T, p *tracing.Provider) {
	t.Helper()
	srv := mcptest.NewServer(mcptest.Options{Tools: []json.RawMessage{json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`)}})
	defer srv.Close()
	target := config.NewTarget("traced", srv.URL)
	target.Timeout = 5 * time.Second
	rep := probe.Run(context.Background(), probe.Prepare(target, nil), probe.Options{Version: "test", Tracer: p.Tracer()})
	if !rep.Success {
		t.Fatalf("probe failed: %s %s", rep.FailureReason, rep.FailureMessage)
	}
	shutdown(t, p)
}

// shutdown flushes p, with a deadline far beyond any export's.
func shutdown(t *testing.T, p *tracing.Provider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func newProvider(t *testing.T, cfg config.TracingConfig, log *errorLog) *tracing.Provider {
	t.Helper()
	p, err := tracing.New(cfg, "test", log.add)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRunSpans fails unless the collector received the run's span and a
// request span under it, by the names driftd gives them.
func wantRunSpans(t *testing.T, c *collector) {
	t.Helper()
	names := c.spans()
	if !slices.Contains(names, "driftd.probe traced") || !slices.Contains(names, "tools/list") {
		t.Errorf("spans received: %q; want driftd.probe traced and tools/list among them", names)
	}
}

// TestExportTLSAndHeaders: with the collector's CA in tls_config.ca_file
// and its bearer token in headers, the spans of a run arrive, gzipped
// when compression says so; the endpoint may be a URL or host:port.
func TestExportTLSAndHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, compression, wantEncoding string
		hostPort                        bool
	}{
		{"url gzip", "gzip", "gzip", false},
		{"host:port none", "none", "", true},
		{"url default", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t)
			cfg := config.DefaultTracingConfig()
			cfg.Endpoint = c.URL
			if tc.hostPort {
				cfg.Endpoint = strings.TrimPrefix(c.URL, "https://")
			}
			cfg.TLSConfig = promconfig.TLSConfig{CAFile: caFile(t, c.Server)}
			cfg.Headers = map[string]promconfig.Secret{"Authorization": "Bearer " + token}
			cfg.Compression = tc.compression
			var log errorLog
			probeOnce(t, newProvider(t, cfg, &log))
			if errs := log.all(); len(errs) > 0 {
				t.Fatalf("export failed: %q", errs)
			}
			wantRunSpans(t, c)
			for _, e := range c.received() {
				if e.encoding != tc.wantEncoding {
					t.Errorf("Content-Encoding %q, want %q", e.encoding, tc.wantEncoding)
				}
			}
		})
	}
}

// TestExportHeadersFromEnvironment: with no headers in the block, the
// standard OTEL_EXPORTER_OTLP_HEADERS supplies them (its values are
// percent-encoded); headers written in the block win over it.
func TestExportHeadersFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		headers   map[string]promconfig.Secret
	}{
		{"environment", "Authorization=Bearer%20" + token, nil},
		{"block wins", "Authorization=Bearer%20wrong-token", map[string]promconfig.Secret{"Authorization": "Bearer " + token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", tc.env)
			// The endpoint is always the block's.
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			c := newCollector(t)
			cfg := config.DefaultTracingConfig()
			cfg.Endpoint = c.URL
			cfg.TLSConfig = promconfig.TLSConfig{CAFile: caFile(t, c.Server)}
			cfg.Headers = tc.headers
			var log errorLog
			probeOnce(t, newProvider(t, cfg, &log))
			if errs := log.all(); len(errs) > 0 {
				t.Fatalf("export failed: %q", errs)
			}
			wantRunSpans(t, c)
		})
	}
}

// TestExportRefused: a collector whose certificate is not trusted, and
// one that refuses the token, each fail the export; the failure is
// reported, and never quotes the configured header value even when the
// collector echoes it.
func TestExportRefused(t *testing.T) {
	c := newCollector(t)
	for _, tc := range []struct {
		name  string
		setup func(*config.TracingConfig)
		want  string
	}{
		{"untrusted certificate", func(cfg *config.TracingConfig) {
			cfg.Headers = map[string]promconfig.Secret{"Authorization": "Bearer " + token}
		}, "certificate"},
		{"refused token", func(cfg *config.TracingConfig) {
			cfg.TLSConfig = promconfig.TLSConfig{CAFile: caFile(t, c.Server)}
			cfg.Headers = map[string]promconfig.Secret{"Authorization": "Bearer " + token + "-revoked"}
		}, "401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.DefaultTracingConfig()
			cfg.Endpoint = c.URL
			tc.setup(&cfg)
			var log errorLog
			probeOnce(t, newProvider(t, cfg, &log))
			errs := log.all()
			if len(errs) == 0 {
				t.Fatal("no export failure reported")
			}
			for _, e := range errs {
				if !strings.Contains(e, tc.want) {
					t.Errorf("error %q does not say %q", e, tc.want)
				}
				if strings.Contains(e, token) {
					t.Errorf("error quotes the token: %q", e)
				}
			}
		})
	}
	if n := len(c.received()); n != 0 {
		t.Errorf("%d exports accepted", n)
	}
}

// traceService is an OTLP/gRPC receiver that records span names and the
// authorization metadata of each export.
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []string
	auth  []string
}

func (s *traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, md.Get("authorization")...)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s.spans = append(s.spans, sp.Name)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestExportGRPC: client_type grpc sends the run's spans over OTLP/gRPC
// with the configured headers as metadata.
func TestExportGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &traceService{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, svc)
	go srv.Serve(ln)
	defer srv.Stop()

	cfg := config.DefaultTracingConfig()
	cfg.ClientType = config.TracingClientGRPC
	cfg.Endpoint = ln.Addr().String()
	cfg.Insecure = true
	cfg.Compression = "gzip"
	cfg.Headers = map[string]promconfig.Secret{"Authorization": "Bearer " + token}
	var log errorLog
	probeOnce(t, newProvider(t, cfg, &log))
	if errs := log.all(); len(errs) > 0 {
		t.Fatalf("export failed: %q", errs)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if !slices.Contains(svc.spans, "driftd.probe traced") || !slices.Contains(svc.spans, "tools/list") {
		t.Errorf("spans received: %q", svc.spans)
	}
	if len(svc.auth) == 0 || svc.auth[0] != "Bearer "+token {
		t.Errorf("authorization metadata %q", svc.auth)
	}
}

// TestShutdownBounded: a collector that never answers costs Shutdown no
// more than its context.
func TestShutdownBounded(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	cfg := config.DefaultTracingConfig()
	cfg.Endpoint = hang.URL
	var log errorLog
	p := newProvider(t, cfg, &log)
	_, s := p.Tracer().Start(context.Background(), "one")
	s.End()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Shutdown(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Shutdown took %v with a 500ms context", took)
	}
	if err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Errorf("Shutdown = %v, want the flush reported abandoned", err)
	}
}

// TestNewRefusesBadConfig: New checks the block as config does, and a
// CA file that cannot be read is an error before anything is sent.
func TestNewRefusesBadConfig(t *testing.T) {
	cfg := config.DefaultTracingConfig()
	if _, err := tracing.New(cfg, "test", nil); err == nil {
		t.Error("New without an endpoint succeeded")
	}
	cfg.Endpoint = "ftp://otel"
	if _, err := tracing.New(cfg, "test", nil); err == nil || !strings.Contains(err.Error(), "endpoint") {
		t.Errorf("New(ftp://) = %v", err)
	}
	cfg.Endpoint = "otel:4318"
	cfg.TLSConfig.CAFile = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := tracing.New(cfg, "test", nil); err == nil || !strings.Contains(err.Error(), "tls_config") {
		t.Errorf("New with a missing CA file = %v", err)
	}
}

// TestSamplingFraction: at 0 a run sends nothing; at 1 (the default) every
// run is sent, which the other tests show.
func TestSamplingFraction(t *testing.T) {
	c := newCollector(t)
	cfg := config.DefaultTracingConfig()
	cfg.Endpoint = c.URL
	cfg.TLSConfig = promconfig.TLSConfig{CAFile: caFile(t, c.Server)}
	cfg.Headers = map[string]promconfig.Secret{"Authorization": "Bearer " + token}
	cfg.SamplingFraction = 0
	var log errorLog
	probeOnce(t, newProvider(t, cfg, &log))
	if names := c.spans(); len(names) != 0 || len(log.all()) != 0 {
		t.Errorf("sampling_fraction 0 sent %q (errors %q)", names, log.all())
	}
}

// TestExportRefusesRedirect: a collector that answers 307 to another
// host never gets the export's headers sent there; the redirect is a
// failed export, reported.
func TestExportRefusesRedirect(t *testing.T) {
	const key = "MARKER-7f3a-api-key"
	var mu sync.Mutex
	var elsewhere []string // the API key each request to the second server carried
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Get("X-Api-Key"))
		mu.Unlock()
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/traces", http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	cfg := config.DefaultTracingConfig()
	cfg.Endpoint = redirecting.URL
	cfg.Headers = map[string]promconfig.Secret{"X-Api-Key": key}
	var log errorLog
	probeOnce(t, newProvider(t, cfg, &log))
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) != 0 {
		t.Errorf("the redirect was followed: %d requests reached the other server (keys %q)", len(elsewhere), elsewhere)
	}
	errs := log.all()
	if len(errs) == 0 {
		t.Fatal("the redirected export was not reported as failed")
	}
	for _, e := range errs {
		if !strings.Contains(e, "307") {
			t.Errorf("error %q does not name the 307", e)
		}
		if strings.Contains(e, key) {
			t.Errorf("error quotes the key: %q", e)
		}
	}
}

// TestExportTLSFromEnvironment: with no tls_config, the collector's CA
// comes from OTEL_EXPORTER_OTLP_CERTIFICATE, as the exporter would read it.
func TestExportTLSFromEnvironment(t *testing.T) {
	c := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", caFile(t, c.Server))
	cfg := config.DefaultTracingConfig()
	cfg.Endpoint = c.URL
	cfg.Headers = map[string]promconfig.Secret{"Authorization": "Bearer " + token}
	var log errorLog
	probeOnce(t, newProvider(t, cfg, &log))
	if errs := log.all(); len(errs) > 0 {
		t.Fatalf("export failed: %q", errs)
	}
	wantRunSpans(t, c)
}
