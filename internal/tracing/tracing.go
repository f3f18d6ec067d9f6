// Package tracing sets up OpenTelemetry tracing for driftd: the OTel Go SDK
// with driftd's own OTLP/HTTP trace exporter, bounded so that a collector
// that is down or slow never fails or delays a run.
//
// The exporter encodes the OTLP protobuf by hand (encode.go). The SDK's
// otlptracehttp links gRPC, genproto and the generated OTLP types into
// every driftd process: about 2 ms of package initialisation and 2 MB of
// binary, paid by each `driftd check` (issue 15). On the wire it sends what
// otlptracehttp sent; docs/tracing.md lists the differences.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exportTimeout bounds one export; a down collector costs at most this per
// batch, in the background. Exports are never retried: a lost batch is
// counted through onExportError.
const exportTimeout = 3 * time.Second

// Provider is a configured tracer provider.
type Provider struct {
	tp       *sdktrace.TracerProvider
	endpoint string
}

// Endpoint is the endpoint the provider exports to, as configured.
func (p *Provider) Endpoint() string { return p.endpoint }

// New builds a provider exporting to endpoint, an OTLP/HTTP base URL such as
// http://otel-collector:4318 (spans go to /v1/traces). onExportError is
// called for every failed export, for a warning and a counter.
func New(endpoint, version string, onExportError func(error)) (*Provider, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otlp endpoint %q: want an http:// or https:// URL", endpoint)
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/v1/traces"
	}
	// Only the scheme, host and path are used, as otlptracehttp did: user
	// info and a query are not sent.
	target := url.URL{Scheme: u.Scheme, Host: u.Host, Path: path}
	// Failures are reported through onExportError (a warning and a
	// counter), not the SDK's default handler, which logs every one.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	exp := newExporter(target.String(), "driftd/"+version, exportTimeout)
	res := resource.NewSchemaless(
		attribute.String("service.name", "driftd"),
		attribute.String("service.version", version),
	)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(&countingExporter{SpanExporter: exp, onError: onExportError},
			sdktrace.WithBatchTimeout(time.Second), sdktrace.WithExportTimeout(exportTimeout)),
	)
	return &Provider{tp: tp, endpoint: endpoint}, nil
}

// Tracer returns driftd's tracer.
func (p *Provider) Tracer() trace.Tracer { return p.tp.Tracer("github.com/driftd/driftd") }

// Shutdown flushes what is buffered and stops, within ctx.
func (p *Provider) Shutdown(ctx context.Context) error {
	err := p.tp.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("trace flush abandoned at shutdown: %w", err)
	}
	return err
}

// countingExporter reports every failed export.
type countingExporter struct {
	sdktrace.SpanExporter
	onError func(error)
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil && e.onError != nil {
		e.onError(err)
	}
	return err
}
