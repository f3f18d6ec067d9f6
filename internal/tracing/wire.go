package tracing

// Protobuf wire helpers over protowire, which writes tags and scalars but
// no messages: an embedded message's length comes before its fields.

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// appendMessage appends field num holding the embedded message whose fields
// fn appends for v. The fields are written first and then moved up to make
// room for their length, which saves encoding every message twice (once to
// size it) at the cost of a copy per level of nesting.
func appendMessage[T any](b []byte, num protowire.Number, v T, fn func([]byte, T) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	start := len(b)
	b = fn(b, v)
	n := uint64(len(b) - start)
	w := protowire.SizeVarint(n)
	b = append(b, make([]byte, w)...)
	copy(b[start+w:], b[start:len(b)-w])
	protowire.AppendVarint(b[:start], n)
	return b
}

// appendString appends field num unless s is empty.
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, validUTF8(s))
}

// validUTF8 is s with each invalid byte sequence replaced by U+FFFD. A
// proto3 string must be UTF-8, and decoders (protobuf-go's among them)
// reject the whole request otherwise; span names and attributes can carry
// what a server sent, which is anything.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// appendBytes appends field num unless v is empty.
func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendVarint appends field num unless v is 0.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendFixed32 appends field num unless v is 0.
func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// appendFixed64 appends field num unless v is 0.
func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}
