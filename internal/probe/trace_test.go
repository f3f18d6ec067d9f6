package probe_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/tracing"
)

// receiver is an in-process OTLP/HTTP collector that decodes the real
// protobuf.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	raw   [][]byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "bad export", 400)
		return
	}
	rc.mu.Lock()
	rc.raw = append(rc.raw, b)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		if _, isInt := kv.Value.Value.(*commonpb.AnyValue_IntValue); isInt {
			m[kv.Key] = strconv.FormatInt(kv.Value.GetIntValue(), 10)
			continue
		}
		m[kv.Key] = kv.Value.GetStringValue()
	}
	return m
}

func TestTracesAndFindingAttribution(t *testing.T) {
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	tc := config.DefaultTracingConfig()
	tc.Endpoint = collector.URL
	tp, err := tracing.New(tc, "test", func(err error) { t.Errorf("export failed: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "extra"), BearerToken: marker})
	defer srv.Close()
	rep := probe.Run(context.Background(), probe.Prepare(func() config.Target {
		tg := config.NewTarget("traced", srv.URL)
		tg.Timeout = 5 * time.Second
		tg.Environment = "staging" // plain http on a non-local class: a finding with no span
		withBearer(t, marker)(&tg)
		return tg
	}(), declare(t, "a", "gone")), probe.Options{Version: "test", Tracer: tp.Tracer()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.CheckNoViolations(); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	byID := map[string]*tracepb.Span{}
	var run *tracepb.Span
	for _, s := range rc.spans {
		byID[hex.EncodeToString(s.SpanId)] = s
		if s.Name == "driftd.probe traced" {
			run = s
		}
	}
	if run == nil {
		t.Fatalf("no run span among %d spans", len(rc.spans))
	}
	// Every request has a client span under the run span, named and
	// attributed after the MCP conventions, and the mock saw its
	// traceparent in the header and in params._meta.
	reqs := srv.Requests()
	anonSpans := map[string]bool{}
	for _, r := range reqs {
		if r.Path != mcptest.EndpointPath {
			continue // the authorization surface's metadata GETs are not MCP requests
		}
		tp := r.Header.Get("traceparent")
		parts := strings.Split(tp, "-")
		if len(parts) != 4 {
			t.Fatalf("%s without a traceparent header: %q", r.Method, tp)
		}
		var body struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(r.Body, &body)
		if body.Params.Meta["traceparent"] != tp {
			t.Errorf("%s: _meta.traceparent %v != header %q", r.Method, body.Params.Meta["traceparent"], tp)
		}
		if parts[1] != hex.EncodeToString(run.TraceId) {
			t.Errorf("%s carries another trace id", r.Method)
		}
		s, ok := byID[parts[2]]
		if !ok {
			t.Fatalf("request %s's span %s was not exported", r.Method, parts[2])
		}
		a := attrs(s)
		if s.Name != r.Method || s.Kind != tracepb.Span_SPAN_KIND_CLIENT || a["mcp.method.name"] != r.Method ||
			a["jsonrpc.request.id"] == "" || a["mcp.protocol.version"] != "2026-07-28" || a["server.address"] != "127.0.0.1" ||
			hex.EncodeToString(s.ParentSpanId) != hex.EncodeToString(run.SpanId) {
			t.Errorf("span %q kind %v attrs %v parent ok=%v", s.Name, s.Kind, a, hex.EncodeToString(s.ParentSpanId) == hex.EncodeToString(run.SpanId))
		}
		if r.Header.Get("Authorization") == "" {
			anonSpans[parts[2]] = true
			if a["error.type"] != "auth_required" || a["http.response.status_code"] != "401" {
				t.Errorf("anonymous span attrs %v", a)
			}
		}
	}
	// Every finding names an exported span, the right one (DESIGN §12).
	for _, f := range rep.Findings {
		if f.Rule == catalogue.AuthPlaintextTransport {
			if f.TraceID != "" || f.SpanID != "" {
				t.Errorf("%s carries span ids", f.Rule)
			}
			continue
		}
		s, ok := byID[f.SpanID]
		if !ok || f.TraceID != hex.EncodeToString(run.TraceId) {
			t.Errorf("%s names no exported span (%s/%s)", f.Rule, f.TraceID, f.SpanID)
			continue
		}
		switch catalogue.FamilyOf(f.Rule) {
		case catalogue.FamilyAuth:
			if !anonSpans[f.SpanID] {
				t.Errorf("%s points at %q, not the anonymous request", f.Rule, s.Name)
			}
		default:
			if s.Name != "tools/list" || anonSpans[f.SpanID] {
				t.Errorf("%s points at %q, not an authenticated tools/list", f.Rule, s.Name)
			}
		}
	}
	for _, rule := range []string{catalogue.DriftToolMissing, catalogue.DriftToolUndeclared, catalogue.AuthEnforced, catalogue.AuthPlaintextTransport} {
		if !has(rep, rule) {
			t.Errorf("scenario lacks %s", rule)
		}
	}
	for _, b := range rc.raw {
		if bytes.Contains(b, []byte(marker)) {
			t.Fatal("an exported span carries the secret")
		}
	}
}
