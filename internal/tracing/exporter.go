package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// maxResponse bounds how much of a collector's answer is read: enough for
// any ExportTraceServiceResponse, and the connection is reused when the
// answer fits.
const maxResponse = 64 << 10

// ExportTraceServiceResponse's partial_success, and its rejected_spans.
const (
	responsePartialSuccess protowire.Number = 1
	partialRejectedSpans   protowire.Number = 1
)

// errShutdown is what an export returns once the exporter is shut down.
var errShutdown = errors.New("otlp export: exporter is shut down")

// exporter is an sdktrace.SpanExporter that POSTs each batch to an OTLP/HTTP
// collector as one protobuf ExportTraceServiceRequest, bounded by timeout
// and never retried. It is safe for concurrent use.
type exporter struct {
	url       string // scheme://host/path: no user info, no query
	userAgent string
	timeout   time.Duration
	transport *http.Transport
	client    *http.Client
	stopped   context.Context // done once Shutdown is called
	stop      context.CancelFunc
}

// newExporter returns an exporter posting to url. Each exporter has its own
// transport, so that Shutdown can close its idle connections.
func newExporter(url, userAgent string, timeout time.Duration) *exporter {
	// net/http's DefaultTransport, as a value of our own: proxies from the
	// environment (HTTPS_PROXY, NO_PROXY), HTTP/2 where TLS offers it.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		// A redirect is a failed export, as any non-2xx answer: following
		// it would send spans where the operator did not point them, and
		// put a URL of the collector's choosing in the error.
		return http.ErrUseLastResponse
	}}
	stopped, stop := context.WithCancel(context.Background())
	return &exporter{url: url, userAgent: userAgent, timeout: timeout, transport: tr, client: client, stopped: stopped, stop: stop}
}

// ExportSpans sends spans in one request. A collector's non-2xx answer is
// an error naming the status code, never the collector's own words; a 2xx
// answer whose partial_success rejects spans is an error counting them (its
// error_message is not repeated, and a message rejecting none is ignored).
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	if e.stopped.Err() != nil {
		return errShutdown
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	defer context.AfterFunc(e.stopped, cancel)()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(encodeRequest(spans)))
	if err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", e.userAgent)
	resp, err := e.client.Do(req)
	if err != nil {
		if e.stopped.Err() != nil {
			return errShutdown
		}
		return fmt.Errorf("otlp export: %w", err)
	}
	// Read what fits, so that a short answer leaves the connection reusable.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// resp.Status would repeat the collector's reason phrase.
		return fmt.Errorf("otlp export: collector answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media == "application/x-protobuf" {
		if n := rejectedSpans(body); n > 0 {
			return fmt.Errorf("otlp export: collector rejected %d of %d spans", n, len(spans))
		}
	}
	return nil
}

// Shutdown makes later exports fail, cancels any in flight and closes idle
// connections.
func (e *exporter) Shutdown(context.Context) error {
	e.stop()
	e.transport.CloseIdleConnections()
	return nil
}

// rejectedSpans is partial_success.rejected_spans of the
// ExportTraceServiceResponse b, read as protobuf does (a message field seen
// twice is merged; the last scalar wins); 0 when it is absent or b does not
// parse, since a 2xx answer has accepted the spans either way.
func rejectedSpans(b []byte) int64 {
	var rejected int64
	ok := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != responsePartialSuccess || typ != protowire.BytesType {
			return true
		}
		partial, _ := protowire.ConsumeBytes(v)
		return eachField(partial, func(num protowire.Number, typ protowire.Type, v []byte) bool {
			if num == partialRejectedSpans && typ == protowire.VarintType {
				n, _ := protowire.ConsumeVarint(v)
				rejected = int64(n)
			}
			return true
		})
	})
	if !ok {
		return 0
	}
	return rejected
}

// eachField calls fn with each field of message b and its encoded value,
// while fn returns true; it reports whether b parsed and fn never stopped.
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 || !fn(num, typ, b[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
