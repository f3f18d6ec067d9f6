// Package tracing sets up OpenTelemetry tracing for driftd: the OTel Go SDK
// and the official OTLP exporter, configured by the tracing: block
// (config.TracingConfig), bounded so that a collector that is down or slow
// never fails or delays a run.
//
// What driftd owns is behaviour: which settings come from the config and
// which are left to the OTEL_EXPORTER_OTLP_* environment, the resource
// and sampler, and that a failed export is reported once, through the
// caller, with no secret in its text. Span names and attributes are the
// probe's (internal/probe/trace.go).
package tracing

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/credentials"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/sanitize"
)

// Provider is a configured tracer provider.
type Provider struct {
	tp  *sdktrace.TracerProvider
	cfg config.TracingConfig
}

// Config is the tracing block the provider was built from.
func (p *Provider) Config() config.TracingConfig { return p.cfg }

// New builds a provider exporting as cfg says; cfg must be enabled and
// valid (config checks it). Settings cfg leaves out come from the
// OTEL_EXPORTER_OTLP_* environment, then the exporter's defaults; the
// endpoint is always cfg's. onExportError is called for every failed
// export, for a warning and a counter. Nothing is sent until a span ends.
func New(cfg config.TracingConfig, version string, onExportError func(error)) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if !cfg.Enabled() {
		return nil, errors.New("tracing: no endpoint")
	}
	// Failures are reported through onExportError (a warning and a
	// counter), not the SDK's default handler, which logs every one.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	client, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", "driftd"),
		attribute.String("service.version", version),
	)
	exp := otlptrace.NewUnstarted(client)
	// An HTTP client's Start only checks its settings; a gRPC client's
	// connects lazily. Neither waits on the collector.
	if err := exp.Start(context.Background()); err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	batch := []sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(batchTimeout)}
	if cfg.Timeout > 0 {
		// The whole export, OTLP/HTTP's retries included, as gRPC's is.
		batch = append(batch, sdktrace.WithExportTimeout(cfg.Timeout))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		// A run's span decides for the requests under it.
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SamplingFraction))),
		sdktrace.WithBatcher(&reportingExporter{SpanExporter: exp, onError: onExportError, secrets: headerSecrets(cfg)}, batch...),
	)
	return &Provider{tp: tp, cfg: cfg}, nil
}

// batchTimeout is how long an ended span waits for its batch: a run's
// spans reach the collector about a second after it ends.
const batchTimeout = time.Second

// newClient is the OTLP client cfg names. Only what cfg sets becomes an
// option: an option given wins over the environment, so one passed for
// a field left out would hide OTEL_EXPORTER_OTLP_*.
func newClient(cfg config.TracingConfig) (otlptrace.Client, error) {
	endpoint := endpointURL(cfg)
	var headers map[string]string
	if len(cfg.Headers) > 0 {
		headers = make(map[string]string, len(cfg.Headers))
		for k, v := range cfg.Headers {
			headers[k] = string(v)
		}
	}
	switch cfg.ClientType {
	case config.TracingClientGRPC:
		tlsConfig, err := tlsConfig(cfg)
		if err != nil {
			return nil, err
		}
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(endpoint)}
		if headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(headers))
		}
		if tlsConfig != nil {
			opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(tlsConfig)))
		}
		switch cfg.Compression {
		case config.TracingCompressionGzip:
			opts = append(opts, otlptracegrpc.WithCompressor("gzip"))
		case config.TracingCompressionNone:
			opts = append(opts, otlptracegrpc.WithCompressor("none")) // any name but gzip
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(cfg.Timeout))
		}
		return otlptracegrpc.NewClient(opts...), nil
	default:
		client, err := httpClient(cfg)
		if err != nil {
			return nil, err
		}
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpoint), otlptracehttp.WithHTTPClient(client)}
		if headers != nil {
			opts = append(opts, otlptracehttp.WithHeaders(headers))
		}
		switch cfg.Compression {
		case config.TracingCompressionGzip:
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		case config.TracingCompressionNone:
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.NoCompression))
		}
		return otlptracehttp.NewClient(opts...), nil
	}
}

