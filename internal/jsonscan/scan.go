// Package jsonscan is driftd's one byte-level JSON scanner: skipping a
// value, the members of an object, the nesting depth, a full parse into
// the values encoding/json produces, and an Index that locates every value
// in one pass without decoding it. It exists because tool definitions and
// schemas are read on every run of every target, where encoding/json's
// reflection costs most of a probe's CPU; everything here is checked
// against encoding/json (the Index against Parse) by fuzzing.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipValue returns the index just past the JSON value starting at i. It
// does not validate: on malformed input it stops somewhere at or before
// len(b).
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !isSpace(b[i]) {
		i++
	}
	return i
}

// Compact appends src, which must be valid JSON, to dst without its
// insignificant whitespace: what encoding/json.Compact appends for valid
// input (it escapes nothing), in one pass that skips over strings eight
// bytes at a time. Manifests are written indented, and compacting their
// schemas makes a served schema in the same key order byte-identical.
func Compact(dst, src []byte) []byte {
	for i := 0; ; {
		j := nextSpace(src, i)
		dst = append(dst, src[i:j]...)
		if j == len(src) {
			return dst
		}
		i = SkipSpace(src, j)
	}
}

// IsCompact reports whether Compact would return b unchanged: it has no
// whitespace outside its strings.
func IsCompact(b []byte) bool { return nextSpace(b, 0) == len(b) }

// nextSpace returns the index of the first whitespace at or after i that
// is outside a string, or len(b); i must not be inside a string.
func nextSpace(b []byte, i int) int {
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			i = skipString(b, i)
		case isSpace(c):
			return i
		default:
			i++
		}
	}
	return len(b)
}

// skipString returns the index just past the string whose opening quote is
// at i, or len(b) when it does not close; it does not validate.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		if i = plainRun(b, i); i >= len(b) {
			break
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// Unquote returns the Go string of the JSON string literal s, as
// encoding/json decodes it; s must be valid JSON. A literal without escapes
// and of valid UTF-8 is its own bytes, the common case, read without
// encoding/json; the rest (escapes, and invalid UTF-8, which encoding/json
// replaces with U+FFFD) goes through encoding/json.
func Unquote(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	body := s[1 : len(s)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	var out string
	if json.Unmarshal(s, &out) != nil {
		return "", false
	}
	return out, true
}

// Member returns the raw value of the member of object b named exactly
// key, the last one when the key repeats (as encoding/json reads
// duplicates); ok is false when there is none or b is not an object. b
// must be valid JSON. Unlike Members it allocates nothing.
func Member(b []byte, key string) (v json.RawMessage, ok bool) {
	EachMember(b, func(k, value []byte) {
		if KeyIs(k, key) {
			v, ok = value, true
		}
	})
	return v, ok
}

// KeyIs reports whether the JSON string literal lit (quotes included)
// decodes to key.
func KeyIs(lit []byte, key string) bool {
	if len(lit) == len(key)+2 && string(lit[1:len(lit)-1]) == key {
		return true
	}
	if bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		return false // the bytes are the key, and they differ
	}
	k, ok := Unquote(lit)
	return ok && k == key
}

// Members maps the members of the JSON object b to their raw values; the
// last duplicate wins, as in encoding/json. It reports false when b is not
// an object. Values are located, not decoded, so a tool's schemas cost one
// pass over their bytes. b must be valid JSON.
func Members(b []byte) (map[string]json.RawMessage, bool) {
	out := make(map[string]json.RawMessage, 8)
	keysOK := true
	if !EachMember(b, func(k, v []byte) {
		key, ok := Unquote(k)
		keysOK = keysOK && ok
		out[key] = json.RawMessage(v)
	}) || !keysOK {
		return nil, false
	}
	return out, true
}

// EachMember calls f with each member of the JSON object b in order: its
// key as written (a string literal, quotes included) and its raw value. It
// reports false, having called f for the members before the fault, when b
// is not an object or ends early. b must be valid JSON; nothing is
// allocated or decoded.
func EachMember(b []byte, f func(key, value []byte)) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = SkipValue(b, i)
		ke := i
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = SkipSpace(b, i+1)
		vs := i
		i = SkipValue(b, i)
		f(b[ks:ke], b[vs:i])
		i = SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
	}
	return i < len(b)
}

// Depth returns the deepest nesting of objects and arrays in the JSON text
// b, without decoding it, so a bound can be enforced before anything
// recursive runs. Malformed input yields a best-effort count.
func Depth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// ExactKeys reports whether every key of members that encoding/json would
// match to one of fields — it matches struct fields case-insensitively —
// is spelled exactly as that field. A fast path that reads members by
// their exact names must step aside when it is not.
func ExactKeys(members map[string]json.RawMessage, fields ...string) bool {
	for k := range members {
		for _, f := range fields {
			if k != f && strings.EqualFold(k, f) {
				return false
			}
		}
	}
	return true
}
