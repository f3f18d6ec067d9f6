package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaptinlin/jsonschema"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Violation is one place where an instance breaks a schema, described
// without anything the instance chose: where (an RFC 6901 pointer in the
// instance's shape built from the declared schema only — declared
// property names, and "*" for any member or element the schema does not
// name, never a key the instance picked), the declared constraint, and the
// observed JSON type. Many instance values failing one schema keyword
// (20,000 undeclared keys under additionalProperties: false) are one
// violation.
type Violation struct {
	Pointer    string `json:"pointer"`
	Constraint string `json:"constraint"`
	Observed   string `json:"observed"`
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "root"
	}
	return fmt.Sprintf("%s: expected %s, got %s", p, v.Constraint, v.Observed)
}

// Validate checks instance (JSON) against schema (JSON). It never
// fetches a remote $ref and never quotes the instance: messages come from
// the schema's own keywords and the instance's JSON types.
// The schema's parse is kept in c.
func (c *Cache) Validate(schema, instance []byte) ([]Violation, error) {
	root, err := c.parse(schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := NewCompiler().Compile(schema)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %s", clipText(err.Error()))
	}
	return violations(compiled.ValidateJSON(instance), root, instance), nil
}

// violations flattens a result to its deepest errors, sorted. The
// validator reports each detail's evaluation path and instance location
// relative to its parent result, one keyword step at a time (a $ref's
// target starts again at ""), and does not escape member names in them.
// So the walk takes each step as a whole and carries down the declared
// pointer, the instance location and the declared schema node.
func violations(res *jsonschema.EvaluationResult, schema any, instance []byte) []Violation {
	if res.IsValid() {
		return nil
	}
	inst, _ := parse(instance)
	sd, id := &doc{root: schema}, &doc{root: inst}
	var out []Violation
	var walk func(r *jsonschema.EvaluationResult, ptr, instPath string, node any)
	walk = func(r *jsonschema.EvaluationResult, ptr, instPath string, node any) {
		var add string
		add, node = sd.step(node, r.EvaluationPath, r.InstanceLocation)
		ptr += add
		instPath += r.InstanceLocation
		deeper := false
		for _, d := range r.Details {
			if !d.IsValid() {
				deeper = true
				walk(d, ptr, instPath, node)
			}
		}
		for kw := range r.Errors {
			if deeper && applicators[kw] {
				continue // a summary of the deeper errors just collected
			}
			out = append(out, Violation{
				Pointer:    ptr,
				Constraint: constraint(node, kw),
				Observed:   jsonType(id, instPath),
			})
		}
	}
	walk(res, "", "", schema)
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// step takes one evaluation step, rel, from the declared schema node it
// starts at. It returns what the step adds to the declared pointer — a
// declared property name, a prefixItems position, "*" for any member or
// element the schema does not name, nothing for composition and $ref —
// and the declared node it leads to (nil when it leads nowhere). instRel
// is the step's instance location, used only to pick a patternProperties
// subschema: a name the instance chose is matched, never kept.
func (d *doc) step(node any, rel, instRel string) (string, any) {
	m, _ := node.(map[string]any)
	if rel == "" {
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
			if target, ok := d.lookup(ref[1:]); ok {
				return "", target
			}
		}
		return "", node
	}
	kw, rest, _ := strings.Cut(strings.TrimPrefix(rel, "/"), "/")
	next := m[kw]
	switch kw {
	case "properties":
		props, _ := next.(map[string]any)
		return "/" + jsonscan.EscapeToken(rest), props[rest]
	case "prefixItems":
		return "/" + jsonscan.EscapeToken(rest), index(next, rest)
	case "items":
		if _, tuple := next.([]any); tuple {
			return "/*", index(next, rest)
		}
		return "/*", next
	case "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contains":
		return "/*", next
	case "patternProperties":
		pp, _ := next.(map[string]any)
		key := strings.TrimPrefix(instRel, "/")
		for _, pattern := range sortedKeys(pp) {
			if re, err := regexp.Compile(pattern); err == nil && re.MatchString(key) {
				return "/*", pp[pattern]
			}
		}
		return "/*", nil
	case "allOf", "anyOf", "oneOf":
		return "", index(next, rest)
	case "dependentSchemas":
		ds, _ := next.(map[string]any)
		return "", ds[rest]
	case "not", "if", "then", "else", "propertyNames":
		return "", next
	}
	return "", nil
}

// index returns element tok of a list, or nil.
func index(list any, tok string) any {
	l, _ := list.([]any)
	n, err := strconv.Atoi(tok)
	if err != nil || n < 0 || n >= len(l) {
		return nil
	}
	return l[n]
}

// applicators are keywords whose error only summarises their subschemas'.
var applicators = set("properties", "patternProperties", "additionalProperties", "items", "prefixItems", "contains",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef", "dependentSchemas",
	"propertyNames", "unevaluatedProperties", "unevaluatedItems")

// constraint renders keyword kw of the declared schema node that failed.
func constraint(node any, kw string) string {
	if m, ok := node.(map[string]any); ok {
		if v, ok := m[kw]; ok {
			return kw + " " + clipText(canonValue(v))
		}
	}
	return kw
}

// jsonType names the JSON type of the instance value at ptr.
func jsonType(id *doc, ptr string) string {
	v, ok := id.lookup(ptr)
	if !ok {
		return "nothing"
	}
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	default:
		if n, ok := number(x); ok && n.IsInt() {
			return "integer"
		}
		return "number"
	}
}
