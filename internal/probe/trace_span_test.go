package probe

import (
	"context"
	"testing"
	"unicode/utf8"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/driftd/driftd/internal/mcp"
)

// TestRequestSpanStrings: a session id the server chose reaches the span
// as valid UTF-8 (the OTLP exporter refuses a batch holding anything
// else), and an unsampled span names no ids for a finding.
func TestRequestSpanStrings(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	rt := newRequestTracer(tp.Tracer("test"), "http://127.0.0.1:8080/mcp")
	_, span := rt.StartRequest(context.Background(), mcp.RequestInfo{Method: "tools/list", SessionID: "s\xff\xfe1"})
	if tid, sid := span.IDs(); tid == "" || sid == "" {
		t.Errorf("sampled span: ids %q %q", tid, sid)
	}
	span.End(&mcp.Exchange{Status: 200})
	for _, kv := range rec.Ended()[0].Attributes() {
		if v := kv.Value.String(); !utf8.ValidString(v) {
			t.Errorf("%s = %q is not UTF-8", kv.Key, v)
		}
	}

	never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	defer never.Shutdown(context.Background())
	_, span = newRequestTracer(never.Tracer("test"), "http://127.0.0.1:8080/mcp").StartRequest(context.Background(), mcp.RequestInfo{Method: "tools/list"})
	if tid, sid := span.IDs(); tid != "" || sid != "" {
		t.Errorf("unsampled span: ids %q %q, want none", tid, sid)
	}
	span.End(&mcp.Exchange{})
}
