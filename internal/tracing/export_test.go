package tracing

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// export is one request a collector received.
type export struct {
	path, contentType, userAgent, authorization, query string
	body                                               []byte
	req                                                *coltracepb.ExportTraceServiceRequest
}

// collector is an OTLP/HTTP receiver on loopback that decodes each request
// with the generated OTLP types. answer, when set, writes the response.
type collector struct {
	*httptest.Server
	answer func(http.ResponseWriter, *http.Request)

	mu      sync.Mutex
	exports []export
}

func newCollector(t *testing.T, answer func(http.ResponseWriter, *http.Request)) *collector {
	t.Helper()
	c := &collector{answer: answer}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &coltracepb.ExportTraceServiceRequest{}
	if err != nil || r.Method != http.MethodPost || proto.Unmarshal(body, req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.exports = append(c.exports, export{
		path: r.URL.Path, query: r.URL.RawQuery, contentType: r.Header.Get("Content-Type"),
		userAgent: r.Header.Get("User-Agent"), authorization: r.Header.Get("Authorization"),
		body: body, req: req,
	})
	c.mu.Unlock()
	if c.answer != nil {
		c.answer(w, r)
	}
}

func (c *collector) received() []export {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]export(nil), c.exports...)
}

// errorLog collects what New reports through onExportError.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// shutdown flushes p, with a deadline far beyond any export's.
func shutdown(t *testing.T, p *Provider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// oneSpan records one span through p and flushes it.
func oneSpan(t *testing.T, p *Provider) {
	t.Helper()
	_, s := p.Tracer().Start(context.Background(), "one")
	s.End()
	shutdown(t, p)
}

// traceID and spanID are ids that begin and end with b.
func traceID(b byte) trace.TraceID {
	return trace.TraceID{b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, b}
}
func spanID(b byte) trace.SpanID { return trace.SpanID{b, 1, 2, 3, 4, 5, 6, b} }

func traceState(t *testing.T, s string) trace.TraceState {
	t.Helper()
	ts, err := trace.ParseTraceState(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestExportRoundTrip exports spans that set every field the encoder
// writes, over HTTP, and compares what the generated OTLP types decode with
// the request written out by hand.
func TestExportRoundTrip(t *testing.T) {
	c := newCollector(t, nil)
	const schema = "https://opentelemetry.io/schemas/1.26.0"
	resA := resource.NewWithAttributes(schema, attribute.String("service.name", "driftd"), attribute.Int64("host.cpus", 2))
	resB := resource.NewSchemaless(attribute.Bool("b", true))
	scope1 := instrumentation.Scope{Name: "github.com/driftd/driftd", Version: "1.2.3", SchemaURL: schema,
		Attributes: attribute.NewSet(attribute.String("scope.kind", "test"))}
	scope2 := instrumentation.Scope{Name: "other"}
	t0 := time.Unix(1_700_000_000, 123_456_789)

	full := tracetest.SpanStub{
		Name: "full\xff",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(1), SpanID: spanID(1),
			TraceFlags: trace.FlagsSampled, TraceState: traceState(t, "a=1,b=2")}),
		Parent: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(1), SpanID: spanID(9),
			TraceFlags: trace.FlagsSampled, Remote: true}),
		SpanKind:  trace.SpanKindClient,
		StartTime: t0,
		EndTime:   t0.Add(2 * time.Second),
		Attributes: []attribute.KeyValue{
			attribute.Bool("bool", true),
			attribute.Bool("false", false),
			attribute.Int64("int", -42),
			attribute.Int64("zero", 0),
			attribute.Float64("float", -0.5),
			attribute.String("string", "héllo"),
			attribute.String("empty", ""),
			attribute.String("bad\xff", "x\xffy\xc3"),
			attribute.BoolSlice("bools", []bool{true, false}),
			attribute.Int64Slice("ints", []int64{1, -1, math.MaxInt64}),
			attribute.Float64Slice("floats", []float64{1.5, -2}),
			attribute.StringSlice("strings", []string{"a", ""}),
			attribute.StringSlice("no-strings", nil),
			attribute.ByteSlice("bytes", []byte{0, 1, 255}),
			attribute.Slice("mixed", attribute.IntValue(1), attribute.StringValue("x"),
				attribute.SliceValue(attribute.BoolValue(true)), attribute.MapValue(attribute.String("k", "v"))),
			attribute.Map("map", attribute.String("k", "v"), attribute.Int64("n", 7)),
			{Key: "unset"},
		},
		Events: []sdktrace.Event{
			{Name: "retry", Time: t0.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("attempt", 2)}, DroppedAttributeCount: 1},
			{Name: "no-time"},
		},
		Links: []sdktrace.Link{
			{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(2), SpanID: spanID(2),
				TraceFlags: trace.FlagsSampled, TraceState: traceState(t, "v=1"), Remote: true}),
				Attributes: []attribute.KeyValue{attribute.String("link.kind", "follows")}, DroppedAttributeCount: 2},
			{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(3), SpanID: spanID(3)})},
		},
		Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
		DroppedAttributes:    3,
		DroppedEvents:        4,
		DroppedLinks:         5,
		Resource:             resA,
		InstrumentationScope: scope1,
	}
	local := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(4), SpanID: spanID(4), TraceFlags: trace.FlagsSampled})
	stub := func(name string, sid byte, kind trace.SpanKind, res *resource.Resource, scope instrumentation.Scope) tracetest.SpanStub {
		return tracetest.SpanStub{Name: name, SpanKind: kind, Resource: res, InstrumentationScope: scope,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(4), SpanID: spanID(sid)})}
	}
	unspecified := stub("unspecified", 10, trace.SpanKindUnspecified, resA, scope2)
	internal := stub("internal", 11, trace.SpanKindInternal, resA, scope1)
	internal.Parent, internal.Status = local, sdktrace.Status{Code: codes.Ok}
	server := stub("server", 12, trace.SpanKindServer, resA, scope2)
	producer := stub("producer", 13, trace.SpanKindProducer, resA, scope1)
	producer.DroppedAttributes = 1 << 40 // more than a uint32 holds
	consumer := stub("consumer", 14, trace.SpanKindConsumer, resA, scope1)
	consumer.StartTime, consumer.DroppedEvents = time.Unix(-5, 0), -1
	unknown := stub("unknown kind", 15, trace.SpanKind(99), resB, instrumentation.Scope{})

	spans := tracetest.SpanStubs{full, unspecified, unknown, internal, server, producer, consumer}.Snapshots()
	exp := newExporter(c.URL+"/v1/traces", "driftd/test", exportTimeout)
	defer exp.Shutdown(context.Background())
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}

	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	boolean := func(b bool) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
	}
	integer := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	double := func(f float64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
	}
	array := func(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	kvlist := func(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}}
	}
	tid, sid := traceID(1), spanID(1)
	wantFull := &tracepb.Span{
		TraceId: tid[:], SpanId: sid[:], TraceState: "a=1,b=2", ParentSpanId: []byte{9, 1, 2, 3, 4, 5, 6, 9},
		Flags: 0x301, Name: "full\uFFFD", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: 1_700_000_000_123_456_789, EndTimeUnixNano: 1_700_000_002_123_456_789,
		Attributes: []*commonpb.KeyValue{
			kv("bool", boolean(true)),
			kv("false", boolean(false)),
			kv("int", integer(-42)),
			kv("zero", integer(0)),
			kv("float", double(-0.5)),
			kv("string", str("héllo")),
			kv("empty", str("")),
			kv("bad\uFFFD", str("x\uFFFDy\uFFFD")),
			kv("bools", array(boolean(true), boolean(false))),
			kv("ints", array(integer(1), integer(-1), integer(math.MaxInt64))),
			kv("floats", array(double(1.5), double(-2))),
			kv("strings", array(str("a"), str(""))),
			kv("no-strings", array()),
			kv("bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 255}}}),
			kv("mixed", array(integer(1), str("x"), array(boolean(true)), kvlist(kv("k", str("v"))))),
			kv("map", kvlist(kv("k", str("v")), kv("n", integer(7)))),
			kv("unset", &commonpb.AnyValue{}),
		},
		DroppedAttributesCount: 3,
		Events: []*tracepb.Span_Event{
			{TimeUnixNano: 1_700_000_000_124_456_789, Name: "retry", Attributes: []*commonpb.KeyValue{kv("attempt", integer(2))}, DroppedAttributesCount: 1},
			{Name: "no-time"},
		},
		DroppedEventsCount: 4,
		Links: []*tracepb.Span_Link{
			{TraceId: []byte{2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 2}, SpanId: []byte{2, 1, 2, 3, 4, 5, 6, 2},
				TraceState: "v=1", Attributes: []*commonpb.KeyValue{kv("link.kind", str("follows"))}, DroppedAttributesCount: 2, Flags: 0x301},
			{TraceId: []byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 3}, SpanId: []byte{3, 1, 2, 3, 4, 5, 6, 3}, Flags: 0x100},
		},
		DroppedLinksCount: 5,
		Status:            &tracepb.Status{Message: "boom", Code: tracepb.Status_STATUS_CODE_ERROR},
	}
	short := func(name string, sid byte, kind tracepb.Span_SpanKind) *tracepb.Span {
		return &tracepb.Span{TraceId: []byte{4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 4}, SpanId: []byte{sid, 1, 2, 3, 4, 5, 6, sid},
			Name: name, Kind: kind, Flags: 0x100, Status: &tracepb.Status{}}
	}
	wantInternal := short("internal", 11, tracepb.Span_SPAN_KIND_INTERNAL)
	wantInternal.ParentSpanId, wantInternal.Status.Code = []byte{4, 1, 2, 3, 4, 5, 6, 4}, tracepb.Status_STATUS_CODE_OK
	wantProducer := short("producer", 13, tracepb.Span_SPAN_KIND_PRODUCER)
	wantProducer.DroppedAttributesCount = math.MaxUint32
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("host.cpus", integer(2)), kv("service.name", str("driftd"))}},
			ScopeSpans: []*tracepb.ScopeSpans{
				{
					Scope:     &commonpb.InstrumentationScope{Name: "github.com/driftd/driftd", Version: "1.2.3", Attributes: []*commonpb.KeyValue{kv("scope.kind", str("test"))}},
					Spans:     []*tracepb.Span{wantFull, wantInternal, wantProducer, short("consumer", 14, tracepb.Span_SPAN_KIND_CONSUMER)},
					SchemaUrl: schema,
				},
				{
					Scope: &commonpb.InstrumentationScope{Name: "other"},
					Spans: []*tracepb.Span{short("unspecified", 10, tracepb.Span_SPAN_KIND_UNSPECIFIED), short("server", 12, tracepb.Span_SPAN_KIND_SERVER)},
				},
			},
			SchemaUrl: schema,
		},
		{
			Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("b", boolean(true))}},
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{short("unknown kind", 15, tracepb.Span_SPAN_KIND_UNSPECIFIED)}}},
		},
	}}

	got := c.received()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	r := got[0]
	if r.path != "/v1/traces" || r.contentType != "application/x-protobuf" || r.userAgent != "driftd/test" {
		t.Errorf("request to %q as %q by %q", r.path, r.contentType, r.userAgent)
	}
	compare(t, r.req, want)
	// Beyond decoding the same: zero scalars are left out and fields come
	// in number order, so the bytes are protobuf-go's own encoding.
	if canonical, err := proto.Marshal(want); err != nil || !bytes.Equal(r.body, canonical) {
		t.Errorf("body is not protobuf-go's encoding of the same request (%v)\n got %x\nwant %x", err, r.body, canonical)
	}
}

