package schema

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Bounds of the schema diff: how deep it walks and how many $refs it
// follows for one pair of schemas. A pair beyond them is CHG-UNCOMPARABLE.
const (
	maxDiffDepth      = MaxDepth
	maxRefExpansions  = 10_000
	maxCanonicalBytes = 4 << 20
)

// doc is one decoded schema document, for resolving its local $refs while
// generating and validating.
type doc struct {
	root any
}

// node is a schema value and its location in its document (RFC 6901).
type node struct {
	v   val
	loc string
}

// schemaKeywords hold one schema; arrayKeywords and mapKeywords hold
// arrays and maps of schemas. The rest hold plain values.
var (
	schemaKeywords = set("items", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "contentSchema")
	arrayKeywords     = set("allOf", "anyOf", "oneOf", "prefixItems")
	unorderedKeywords = set("allOf", "anyOf", "oneOf")
	mapKeywords       = set("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
	// ignoredKeywords never change what a schema accepts.
	ignoredKeywords = set("title", "description", "examples", "$comment", "$id", "$schema", "$anchor",
		"$dynamicAnchor", "$defs", "definitions", "default", "deprecated", "readOnly", "writeOnly", "$vocabulary")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// lookup resolves a local JSON pointer ("" is the root) in d.
func (d *doc) lookup(ptr string) (any, bool) { return Lookup(d.root, ptr) }

// Lookup resolves an RFC 6901 pointer ("" is the root) in a decoded JSON
// value.
func Lookup(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		if strings.Contains(tok, "~") {
			tok = jsonscan.UnescapeToken(tok)
		}
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// canonicalizer renders schemas to a normal form in which semantically
// equal schemas (key order, required/enum/type order, $ref versus inline,
// true versus {}) are byte-equal.
type canonicalizer struct {
	d       *tree
	budget  *int // shared $ref expansion budget
	failed  bool // a bound was hit or a $ref could not be resolved
	refPath map[string]bool
}

func (c *canonicalizer) schema(v val, depth int, b *bytes.Buffer) {
	if depth > maxDiffDepth || b.Len() > maxCanonicalBytes {
		c.failed = true
		b.WriteString(`"…"`)
		return
	}
	switch v.kind() {
	case jsonscan.True:
		b.WriteString("{}")
		return
	case jsonscan.False:
		b.WriteString(`{"not":{}}`)
		return
	case jsonscan.Object:
		if ref, ok := v.get("$ref"); ok && ref.kind() == jsonscan.String && onlyAnnotationsBeside(v) {
			r, _ := ref.str()
			c.ref(r, depth, b)
			return
		}
		b.WriteByte('{')
		first := true
		for _, j := range v.members() {
			k := v.t.key(j)
			if ignoredKeywords[string(k)] {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.Write(strconv.AppendQuote(b.AvailableBuffer(), string(k)))
			b.WriteByte(':')
			c.keyword(string(k), val{v.t, j}, depth, b)
		}
		b.WriteByte('}')
		return
	}
	c.value(v, b)
}

func (c *canonicalizer) keyword(k string, v val, depth int, b *bytes.Buffer) {
	switch {
	case k == "$ref":
		ref, _ := v.str()
		c.ref(ref, depth, b)
	case schemaKeywords[k]:
		c.schema(v, depth+1, b)
	case arrayKeywords[k]:
		if !v.isArray() {
			c.value(v, b)
			return
		}
		parts := make([]string, 0, v.len())
		for j, end := v.span(); j < end; j = v.t.next(j) {
			var eb bytes.Buffer
			c.schema(val{v.t, j}, depth+1, &eb)
			parts = append(parts, eb.String())
		}
		if unorderedKeywords[k] {
			slices.Sort(parts)
		}
		b.WriteString("[" + strings.Join(parts, ",") + "]")
	case mapKeywords[k]:
		if !v.isObject() {
			c.value(v, b)
			return
		}
		b.WriteByte('{')
		for i, j := range v.members() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(strconv.AppendQuote(b.AvailableBuffer(), string(v.t.key(j))))
			b.WriteByte(':')
			c.schema(val{v.t, j}, depth+1, b)
		}
		b.WriteByte('}')
	case k == "type":
		var buf [8]string
		b.WriteString(strings.Join(quoteAll(typeOf(v, buf[:0])), ","))
	case k == "required" || k == "enum":
		if !v.isArray() {
			c.value(v, b)
			return
		}
		parts := make([]string, 0, v.len())
		for j, end := v.span(); j < end; j = v.t.next(j) {
			parts = append(parts, canon(val{v.t, j}))
		}
		slices.Sort(parts)
		b.WriteString("[" + strings.Join(slices.Compact(parts), ",") + "]")
	default:
		c.value(v, b)
	}
}

// ref renders the target of a local $ref in place; a cycle renders as a
// marker of the target's location, a remote or broken $ref fails.
func (c *canonicalizer) ref(ref string, depth int, b *bytes.Buffer) {
	*c.budget--
	if *c.budget < 0 || !strings.HasPrefix(ref, "#") {
		c.failed = true
		b.WriteString(`{"$ref":` + strconv.Quote(ref) + `}`)
		return
	}
	loc := ref[1:]
	target, ok := c.d.lookup(loc)
	if !ok {
		c.failed = true
		b.WriteString(`{"$ref":` + strconv.Quote(ref) + `}`)
		return
	}
	if c.refPath == nil {
		c.refPath = map[string]bool{}
	}
	if c.refPath[loc] {
		b.WriteString(`{"$cycle":` + strconv.Quote(loc) + `}`)
		return
	}
	c.refPath[loc] = true
	c.schema(target, depth+1, b)
	delete(c.refPath, loc)
}

func (c *canonicalizer) value(v val, b *bytes.Buffer) { b.Write(appendCanon(b.AvailableBuffer(), v)) }

// canon renders a value as canonValue renders the same value decoded.
func canon(v val) string { return string(appendCanon(nil, v)) }

// sameValue reports whether a and b render the same canonical text; equal
// values need no rendering.
func sameValue(a, b val) bool { return equal(a, b, 0) || canon(a) == canon(b) }

func appendCanon(dst []byte, v val) []byte {
	switch v.kind() {
	case jsonscan.Number:
		if r, ok := new(big.Rat).SetString(string(v.number())); ok {
			return append(dst, r.RatString()...)
		}
		return append(dst, v.number()...)
	case jsonscan.Object:
		dst = append(dst, '{')
		for i, j := range v.members() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendQuote(dst, string(v.t.key(j)))
			dst = append(dst, ':')
			dst = appendCanon(dst, val{v.t, j})
		}
		return append(dst, '}')
	case jsonscan.Array:
		dst = append(dst, '[')
		for j, end := v.span(); j < end; j = v.t.next(j) {
			if j > v.i+1 {
				dst = append(dst, ',')
			}
			dst = appendCanon(dst, val{v.t, j})
		}
		return append(dst, ']')
	case jsonscan.String:
		return strconv.AppendQuote(dst, string(v.text()))
	case jsonscan.True:
		return append(dst, "true"...)
	case jsonscan.False:
		return append(dst, "false"...)
	}
	return append(dst, "null"...)
}

// canonValue renders a JSON value with sorted keys and normalised numbers.
func canonValue(v any) string {
	switch x := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok {
			return r.RatString()
		}
		return string(x)
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, strconv.Quote(k)+":"+canonValue(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canonValue(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	}
	return "?"
}

// onlyAnnotationsBeside reports whether a $ref object has nothing beside
// $ref that constrains instances, so it can stand for its target.
func onlyAnnotationsBeside(m val) bool {
	for j, end := m.span(); j < end; j = m.t.next(j) {
		if k := m.t.key(j); string(k) != "$ref" && !ignoredKeywords[string(k)] {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// typeList returns a schema's "type" as a sorted list; nil means any type.
func typeList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return nil
}

// typeOf is typeList for a tree value, built in buf (empty, not nil): nil
// means any type, a list (if empty) what the schema lists.
func typeOf(v val, buf []string) []string {
	switch v.kind() {
	case jsonscan.String:
		return append(buf, typeName(v.text()))
	case jsonscan.Array:
		out := buf
		for j, end := v.span(); j < end; j = v.t.next(j) {
			if e := (val{v.t, j}); e.kind() == jsonscan.String {
				out = append(out, typeName(e.text()))
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return nil
}

// typeName returns a type's name, without a copy for the usual ones.
func typeName(b []byte) string {
	for _, t := range [...]string{"string", "object", "integer", "number", "boolean", "array", "null"} {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}

// number returns a decoded number as a rational.
func number(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(string(n))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
