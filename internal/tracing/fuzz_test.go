package tracing

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// FuzzEncode: whatever a span carries, the generated OTLP types decode the
// request, and read back what was recorded (strings as valid UTF-8).
func FuzzEncode(f *testing.F) {
	f.Add("tools/call x", "k", "v", int64(-1), 0.5, byte(1), true)
	f.Add("", "", "\xff\xc3", int64(math.MinInt64), math.Inf(-1), byte(0), false)
	f.Fuzz(func(t *testing.T, name, key, value string, i int64, fl float64, flags byte, remote bool) {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(1), SpanID: spanID(1), TraceFlags: trace.TraceFlags(flags)})
		parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID(1), SpanID: spanID(2), Remote: remote})
		spans := tracetest.SpanStubs{{Name: name, SpanContext: sc, Parent: parent, Attributes: []attribute.KeyValue{
			attribute.String(key, value), attribute.Int64("i", i), attribute.Float64("f", fl),
			attribute.StringSlice("s", []string{value, name}), attribute.ByteSlice("b", []byte(value)),
		}}}.Snapshots()
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(encodeRequest(spans), &req); err != nil {
			t.Fatal(err)
		}
		s := req.ResourceSpans[0].ScopeSpans[0].Spans[0]
		valid := func(s string) string { return strings.ToValidUTF8(s, string(utf8.RuneError)) }
		a := s.Attributes
		wantFlags := uint32(flags) | 0x100
		if remote {
			wantFlags |= 0x200
		}
		switch {
		case s.Name != valid(name), s.Flags != wantFlags, len(a) != 5:
			t.Fatalf("span %v", s)
		case a[0].Key != valid(key) || a[0].Value.GetStringValue() != valid(value):
			t.Errorf("string attribute %v", a[0])
		case a[1].Value.GetIntValue() != i:
			t.Errorf("int attribute %v", a[1])
		case math.Float64bits(a[2].Value.GetDoubleValue()) != math.Float64bits(fl):
			t.Errorf("float attribute %v", a[2])
		case a[3].Value.GetArrayValue().GetValues()[1].GetStringValue() != valid(name):
			t.Errorf("slice attribute %v", a[3])
		case string(a[4].Value.GetBytesValue()) != value:
			t.Errorf("bytes attribute %v", a[4])
		}
	})
}

// FuzzRejectedSpans: rejectedSpans reads any response protobuf-go can
// decode as protobuf-go does.
func FuzzRejectedSpans(f *testing.F) {
	for _, resp := range []*coltracepb.ExportTraceServiceResponse{
		{},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "dropped"}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{ErrorMessage: "a warning"}},
	} {
		b, _ := proto.Marshal(resp)
		f.Add(b)
		f.Add(append(b, b...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var resp coltracepb.ExportTraceServiceResponse
		if proto.Unmarshal(b, &resp) != nil {
			rejectedSpans(b) // must not panic
			return
		}
		if got, want := rejectedSpans(b), resp.GetPartialSuccess().GetRejectedSpans(); got != want {
			t.Errorf("rejectedSpans(%x) = %d, protobuf-go reads %d", b, got, want)
		}
	})
}