// compare reports every resource, scope and span of got that differs from
// want, each printed whole.
func compare(t *testing.T, got, want *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	if len(got.ResourceSpans) != len(want.ResourceSpans) {
		t.Fatalf("%d resource spans, want %d:\n%s", len(got.ResourceSpans), len(want.ResourceSpans), prototext.Format(got))
	}
	differ := func(what string, g, w proto.Message) {
		if !proto.Equal(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", what, prototext.Format(g), prototext.Format(w))
		}
	}
	for i, wrs := range want.ResourceSpans {
		grs := got.ResourceSpans[i]
		differ("resource", grs.Resource, wrs.Resource)
		if grs.SchemaUrl != wrs.SchemaUrl || len(grs.ScopeSpans) != len(wrs.ScopeSpans) {
			t.Fatalf("resource %d: schema %q, %d scopes; want %q, %d", i, grs.SchemaUrl, len(grs.ScopeSpans), wrs.SchemaUrl, len(wrs.ScopeSpans))
		}
		for j, wss := range wrs.ScopeSpans {
			gss := grs.ScopeSpans[j]
			differ("scope", gss.Scope, wss.Scope)
			if gss.SchemaUrl != wss.SchemaUrl || len(gss.Spans) != len(wss.Spans) {
				t.Fatalf("scope %q: schema %q, %d spans; want %q, %d", wss.Scope.GetName(), gss.SchemaUrl, len(gss.Spans), wss.SchemaUrl, len(wss.Spans))
			}
			for k, ws := range wss.Spans {
				differ("span "+ws.Name, gss.Spans[k], ws)
			}
		}
	}
}

