package schema

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Bounds of the schema diff: how deep it walks and how many $refs it
// follows for one pair of schemas. A pair beyond them is CHG-UNCOMPARABLE.
const (
	maxDiffDepth      = MaxDepth
	maxRefExpansions  = 10_000
	maxCanonicalBytes = 4 << 20
)

// doc is one schema document being compared, for resolving its local $refs.
type doc struct {
	root any
}

// node is a schema value and its location in its document (RFC 6901).
type node struct {
	v   any
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
func (d *doc) lookup(ptr string) (any, bool) {
	v := d.root
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		if strings.Contains(tok, "~") {
			tok = unescaper.Replace(tok)
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

var (
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// escapeToken escapes one RFC 6901 reference token.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return escaper.Replace(s)
}

// canonicalizer renders schemas to a normal form in which semantically
// equal schemas (key order, required/enum/type order, $ref versus inline,
// true versus {}) are byte-equal.
type canonicalizer struct {
	d       *doc
	budget  *int // shared $ref expansion budget
	failed  bool // a bound was hit or a $ref could not be resolved
	refPath map[string]bool
}

func (c *canonicalizer) schema(v any, depth int, b *strings.Builder) {
	if depth > maxDiffDepth || b.Len() > maxCanonicalBytes {
		c.failed = true
		b.WriteString(`"…"`)
		return
	}
	switch s := v.(type) {
	case bool:
		if s {
			b.WriteString("{}")
		} else {
			b.WriteString(`{"not":{}}`)
		}
		return
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok && onlyAnnotationsBeside(s) {
			c.ref(ref, depth, b)
			return
		}
		keys := make([]string, 0, len(s))
		for k := range s {
			if !ignoredKeywords[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			c.keyword(k, s[k], depth, b)
		}
		b.WriteByte('}')
		return
	}
	c.value(v, b)
}

func (c *canonicalizer) keyword(k string, v any, depth int, b *strings.Builder) {
	switch {
	case k == "$ref":
		ref, _ := v.(string)
		c.ref(ref, depth, b)
	case schemaKeywords[k]:
		c.schema(v, depth+1, b)
	case arrayKeywords[k]:
		arr, ok := v.([]any)
		if !ok {
			c.value(v, b)
			return
		}
		parts := render(arr, func(e any) string {
			var eb strings.Builder
			c.schema(e, depth+1, &eb)
			return eb.String()
		})
		if unorderedKeywords[k] {
			slices.Sort(parts)
		}
		b.WriteString("[" + strings.Join(parts, ",") + "]")
	case mapKeywords[k]:
		m, ok := v.(map[string]any)
		if !ok {
			c.value(v, b)
			return
		}
		keys := sortedKeys(m)
		b.WriteByte('{')
		for i, name := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(name) + ":")
			c.schema(m[name], depth+1, b)
		}
		b.WriteByte('}')
	case k == "type":
		b.WriteString(strings.Join(quoteAll(typeList(v)), ","))
	case k == "required" || k == "enum":
		arr, ok := v.([]any)
		if !ok {
			c.value(v, b)
			return
		}
		parts := render(arr, canonValue)
		slices.Sort(parts)
		b.WriteString("[" + strings.Join(slices.Compact(parts), ",") + "]")
	default:
		c.value(v, b)
	}
}

// render renders each element of arr.
func render(arr []any, one func(any) string) []string {
	parts := make([]string, len(arr))
	for i, e := range arr {
		parts[i] = one(e)
	}
	return parts
}

// ref renders the target of a local $ref in place; a cycle renders as a
// marker of the target's location, a remote or broken $ref fails.
func (c *canonicalizer) ref(ref string, depth int, b *strings.Builder) {
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
	if c.refPath[loc] {
		b.WriteString(`{"$cycle":` + strconv.Quote(loc) + `}`)
		return
	}
	c.refPath[loc] = true
	c.schema(target, depth+1, b)
	delete(c.refPath, loc)
}

func (c *canonicalizer) value(v any, b *strings.Builder) { b.WriteString(canonValue(v)) }

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
func onlyAnnotationsBeside(m map[string]any) bool {
	for k := range m {
		if k != "$ref" && !ignoredKeywords[k] {
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

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
