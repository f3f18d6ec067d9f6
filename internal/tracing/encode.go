package tracing

// The OTLP trace request is encoded by hand, field by field, from the SDK's
// read-only spans: opentelemetry-proto v1's ExportTraceServiceRequest and
// the trace, common and resource messages it embeds. proto3 rules apply: a
// scalar at its zero value is left out; a message field and a oneof member
// are written whenever they are set, even when empty or zero.

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers, by message, as the .proto files declare them.
const (
	requestResourceSpans protowire.Number = 1 // ExportTraceServiceRequest

	resourceSpansResource   protowire.Number = 1
	resourceSpansScopeSpans protowire.Number = 2
	resourceSpansSchemaURL  protowire.Number = 3

	resourceAttributes protowire.Number = 1

	scopeSpansScope     protowire.Number = 1
	scopeSpansSpans     protowire.Number = 2
	scopeSpansSchemaURL protowire.Number = 3

	scopeName       protowire.Number = 1 // InstrumentationScope
	scopeVersion    protowire.Number = 2
	scopeAttributes protowire.Number = 3

	spanTraceID           protowire.Number = 1
	spanSpanID            protowire.Number = 2
	spanTraceState        protowire.Number = 3
	spanParentSpanID      protowire.Number = 4
	spanName              protowire.Number = 5
	spanKind              protowire.Number = 6
	spanStart             protowire.Number = 7
	spanEnd               protowire.Number = 8
	spanAttributes        protowire.Number = 9
	spanDroppedAttributes protowire.Number = 10
	spanEvents            protowire.Number = 11
	spanDroppedEvents     protowire.Number = 12
	spanLinks             protowire.Number = 13
	spanDroppedLinks      protowire.Number = 14
	spanStatus            protowire.Number = 15
	spanFlags             protowire.Number = 16

	eventTime              protowire.Number = 1
	eventName              protowire.Number = 2
	eventAttributes        protowire.Number = 3
	eventDroppedAttributes protowire.Number = 4

	linkTraceID           protowire.Number = 1
	linkSpanID            protowire.Number = 2
	linkTraceState        protowire.Number = 3
	linkAttributes        protowire.Number = 4
	linkDroppedAttributes protowire.Number = 5
	linkFlags             protowire.Number = 6

	statusMessage protowire.Number = 2
	statusCode    protowire.Number = 3

	keyValueKey   protowire.Number = 1
	keyValueValue protowire.Number = 2

	anyString protowire.Number = 1 // AnyValue's oneof
	anyBool   protowire.Number = 2
	anyInt    protowire.Number = 3
	anyDouble protowire.Number = 4
	anyArray  protowire.Number = 5
	anyKVList protowire.Number = 6
	anyBytes  protowire.Number = 7

	listValues protowire.Number = 1 // ArrayValue and KeyValueList
)

// Span.flags: the W3C trace flags in the low 8 bits, then whether the
// parent's (or a link's) remoteness is known, and whether it is remote.
const (
	flagsHasIsRemote = 0x100
	flagsIsRemote    = 0x200
)

// Status.code.
const (
	statusUnset = 0
	statusOK    = 1
	statusError = 2
)

// resourceGroup is the spans of one resource, by instrumentation scope.
type resourceGroup struct {
	res    *resource.Resource
	scopes []scopeGroup
}

// scopeGroup is the spans of one instrumentation scope.
type scopeGroup struct {
	scope instrumentation.Scope
	spans []sdktrace.ReadOnlySpan
}

// encodeRequest returns the ExportTraceServiceRequest that carries spans.
func encodeRequest(spans []sdktrace.ReadOnlySpan) []byte {
	var b []byte
	for _, rg := range group(spans) {
		b = appendMessage(b, requestResourceSpans, rg, appendResourceSpans)
	}
	return b
}

// group sorts spans by resource, then by instrumentation scope, each in
// the order it first appears. A batch holds one or two of each, so scopes
// are found by a scan.
func group(spans []sdktrace.ReadOnlySpan) []*resourceGroup {
	var groups []*resourceGroup
	byResource := map[attribute.Distinct]*resourceGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		key := s.Resource().Equivalent()
		rg := byResource[key]
		if rg == nil {
			rg = &resourceGroup{res: s.Resource()}
			byResource[key] = rg
			groups = append(groups, rg)
		}
		scope := s.InstrumentationScope()
		i := 0
		for i < len(rg.scopes) && rg.scopes[i].scope != scope {
			i++
		}
		if i == len(rg.scopes) {
			rg.scopes = append(rg.scopes, scopeGroup{scope: scope})
		}
		rg.scopes[i].spans = append(rg.scopes[i].spans, s)
	}
	return groups
}

func appendResourceSpans(b []byte, rg *resourceGroup) []byte {
	if rg.res != nil {
		b = appendMessage(b, resourceSpansResource, rg.res, appendResource)
	}
	for _, sg := range rg.scopes {
		b = appendMessage(b, resourceSpansScopeSpans, sg, appendScopeSpans)
	}
	return appendString(b, resourceSpansSchemaURL, rg.res.SchemaURL())
}

func appendResource(b []byte, res *resource.Resource) []byte {
	return appendKeyValues(b, resourceAttributes, res.Attributes())
}

func appendScopeSpans(b []byte, sg scopeGroup) []byte {
	// The zero scope is sent as none at all, as the SDK's own exporter does.
	if sg.scope != (instrumentation.Scope{}) {
		b = appendMessage(b, scopeSpansScope, sg.scope, appendScope)
	}
	for _, s := range sg.spans {
		b = appendMessage(b, scopeSpansSpans, s, appendSpan)
	}
	return appendString(b, scopeSpansSchemaURL, sg.scope.SchemaURL)
}