// TestExportFromSDK exports spans the SDK itself recorded through New: the
// resource and scope driftd sets, parents, and the remote-parent flags.
func TestExportFromSDK(t *testing.T) {
	c := newCollector(t, nil)
	var errs errorLog
	p, err := New(c.URL, "test", errs.add)
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(7), SpanID: spanID(7), TraceFlags: trace.FlagsSampled, Remote: true})
	ctx, parent := p.Tracer().Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "parent",
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attribute.String("k", "v")))
	_, child := p.Tracer().Start(ctx, "child")
	child.End()
	parent.End()
	shutdown(t, p)
	if e := errs.all(); len(e) != 0 {
		t.Fatalf("export errors: %v", e)
	}

	byName := map[string]*tracepb.Span{}
	for _, r := range c.received() {
		if r.path != "/v1/traces" || r.userAgent != "driftd/test" {
			t.Errorf("request to %q by %q", r.path, r.userAgent)
		}
		for _, rs := range r.req.ResourceSpans {
			wantRes := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
				{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "driftd"}}},
				{Key: "service.version", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "test"}}},
			}}
			if !proto.Equal(rs.Resource, wantRes) {
				t.Errorf("resource %s", prototext.Format(rs.Resource))
			}
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.GetName() != "github.com/driftd/driftd" {
					t.Errorf("scope %q", ss.Scope.GetName())
				}
				for _, s := range ss.Spans {
					byName[s.Name] = s
				}
			}
		}
	}
	ps, cs := byName["parent"], byName["child"]
	if ps == nil || cs == nil {
		t.Fatalf("spans exported: %v", byName)
	}
	rtid, rsid := remote.TraceID(), remote.SpanID()
	if !bytes.Equal(ps.TraceId, rtid[:]) || !bytes.Equal(ps.ParentSpanId, rsid[:]) || ps.Flags != 0x301 || ps.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("parent: %s", prototext.Format(ps))
	}
	if !bytes.Equal(cs.TraceId, rtid[:]) || !bytes.Equal(cs.ParentSpanId, ps.SpanId) || cs.Flags != 0x101 || cs.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("child: %s", prototext.Format(cs))
	}
	if ps.StartTimeUnixNano == 0 || ps.EndTimeUnixNano < ps.StartTimeUnixNano || len(ps.Attributes) != 1 {
		t.Errorf("parent times or attributes: %s", prototext.Format(ps))
	}
}

