package jsonscan

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrSyntax is returned by Parse for malformed input, ErrTooDeep for input
// nested beyond the caller's bound.
var (
	ErrSyntax  = errors.New("malformed JSON")
	ErrTooDeep = errors.New("JSON nested too deeply")
)

// Parse decodes one JSON value into map[string]any, []any, json.Number,
// string, bool and nil — what encoding/json with UseNumber produces —
// several times faster, because the schema diff decodes every changed
// schema of every tool on every run. A value nested more than maxDepth
// levels below the top is ErrTooDeep (input with Depth(b) <= maxDepth
// always parses), so a hostile document cannot drive the recursion.
func Parse(b []byte, maxDepth int) (any, error) {
	p := jsonParser{b: b, maxDepth: maxDepth}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, ErrSyntax
	}
	return v, nil
}

type jsonParser struct {
	b        []byte
	i        int
	maxDepth int
}

func (p *jsonParser) space() { p.i = SkipSpace(p.b, p.i) }

func (p *jsonParser) value(depth int) (any, error) {
	if depth > p.maxDepth {
		return nil, ErrTooDeep
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, ErrSyntax
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		if v, ok := p.internedValue(); ok {
			return v, nil
		}
		return p.string()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, ErrSyntax
}

func (p *jsonParser) literal(word string) error {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return ErrSyntax
	}
	p.i += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, ErrSyntax
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, ErrSyntax
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v // the last duplicate wins, as in encoding/json
		if done, err := p.next('}'); err != nil {
			return nil, err
		} else if done {
			return m, nil
		}
	}
}

// next reads what follows a member or an element: a comma (more to come)
// or the closing byte (done).
func (p *jsonParser) next(closing byte) (done bool, err error) {
	p.space()
	if p.i >= len(p.b) {
		return false, ErrSyntax
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, nil
	case closing:
		p.i++
		return true, nil
	}
	return false, ErrSyntax
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if done, err := p.next(']'); err != nil {
			return nil, err
		} else if done {
			return a, nil
		}
	}
}

// string reads a JSON string; the common case without escapes is one
// allocation, escapes go through strconv.Unquote.
func (p *jsonParser) string() (string, error) {
	start := p.i
	p.i++ // opening quote
	escaped := false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			raw := p.b[start:p.i]
			if !escaped {
				if !utf8.Valid(raw) {
					return string([]rune(string(raw[1 : len(raw)-1]))), nil
				}
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", ErrSyntax
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", ErrSyntax
		default:
			p.i++
		}
	}
	return "", ErrSyntax
}

func (p *jsonParser) number() (any, error) {
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			p.i++
			continue
		}
		break
	}
	n := string(p.b[start:p.i])
	if _, err := strconv.ParseFloat(n, 64); err != nil && !isRangeErr(err) {
		return nil, ErrSyntax
	}
	if !validNumber(n) {
		return nil, ErrSyntax
	}
	return json.Number(n), nil
}

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

// validNumber checks the JSON number grammar, which is stricter than
// ParseFloat (no leading zeros, no "+", no bare ".").
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// Schema keywords and common values recur in every schema; interning them
// saves an allocation each (and, for values, the interface boxing).
var (
	internKeys = func() map[string]string {
		m := map[string]string{}
		for _, k := range []string{"type", "properties", "required", "description", "title", "items", "enum", "const",
			"default", "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
			"maxLength", "minItems", "maxItems", "uniqueItems", "additionalProperties", "anyOf", "oneOf", "allOf", "not",
			"$ref", "$defs", "definitions", "$schema", "$id", "examples", "multipleOf", "prefixItems", "name",
			"inputSchema", "outputSchema", "annotations", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			m[k] = k
		}
		return m
	}()
	internValues = func() map[string]any {
		m := map[string]any{}
		for _, v := range []string{"string", "object", "integer", "number", "boolean", "array", "null", "date-time", "date", "uri", "email"} {
			m[`"`+v+`"`] = v
		}
		return m
	}()
)

// key reads an object key, interned when it is a common keyword.
func (p *jsonParser) key() (string, error) {
	start := p.i
	s, err := p.string()
	if err != nil {
		return "", err
	}
	if k, ok := internKeys[string(p.b[start+1:p.i-1])]; ok {
		return k, nil
	}
	return s, nil
}

// internedValue returns a pre-boxed common string value at p.i, if any.
func (p *jsonParser) internedValue() (any, bool) {
	end := p.i + 1
	for end < len(p.b) && end-p.i < 12 && p.b[end] != '"' && p.b[end] != '\\' {
		end++
	}
	if end >= len(p.b) || p.b[end] != '"' {
		return nil, false
	}
	v, ok := internValues[string(p.b[p.i:end+1])]
	if ok {
		p.i = end + 1
	}
	return v, ok
}