func appendScope(b []byte, scope instrumentation.Scope) []byte {
	b = appendString(b, scopeName, scope.Name)
	b = appendString(b, scopeVersion, scope.Version)
	return appendKeyValues(b, scopeAttributes, scope.Attributes.ToSlice())
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, spanTraceID, tid[:])
	b = appendBytes(b, spanSpanID, sid[:])
	b = appendString(b, spanTraceState, sc.TraceState().String())
	if psid := s.Parent().SpanID(); psid.IsValid() {
		b = appendBytes(b, spanParentSpanID, psid[:])
	}
	b = appendString(b, spanName, s.Name())
	b = appendVarint(b, spanKind, kind(s.SpanKind()))
	b = appendFixed64(b, spanStart, unixNano(s.StartTime()))
	b = appendFixed64(b, spanEnd, unixNano(s.EndTime()))
	b = appendKeyValues(b, spanAttributes, s.Attributes())
	b = appendVarint(b, spanDroppedAttributes, count(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = appendMessage(b, spanEvents, e, appendEvent)
	}
	b = appendVarint(b, spanDroppedEvents, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, spanLinks, l, appendLink)
	}
	b = appendVarint(b, spanDroppedLinks, count(s.DroppedLinks()))
	b = appendMessage(b, spanStatus, s.Status(), appendStatus)
	return appendFixed32(b, spanFlags, flags(sc.TraceFlags(), s.Parent()))
}

func appendEvent(b []byte, e sdktrace.Event) []byte {
	b = appendFixed64(b, eventTime, unixNano(e.Time))
	b = appendString(b, eventName, e.Name)
	b = appendKeyValues(b, eventAttributes, e.Attributes)
	return appendVarint(b, eventDroppedAttributes, count(e.DroppedAttributeCount))
}

func appendLink(b []byte, l sdktrace.Link) []byte {
	sc := l.SpanContext
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, linkTraceID, tid[:])
	b = appendBytes(b, linkSpanID, sid[:])
	b = appendString(b, linkTraceState, sc.TraceState().String())
	b = appendKeyValues(b, linkAttributes, l.Attributes)
	b = appendVarint(b, linkDroppedAttributes, count(l.DroppedAttributeCount))
	return appendFixed32(b, linkFlags, flags(sc.TraceFlags(), sc))
}

func appendStatus(b []byte, st sdktrace.Status) []byte {
	code := statusUnset
	switch st.Code {
	case codes.Ok:
		code = statusOK
	case codes.Error:
		code = statusError
	}
	b = appendString(b, statusMessage, st.Description)
	return appendVarint(b, statusCode, uint64(code))
}

// kind is k's Span.SpanKind: the trace API numbers its kinds as OTLP does
// (INTERNAL 1 to CONSUMER 5); anything else is UNSPECIFIED.
func kind(k trace.SpanKind) uint64 {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return 0
	}
	return uint64(k)
}

// flags is Span.flags (or Span.Link.flags) for trace flags tf, with the
// remoteness of sc: the span's parent, or the linked span itself.
func flags(tf trace.TraceFlags, sc trace.SpanContext) uint32 {
	f := uint32(tf) | flagsHasIsRemote
	if sc.IsRemote() {
		f |= flagsIsRemote
	}
	return f
}

// unixNano is t in nanoseconds since the epoch, 0 for earlier or unset.
func unixNano(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano()))
}

// count is a dropped-items count as the uint32 OTLP carries, clamped.
func count(n int) uint64 {
	return uint64(min(max(n, 0), math.MaxUint32))
}

func appendKeyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, num, kv, appendKeyValue)
	}
	return b
}

func appendKeyValue(b []byte, kv attribute.KeyValue) []byte {
	b = appendString(b, keyValueKey, string(kv.Key))
	return appendMessage(b, keyValueValue, kv.Value, appendValue)
}

// appendValue appends v as the fields of an AnyValue. An EMPTY value is an
// AnyValue with no member set; a type this code does not know is sent as
// the string "INVALID", as the SDK's own exporter does.
func appendValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.EMPTY:
		return b
	case attribute.BOOL:
		return appendBoolValue(b, v.AsBool())
	case attribute.INT64:
		return appendIntValue(b, v.AsInt64())
	case attribute.FLOAT64:
		return appendDoubleValue(b, v.AsFloat64())
	case attribute.STRING:
		return appendStringValue(b, v.AsString())
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, anyBytes, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), appendBoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), appendIntValue)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), appendDoubleValue)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), appendStringValue)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), appendValue)
	case attribute.MAP:
		return appendMessage(b, anyKVList, v.AsMap(), func(b []byte, kvs []attribute.KeyValue) []byte {
			return appendKeyValues(b, listValues, kvs)
		})
	default:
		return appendStringValue(b, "INVALID")
	}
}

// appendArray appends vs as an AnyValue's ArrayValue, each element an
// AnyValue whose fields elem appends.
func appendArray[T any](b []byte, vs []T, elem func([]byte, T) []byte) []byte {
	return appendMessage(b, anyArray, vs, func(b []byte, vs []T) []byte {
		for _, v := range vs {
			b = appendMessage(b, listValues, v, elem)
		}
		return b
	})
}

func appendBoolValue(b []byte, v bool) []byte {
	b = protowire.AppendTag(b, anyBool, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(v))
}

func appendIntValue(b []byte, v int64) []byte {
	b = protowire.AppendTag(b, anyInt, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendDoubleValue(b []byte, v float64) []byte {
	b = protowire.AppendTag(b, anyDouble, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

func appendStringValue(b []byte, v string) []byte {
	b = protowire.AppendTag(b, anyString, protowire.BytesType)
	return protowire.AppendString(b, validUTF8(v))
}