// TestNewEndpoint: the request goes to the endpoint's scheme, host and
// path (/v1/traces when it has none), never with its user info or query.
func TestNewEndpoint(t *testing.T) {
	c := newCollector(t, nil)
	host := strings.TrimPrefix(c.URL, "http://")
	for _, tc := range []struct{ endpoint, path string }{
		{c.URL, "/v1/traces"},
		{c.URL + "/", "/v1/traces"},
		{c.URL + "/otlp/v1/traces", "/otlp/v1/traces"},
		{"http://user:pass@" + host + "/?token=x", "/v1/traces"},
	} {
		p, err := New(tc.endpoint, "test", func(err error) { t.Errorf("%s: %v", tc.endpoint, err) })
		if err != nil {
			t.Fatal(err)
		}
		if p.Endpoint() != tc.endpoint {
			t.Errorf("Endpoint() = %q, want %q", p.Endpoint(), tc.endpoint)
		}
		oneSpan(t, p)
		got := c.received()
		r := got[len(got)-1]
		if r.path != tc.path || r.query != "" || r.authorization != "" {
			t.Errorf("%s: sent to %q?%q with Authorization %q", tc.endpoint, r.path, r.query, r.authorization)
		}
	}
	for _, bad := range []string{"localhost:4318", "ftp://collector:4318", "http://", "http://[::1"} {
		if _, err := New(bad, "test", nil); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

// TestExportFailures: each way an export fails is reported once through
// onExportError, and its text names the status, never what the collector
// wrote.
func TestExportFailures(t *testing.T) {
	const marker = "COLLECTOR-SAYS-d41d8cd9"
	partial := func(rejected int64) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
				RejectedSpans: rejected, ErrorMessage: marker}})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(b)
		}
	}
	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		want   string // in the one error; "" for none
	}{
		{"1 MiB body", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write(bytes.Repeat([]byte(marker+"\n"), (1<<20)/(len(marker)+1)))
		}, "collector answered 503 Service Unavailable"},
		{"reason phrase", func(w http.ResponseWriter, _ *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 418 " + strings.Repeat(marker, 100) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			buf.Flush()
		}, "collector answered 418 I'm a teapot"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/"+marker, http.StatusTemporaryRedirect)
		}, "collector answered 307 Temporary Redirect"},
		{"spans rejected", partial(1), "collector rejected 1 of 1 spans"},
		{"warning only", partial(0), ""},
		{"unreadable 2xx body", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write([]byte{0xff, 0xff, 0xff})
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t, tc.answer)
			var errs errorLog
			p, err := New(c.URL, "test", errs.add)
			if err != nil {
				t.Fatal(err)
			}
			oneSpan(t, p)
			got := errs.all()
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("errors %v, want none", got)
			case tc.want == "":
				return
			case len(got) != 1:
				t.Fatalf("%d errors %v, want 1", len(got), got)
			}
			msg := got[0].Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, marker) || len(msg) > 200 {
				t.Errorf("error %.300q: want %q, without the collector's words, under 200 bytes", msg, tc.want)
			}
		})
	}
}