// endpointURL is cfg's endpoint as a URL, scheme and path included, so
// that none of them comes from the environment: host:port is https, or
// http with insecure; OTLP/HTTP sends to /v1/traces unless the URL names
// another path.
func endpointURL(cfg config.TracingConfig) string {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || !strings.Contains(cfg.Endpoint, "://") {
		u = &url.URL{Scheme: "https", Host: cfg.Endpoint}
		if cfg.Insecure {
			u.Scheme = "http"
		}
	}
	if cfg.ClientType != config.TracingClientGRPC && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1/traces"
	}
	return u.String()
}

// tlsConfig is the TLS configuration cfg writes, or nil when it writes
// none (the environment's OTEL_EXPORTER_OTLP_CERTIFICATE then applies).
func tlsConfig(cfg config.TracingConfig) (*tls.Config, error) {
	if cfg.TLSConfig == (promconfig.TLSConfig{}) {
		return nil, nil
	}
	c, err := promconfig.NewTLSConfig(&cfg.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("tracing.tls_config: %w", err)
	}
	return c, nil
}

// httpClient is the client OTLP/HTTP exports go through. It never
// follows a redirect: the export's headers (an API key) would go to
// whatever host the redirect names, and a redirect is a failed export.
//
// The exporter then leaves TLS, the proxy and the timeout to this client,
// so they are set here as the exporter would: TLS from tls_config, else
// from the OTEL_EXPORTER_OTLP_*CERTIFICATE and *CLIENT_KEY files; the
// proxy from HTTPS_PROXY and the like; the timeout of one try from
// timeout, else OTEL_EXPORTER_OTLP_TIMEOUT, else the exporter's 10s.
func httpClient(cfg config.TracingConfig) (*http.Client, error) {
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		if tlsCfg, err = envTLSConfig(); err != nil {
			return nil, err
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if tlsCfg != nil {
		transport.TLSClientConfig = tlsCfg
	}
	return &http.Client{
		Transport: transport,
		Timeout:   httpTimeout(cfg),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// otlpEnv is the standard variable OTEL_EXPORTER_OTLP_<name>, the
// traces-only one winning over the general one.
func otlpEnv(name string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
		return v
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_" + name)
}

// envTLSConfig is the TLS configuration the environment's certificate
// variables write, read the way tls_config's files are; nil when they
// write none.
func envTLSConfig() (*tls.Config, error) {
	tc := promconfig.TLSConfig{
		CAFile:   otlpEnv("CERTIFICATE"),
		CertFile: otlpEnv("CLIENT_CERTIFICATE"),
		KeyFile:  otlpEnv("CLIENT_KEY"),
	}
	if tc == (promconfig.TLSConfig{}) {
		return nil, nil
	}
	c, err := promconfig.NewTLSConfig(&tc)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_*CERTIFICATE: %w", err)
	}
	return c, nil
}

// defaultTimeout is the exporter's timeout of one try.
const defaultTimeout = 10 * time.Second

// httpTimeout bounds one try of an OTLP/HTTP export: timeout, else the
// environment's milliseconds, else the exporter's default.
func httpTimeout(cfg config.TracingConfig) time.Duration {
	if cfg.Timeout > 0 {
		return cfg.Timeout
	}
	if ms, err := strconv.ParseInt(otlpEnv("TIMEOUT"), 10, 64); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return defaultTimeout
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

// reportingExporter reports every failed export, its text bounded and
// with the headers' values taken out: a collector's answer is quoted in
// the exporter's errors, and may echo what it was sent.
type reportingExporter struct {
	sdktrace.SpanExporter
	onError func(error)
	secrets *sanitize.Secrets
}

func (e *reportingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil && e.onError != nil {
		e.onError(errors.New(sanitize.Text(e.secrets.Redact(err.Error()))))
	}
	return err
}

// headerSecrets are the values of the headers an export sends: cfg's, or
// the environment's when cfg writes none (a value is percent-encoded
// there; both spellings are secret).
func headerSecrets(cfg config.TracingConfig) *sanitize.Secrets {
	var values []string
	for _, v := range cfg.Headers {
		values = append(values, string(v))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for pair := range strings.SplitSeq(os.Getenv(name), ",") {
			_, v, _ := strings.Cut(pair, "=")
			values = append(values, v)
			if u, err := url.PathUnescape(v); err == nil {
				values = append(values, u)
			}
		}
	}
	return sanitize.NewSecrets(values...)
}
