package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Decode decodes exactly one JSON value with encoding/json (UseNumber):
// map[string]any, []any, json.Number, string, bool and nil. A value nested
// more than maxDepth levels below the top is ErrTooDeep (measured on the
// decoded value; encoding/json itself refuses nesting past 10,000), and
// anything else encoding/json rejects, trailing data included, is
// ErrSyntax.
func Decode(b []byte, maxDepth int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth") {
			return nil, ErrTooDeep
		}
		return nil, ErrSyntax
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrSyntax
	}
	if tooDeep(v, maxDepth) {
		return nil, ErrTooDeep
	}
	return v, nil
}

// tooDeep reports whether a decoded value nests more than limit levels
// below v.
func tooDeep(v any, limit int) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if limit == 0 || tooDeep(e, limit-1) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if limit == 0 || tooDeep(e, limit-1) {
				return true
			}
		}
	}
	return false
}

// Depth returns the deepest nesting of objects and arrays in b (0 for a
// scalar, 1 for {} and {"a":1}, 2 for [[]]), as encoding/json decodes it;
// -1 when b is not one JSON value.
func Depth(b []byte) int {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return -1
	}
	return depth(v)
}

func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, depth(e))
		}
	case []any:
		for _, e := range v {
			d = max(d, depth(e))
		}
	default:
		return 0
	}
	return d + 1
}