// hanging is a collector that accepts each request and never answers it.
func hanging(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

// TestExportTimeout: a collector that never answers costs one export
// exportTimeout, then a reported error; the bound allows a second of slack
// for a loaded machine.
func TestExportTimeout(t *testing.T) {
	t.Parallel()
	srv := hanging(t)
	var errs errorLog
	p, err := New(srv.URL, "test", errs.add)
	if err != nil {
		t.Fatal(err)
	}
	_, s := p.Tracer().Start(context.Background(), "lost")
	s.End()
	start := time.Now()
	shutdown(t, p)
	if took := time.Since(start); took > exportTimeout+time.Second {
		t.Errorf("export took %v, want at most %v", took, exportTimeout+time.Second)
	}
	// The SDK's own export deadline (the same exportTimeout) may fire
	// first, with its own cause.
	if got := errs.all(); len(got) != 1 || !errors.Is(got[0], context.DeadlineExceeded) && !strings.Contains(got[0].Error(), "timeout") {
		t.Errorf("errors %v, want one timeout", got)
	}
}

// TestShutdown: Shutdown cancels an export in flight, and every export
// after it fails without a request.
func TestShutdown(t *testing.T) {
	t.Parallel()
	srv := hanging(t)
	exp := newExporter(srv.URL+"/v1/traces", "driftd/test", time.Hour)
	spans := tracetest.SpanStubs{{Name: "s"}}.Snapshots()
	done := make(chan error, 1)
	go func() { done <- exp.ExportSpans(context.Background(), spans) }()
	// Shut down once the request is surely sent or about to be: either
	// way the export must end with errShutdown.
	time.Sleep(50 * time.Millisecond)
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errShutdown) {
			t.Errorf("export in flight: %v, want errShutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Shutdown did not cancel the export in flight")
	}
	c := newCollector(t, nil)
	exp = newExporter(c.URL+"/v1/traces", "driftd/test", time.Hour)
	exp.Shutdown(context.Background())
	if err := exp.ExportSpans(context.Background(), spans); !errors.Is(err, errShutdown) {
		t.Errorf("export after Shutdown: %v, want errShutdown", err)
	}
	if n := len(c.received()); n != 0 {
		t.Errorf("%d requests after Shutdown", n)
	}
}

// TestConcurrentExports: exports from many goroutines each arrive whole.
func TestConcurrentExports(t *testing.T) {
	t.Parallel()
	c := newCollector(t, nil)
	exp := newExporter(c.URL+"/v1/traces", "driftd/test", exportTimeout)
	defer exp.Shutdown(context.Background())
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			spans := tracetest.SpanStubs{{Name: "a"}, {Name: "b", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{SpanID: spanID(byte(i))})}}.Snapshots()
			if err := exp.ExportSpans(context.Background(), spans); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := c.received()
	seen := map[byte]bool{}
	for _, r := range got {
		spans := r.req.ResourceSpans[0].ScopeSpans[0].Spans
		if len(spans) != 2 || spans[0].Name != "a" || spans[1].Name != "b" {
			t.Fatalf("request %s", prototext.Format(r.req))
		}
		seen[spans[1].SpanId[0]] = true
	}
	if len(got) != n || len(seen) != n {
		t.Errorf("%d requests, %d distinct, want %d", len(got), len(seen), n)
	}
}
