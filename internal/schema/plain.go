package schema

import (
	"bytes"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/driftd/driftd/internal/jsonscan"
)

// plainSchema reports whether raw is a schema the compiler certainly
// accepts, decided from its structure in one pass: a 2020-12 schema object
// built only from the keywords of plainShapes, each of the shape the
// compiler decodes, with patterns that compile, local $refs into its own
// $defs that resolve, and none of what the compiler's JSON decoder refuses
// (duplicate member names, invalid UTF-8, escaped surrogates) or might
// (a number with an exponent, which can leave a float64's range). It
// answers false whenever it is not sure, and Check then compiles the
// schema: false never means invalid. Compiling costs about a millisecond
// per realistic schema, this pass microseconds; the tests hold the two to
// the same answer on a corpus and under fuzzing.
func plainSchema(raw []byte) bool {
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\ud`)) || bytes.Contains(raw, []byte(`\uD`)) {
		return false // the compiler's decoder refuses invalid UTF-8 and unpaired surrogates
	}
	t, err := newTree(raw, nil)
	if err != nil {
		return false
	}
	defer t.release()
	root := t.root()
	if !root.isObject() || !plainValues(t) {
		return false
	}
	if d, ok := root.get("$schema"); ok {
		if s, _ := d.str(); s != "https://json-schema.org/draft/2020-12/schema" {
			return false
		}
	}
	defs, _ := root.get("$defs")
	p := plain{defs: defs}
	return p.schema(root, true)
}

// plainValues reports whether every object of the document has distinct
// member names and every number is written without an exponent.
func plainValues(t *tree) bool {
	for i := range t.ix.Nodes {
		n := &t.ix.Nodes[i]
		switch n.Kind {
		case jsonscan.Object:
			if n.Len > 1 && !distinctKeys(val{t, int32(i)}) {
				return false
			}
		case jsonscan.Number:
			if n.End-n.Start > 30 || bytes.ContainsAny(t.ix.Raw(i), "eE") {
				return false
			}
		}
	}
	return true
}

// distinctKeys reports whether an object's member names are distinct:
// at once when they are in order, as serialisers mostly write them.
func distinctKeys(v val) bool {
	t, n := v.t, &v.t.ix.Nodes[v.i]
	prev := int32(-1)
	for j, end := v.span(); j < end; prev, j = j, t.next(j) {
		if prev >= 0 && bytes.Compare(t.key(prev), t.key(j)) >= 0 {
			return len(v.members()) == int(n.Len)
		}
	}
	return true
}

type plain struct {
	defs val // the root's $defs, which local $refs may name
}

// shape is what a keyword's value must be in a plain schema.
type shape uint8

const (
	isText shape = iota + 1
	isAnyValue
	isBoolean
	isNumber
	isCount
	isSchemaValue
	isSchemaList
	isSchemaMap
	isTypeValue
	isArray
	isDistinctTexts
	isPositive
	isPattern
	isPatternMap
	isRef
	isDefs
	isDialect
)

// plainShapes are the keywords plain schemas may use.
var plainShapes = func() map[string]shape {
	m := map[string]shape{"type": isTypeValue, "enum": isArray, "examples": isArray, "required": isDistinctTexts,
		"multipleOf": isPositive, "pattern": isPattern, "patternProperties": isPatternMap, "$ref": isRef, "$defs": isDefs, "$schema": isDialect}
	for s, words := range map[shape][]string{
		isText:        {"title", "description", "$comment", "format", "contentEncoding", "contentMediaType"},
		isAnyValue:    {"default", "const"},
		isBoolean:     {"deprecated", "readOnly", "writeOnly", "uniqueItems"},
		isNumber:      {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
		isCount:       {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"},
		isSchemaValue: {"additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema"},
		isSchemaList:  {"allOf", "anyOf", "oneOf", "prefixItems"},
		isSchemaMap:   {"properties", "dependentSchemas"},
	} {
		for _, w := range words {
			m[w] = s
		}
	}
	return m
}()

var plainTypes = set("string", "number", "integer", "boolean", "object", "array", "null")

func (p *plain) schema(v val, root bool) bool {
	switch v.kind() {
	case jsonscan.True, jsonscan.False:
		return true
	case jsonscan.Object:
	default:
		return false
	}
	t := v.t
	for j, end := v.span(); j < end; j = t.next(j) {
		k, m := t.key(j), val{t, j}
		if !p.keyword(plainShapes[string(k)], k, m, root) {
			return false
		}
	}
	return true
}

func (p *plain) keyword(s shape, k []byte, m val, root bool) bool {
	switch s {
	case isText:
		return m.kind() == jsonscan.String
	case isAnyValue:
		return true
	case isBoolean:
		return m.kind() == jsonscan.True || m.kind() == jsonscan.False
	case isNumber:
		return m.kind() == jsonscan.Number
	case isCount:
		return m.kind() == jsonscan.Number && !bytes.ContainsAny(m.raw(), "-.")
	case isPositive:
		return m.kind() == jsonscan.Number && m.raw()[0] != '-' && bytes.ContainsAny(m.raw(), "123456789")
	case isSchemaValue:
		return p.schema(m, false)
	case isSchemaList:
		return m.isArray() && m.len() > 0 && p.each(m)
	case isSchemaMap:
		return m.isObject() && p.each(m)
	case isTypeValue:
		return plainType(m)
	case isArray:
		return m.isArray()
	case isDistinctTexts:
		return distinctStrings(m)
	case isPattern:
		return m.kind() == jsonscan.String && compiles(m.text())
	case isPatternMap:
		if !m.isObject() || !p.each(m) {
			return false
		}
		for q, end := m.span(); q < end; q = m.t.next(q) {
			if !compiles(m.t.key(q)) {
				return false
			}
		}
		return true
	case isRef:
		return p.ref(m)
	case isDefs:
		return root && m.isObject() && p.each(m)
	case isDialect:
		return root // its value is plainSchema's to check
	}
	return len(k) > 2 && string(k[:2]) == "x-" // an extension, kept as is
}

// each reports whether every element or member value of v is a plain
// schema.
func (p *plain) each(v val) bool {
	for j, end := v.span(); j < end; j = v.t.next(j) {
		if !p.schema(val{v.t, j}, false) {
			return false
		}
	}
	return true
}

// ref accepts "#/$defs/name" naming one of the root's $defs, with a name
// that needs no unescaping, as pointer or as URI.
func (p *plain) ref(m val) bool {
	if m.kind() != jsonscan.String {
		return false
	}
	name, ok := bytes.CutPrefix(m.text(), []byte("#/$defs/"))
	if !ok || len(name) == 0 || bytes.ContainsAny(name, "~/%") {
		return false
	}
	return p.defs.has(string(name))
}

func plainType(m val) bool {
	switch m.kind() {
	case jsonscan.String:
		return plainTypes[string(m.text())]
	case jsonscan.Array:
		var buf [8]string
		names := typeOf(m, buf[:0])
		return m.len() > 0 && len(names) == m.len() && allIn(names, plainTypes)
	}
	return false
}

func allIn(names []string, in map[string]bool) bool {
	for _, n := range names {
		if !in[n] {
			return false
		}
	}
	return true
}

// distinctStrings reports whether m is an array of distinct strings.
func distinctStrings(m val) bool {
	if !m.isArray() {
		return false
	}
	var buf [16][]byte
	names := stringsOf(m, buf[:0])
	return len(names) == m.len()
}

// compiles reports whether the compiler's regular expression engine
// (regexp.Compile) accepts pattern: whether it parses, the one step of
// regexp.Compile that can fail. Answers are cached; patterns recur across
// tools.
func compiles(pattern []byte) bool {
	return cached(cache, kindPattern, pattern, patternWeight, func(b []byte) bool {
		_, err := syntax.Parse(string(b), syntax.Perl)
		return err == nil
	})
}

func patternWeight(pattern []byte) int { return len(pattern) }
