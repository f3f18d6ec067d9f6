package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
)

// HeaderParamPrefix starts the header that mirrors an annotated tools/call
// argument: Mcp-Param-{Name}.
const HeaderParamPrefix = "Mcp-Param-"

// HeaderAnnotation is the inputSchema keyword that asks for an argument to
// be mirrored into a header.
const HeaderAnnotation = "x-mcp-header"

// ParamHeader is one valid x-mcp-header annotation of a tool's inputSchema:
// the header name suffix and the argument it mirrors, as a path of
// property names from the arguments object.
type ParamHeader struct {
	Name string
	Path []string
}

// HeaderProblem is one way an x-mcp-header annotation breaks the rules of
// the 2026-07-28 revision (HTTP transport, "Custom Headers"): Where is
// the schema location of the annotation (a JSON pointer into inputSchema,
// built from declared names), Rule the rule it breaks.
type HeaderProblem struct {
	Where string
	Rule  string
}

func (p HeaderProblem) String() string { return p.Where + ": " + p.Rule }

// maxAnnotationDepth bounds the walk through a hostile schema.
const maxAnnotationDepth = 64

// ParamHeaders reads the x-mcp-header annotations of inputSchema. It
// returns the valid ones, and every problem: an annotation that is not a
// string, is empty, is not an RFC 9110 token, repeats another
// case-insensitively, sits on a property whose type is not exactly one of
// string, integer or boolean (number is excluded by the spec), sits on the
// root, or is reached other than through a chain of "properties" from the
// root (through items, anyOf, $defs via $ref, …). A tool with any problem
// must not be used: conforming clients exclude it.
func ParamHeaders(inputSchema json.RawMessage) ([]ParamHeader, []HeaderProblem) {
	if len(inputSchema) == 0 || !bytes.Contains(inputSchema, []byte(HeaderAnnotation)) {
		return nil, nil // the common case: no annotation anywhere
	}
	dec := json.NewDecoder(bytes.NewReader(inputSchema))
	dec.UseNumber()
	var root any
	if dec.Decode(&root) != nil {
		return nil, nil
	}
	w := &annotationWalk{seen: map[string]string{}}
	w.walk(root, "", nil, "", 0)
	return w.headers, w.problems
}

type annotationWalk struct {
	headers  []ParamHeader
	problems []HeaderProblem
	seen     map[string]string // lower-cased name → where first seen
}

// Keywords whose values are subschemas, by shape. A subschema reached
// through any of them is off the properties chain.
var (
	schemaValued = []string{"items", "additionalProperties", "unevaluatedProperties", "unevaluatedItems",
		"additionalItems", "contains", "propertyNames", "not", "if", "then", "else"}
	schemaListed = []string{"prefixItems", "allOf", "anyOf", "oneOf", "items"}
	schemaMapped = []string{"$defs", "definitions", "patternProperties", "dependentSchemas"}
)

// walk visits node at schema location where; path is the argument path
// when node is reached through properties alone, and via names the first
// other keyword on the way ("" while on the chain).
func (w *annotationWalk) walk(node any, where string, path []string, via string, depth int) {
	m, ok := node.(map[string]any)
	if !ok || depth > maxAnnotationDepth {
		return
	}
	if v, ok := m[HeaderAnnotation]; ok {
		w.check(m, v, where, path, via)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p := path
			if via == "" {
				p = append(slices.Clone(path), name)
			}
			w.walk(props[name], where+"/properties/"+jsonscan.EscapeToken(name), p, via, depth+1)
		}
	}
	off := func(kw string) string {
		if via != "" {
			return via
		}
		return kw
	}
	for _, kw := range schemaValued {
		if sub, ok := m[kw].(map[string]any); ok {
			w.walk(sub, where+"/"+kw, nil, off(kw), depth+1)
		}
	}
	for _, kw := range schemaListed {
		if list, ok := m[kw].([]any); ok {
			for i, sub := range list {
				w.walk(sub, where+"/"+kw+"/"+strconv.Itoa(i), nil, off(kw), depth+1)
			}
		}
	}
	for _, kw := range schemaMapped {
		if subs, ok := m[kw].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(subs)) {
				w.walk(subs[name], where+"/"+kw+"/"+jsonscan.EscapeToken(name), nil, off(kw), depth+1)
			}
		}
	}
}

