// Package jsonscan is driftd's one byte-level JSON scanner: skipping a
// value, the members of an object, the nesting depth, a full parse into
// the values encoding/json produces, and an Index that locates every value
// in one pass without decoding it. It exists because tool definitions and
// schemas are read on every run of every target, where encoding/json's
// reflection costs most of a probe's CPU; everything here is checked
// against encoding/json (the Index against Parse) by fuzzing.
package jsonscan

import (
	"encoding/json"
	"strings"
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

// skipString returns the index just past the string whose opening quote is
// at i, or len(b) when it is not closed.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// Members maps the members of the JSON object b to their raw values; the
// last duplicate wins, as in encoding/json. It reports false when b is not
// an object. Values are located, not decoded, so a tool's schemas cost one
// pass over their bytes. b must be valid JSON.
func Members(b []byte) (map[string]json.RawMessage, bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	out := make(map[string]json.RawMessage, 8)
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = SkipValue(b, i)
		var key string
		if json.Unmarshal(b[ks:i], &key) != nil {
			return nil, false
		}
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = SkipSpace(b, i+1)
		vs := i
		i = SkipValue(b, i)
		out[key] = json.RawMessage(b[vs:i])
		i = SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
	}
	return out, i < len(b)
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
