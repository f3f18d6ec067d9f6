package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaptinlin/jsonschema"
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
func Validate(schema, instance []byte) ([]Violation, error) {
	root, err := parse(schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := NewCompiler().Compile(schema)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %s", clipText(err.Error()))
	}
	return violations(compiled.ValidateJSON(instance), root, instance), nil
}

// violations flattens a result to its deepest errors, sorted.
func violations(res *jsonschema.EvaluationResult, schema any, instance []byte) []Violation {
	if res.IsValid() {
		return nil
	}
	inst, _ := parse(instance)
	sd, id := &doc{root: schema}, &doc{root: inst}
	var out []Violation
	var walk func(r *jsonschema.EvaluationResult)
	walk = func(r *jsonschema.EvaluationResult) {
		deeper := false
		for _, d := range r.Details {
			if !d.IsValid() {
				deeper = true
				walk(d)
			}
		}
		for kw := range r.Errors {
			if deeper && applicators[kw] {
				continue // a summary of the deeper errors just collected
			}
			out = append(out, Violation{
				Pointer:    declaredPointer(r.EvaluationPath),
				Constraint: constraint(sd, r.SchemaLocation, r.EvaluationPath, kw),
				Observed:   jsonType(id, r.InstanceLocation),
			})
		}
	}
	walk(res)
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// declaredPointer turns the schema path that was evaluated into a pointer
// in the instance's shape that holds only what the schema declares: a
// property's name, a prefixItems position, "*" for members and elements
// the schema does not name; composition and $ref steps are left out.
func declaredPointer(evalPath string) string {
	segs := strings.Split(strings.TrimPrefix(evalPath, "/"), "/")
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "prefixItems":
			if i+1 < len(segs) {
				b.WriteString("/" + segs[i+1])
				i++
			}
		case "patternProperties":
			b.WriteString("/*")
			i++ // the pattern
		case "additionalProperties", "unevaluatedProperties", "items", "additionalItems", "unevaluatedItems", "contains":
			b.WriteString("/*")
		case "allOf", "anyOf", "oneOf", "$defs", "definitions", "dependentSchemas":
			i++ // an index or a name that is no step in the instance
		}
	}
	return b.String()
}

// applicators are keywords whose error only summarises their subschemas'.
var applicators = set("properties", "patternProperties", "additionalProperties", "items", "prefixItems", "contains",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef", "dependentSchemas",
	"propertyNames", "unevaluatedProperties", "unevaluatedItems")

// constraint renders keyword kw of the schema node at the failing
// location from the declared schema itself.
func constraint(sd *doc, schemaLoc, evalPath, kw string) string {
	for _, loc := range []string{schemaLoc, evalPath} {
		loc = strings.TrimPrefix(loc, "#")
		if node, ok := sd.lookup(loc); ok {
			if m, ok := node.(map[string]any); ok {
				if v, ok := m[kw]; ok {
					return kw + " " + clipText(canonValue(v))
				}
			}
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
