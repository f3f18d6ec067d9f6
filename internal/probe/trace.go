package probe

import (
	"context"
	"net"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// Span names and attributes follow the OpenTelemetry semantic conventions
// for MCP (semantic-conventions-genai v0.1.0, docs/gen-ai/mcp.md): a client
// span "{mcp.method.name} {target}" per request, the target being the tool
// for tools/call. Attributes never carry a credential or an argument value.
type requestTracer struct {
	tracer trace.Tracer
	server []attribute.KeyValue
}

func newRequestTracer(t trace.Tracer, rawURL string) *requestTracer {
	rt := &requestTracer{tracer: t}
	if u, err := url.Parse(rawURL); err == nil {
		host, port, _ := net.SplitHostPort(u.Host)
		if host == "" {
			host = u.Hostname()
		}
		rt.server = append(rt.server, attribute.String("server.address", host))
		if p, err := strconv.Atoi(port); err == nil {
			rt.server = append(rt.server, attribute.Int("server.port", p))
		}
	}
	rt.server = append(rt.server, attribute.String("network.transport", "tcp"), attribute.String("network.protocol.name", "http"))
	return rt
}

func (rt *requestTracer) StartRequest(ctx context.Context, req mcp.RequestInfo) (context.Context, mcp.RequestSpan) {
	name := req.Method
	attrs := append([]attribute.KeyValue{
		attribute.String("mcp.method.name", req.Method),
		attribute.String("jsonrpc.protocol.version", "2.0"),
	}, rt.server...)
	if req.Version != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", req.Version))
	}
	if req.ID != 0 {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", strconv.FormatInt(req.ID, 10)))
	}
	if req.SessionID != "" {
		// The server chose it: any bytes, and the exporter refuses a
		// batch holding a string that is not UTF-8.
		attrs = append(attrs, attribute.String("mcp.session.id", sanitize.Name(req.SessionID)))
	}
	if req.Method == "tools/call" && req.Name != "" {
		name += " " + sanitize.Name(req.Name)
		attrs = append(attrs, attribute.String("gen_ai.tool.name", sanitize.Name(req.Name)), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	ctx, span := rt.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, otelSpan{span}
}

type otelSpan struct{ span trace.Span }

func (s otelSpan) Traceparent() string {
	sc := s.span.SpanContext()
	flags := "00"
	if sc.IsSampled() {
		flags = "01"
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + flags
}

// IDs are the span's trace and span id, or none when the span is not
// sampled: it is never exported, and a finding would name nothing.
func (s otelSpan) IDs() (string, string) {
	sc := s.span.SpanContext()
	if !sc.IsSampled() {
		return "", ""
	}
	return sc.TraceID().String(), sc.SpanID().String()
}

func (s otelSpan) End(ex *mcp.Exchange) {
	if ex.Status != 0 {
		s.span.SetAttributes(attribute.Int("http.response.status_code", ex.Status))
	}
	if ex.Err != nil {
		errType := string(mcp.Classify(ex.Err))
		if me, ok := ex.Err.(*mcp.Error); ok && me.RPC != nil {
			code := strconv.Itoa(me.RPC.Code)
			errType = code
			s.span.SetAttributes(attribute.String("rpc.response.status_code", code))
		}
		s.span.SetAttributes(attribute.String("error.type", errType))
		s.span.SetStatus(codes.Error, errType)
	}
	s.span.End()
}