func (w *annotationWalk) check(m map[string]any, v any, where string, path []string, via string) {
	at := where + "/" + HeaderAnnotation
	bad := func(format string, args ...any) {
		w.problems = append(w.problems, HeaderProblem{Where: at, Rule: fmt.Sprintf(format, args...)})
	}
	name, isString := v.(string)
	switch {
	case !isString:
		bad("the annotation is not a string")
		return
	case name == "":
		bad("the header name is empty")
		return
	case !IsToken(name):
		bad("the header name is not an RFC 9110 token (only letters, digits and !#$%%&'*+-.^_`|~; no space, control character or delimiter)")
		return
	}
	if first, dup := w.seen[strings.ToLower(name)]; dup {
		bad("the header name repeats the one at %s (names are compared case-insensitively)", first)
		return
	}
	w.seen[strings.ToLower(name)] = at
	switch {
	case where == "":
		bad("the annotation is on the schema root, not on a property")
		return
	case via == "$defs" || via == "definitions":
		bad("the property is reached through %s (a $ref target), not through a chain of properties from the root", via)
		return
	case via != "":
		bad("the property is reached through %s, not through a chain of properties from the root", via)
		return
	}
	if t := primitiveType(m["type"]); t != "" {
		bad("%s", t)
		return
	}
	w.headers = append(w.headers, ParamHeader{Name: name, Path: path})
}

// primitiveType returns "" when t is exactly one of string, integer or
// boolean (optionally with null), else the rule it breaks.
func primitiveType(t any) string {
	var types []string
	switch x := t.(type) {
	case string:
		types = []string{x}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
	case nil:
		return "the property declares no type; only string, integer or boolean may be mirrored"
	}
	switch {
	case len(types) == 1 && (types[0] == "string" || types[0] == "integer" || types[0] == "boolean"):
		return ""
	case slices.Contains(types, "number"):
		return `the property's type is "number", which may not be mirrored (only string, integer or boolean)`
	}
	return "the property's type is not a primitive; only string, integer or boolean may be mirrored"
}

// IsToken reports whether s is an RFC 9110 token (1*tchar): what an HTTP
// header name must be.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// paramHeaderValues returns the Mcp-Param-* headers for arguments under
// headers: one per annotated argument that is present and not null, its
// value converted by the spec's rule (strings as-is, integers in decimal,
// booleans as true/false) and encoded like Mcp-Name. An argument of any
// other JSON type gets no header (the server will say so).
func paramHeaderValues(arguments any, headers []ParamHeader) [][2]string {
	if len(headers) == 0 {
		return nil
	}
	var args any
	switch a := arguments.(type) {
	case json.RawMessage:
		dec := json.NewDecoder(bytes.NewReader(a))
		dec.UseNumber()
		if dec.Decode(&args) != nil {
			return nil
		}
	default:
		args = a
	}
	var out [][2]string
	for _, h := range headers {
		v, ok := lookupPath(args, h.Path)
		if !ok {
			continue
		}
		if text, ok := headerText(v); ok {
			out = append(out, [2]string{HeaderParamPrefix + h.Name, EncodeHeaderValue(text)})
		}
	}
	return out
}

func lookupPath(v any, path []string) (any, bool) {
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[key]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// maxSafeInteger is 2^53-1, the bound the spec sets on mirrored integers.
const maxSafeInteger = 1<<53 - 1

func headerText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return strconv.FormatInt(n, 10), n >= -maxSafeInteger && n <= maxSafeInteger
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxSafeInteger {
			return "", false
		}
		return strconv.FormatInt(int64(x), 10), true
	}
	return "", false
}
