// Package benchgen makes the tool definitions every benchmark uses
// (DESIGN §14): realistic and distinct. Each tool's input schema has about
// 50 schema nodes — nested objects, a $defs entry behind a $ref, arrays,
// enums, bounds, formats, a union — and no two tools share a schema, so no
// cache can hit on a neighbour. The output is deterministic: tool i of a
// given variant is the same bytes in every process, so a server in one
// process and a manifest in another agree without talking.
package benchgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// words are the vocabulary property names are drawn from.
var words = []string{
	"customer", "region", "status", "limit", "tags", "billing", "shipping", "filter",
	"since", "until", "flags", "owner", "project", "query", "page", "sort", "order",
	"account", "currency", "amount", "priority", "label", "branch", "commit", "path",
	"channel", "message", "thread", "user", "team", "zone", "cluster", "namespace",
}

var formats = []string{"date-time", "email", "uri", "uuid", "date", "hostname"}

// Tool returns tool i as served JSON. changed false is the declared
// version; changed true alters a bound, an enum, the required list and a
// nested property, as a server that drifted would — every tool's diff is
// non-empty.
func Tool(i int, changed bool) json.RawMessage {
	g := &gen{r: rand.New(rand.NewPCG(uint64(i), 0x5eed)), i: i, changed: changed}
	in := g.input()
	out := g.output()
	desc := fmt.Sprintf("Tool %d of the benchmark: looks up %s records by %s and returns a page of matches.",
		i, words[i%len(words)], words[(i/len(words))%len(words)])
	b, _ := json.Marshal(map[string]any{
		"name": Name(i), "description": desc, "inputSchema": in, "outputSchema": out,
		"annotations": map[string]any{"readOnlyHint": i%2 == 0},
	})
	return b
}

// Name is the name of tool i.
func Name(i int) string {
	return fmt.Sprintf("%s_%s_%d", words[i%len(words)], words[(i*7+3)%len(words)], i)
}

// Tools returns tools 0..n-1 of one variant.
func Tools(n int, changed bool) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = Tool(i, changed)
	}
	return out
}

// Manifest returns a manifest document of tools 0..n-1, declared (unchanged).
func Manifest(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(Tool(i, false))
	}
	b.WriteString("]}")
	return []byte(b.String())
}

type gen struct {
	r       *rand.Rand
	i       int
	changed bool
}

type obj = map[string]any

// prop returns the k-th property name of the tool.
func (g *gen) prop(k int) string {
	return fmt.Sprintf("%s_%d", words[(g.i*3+k*5)%len(words)], k)
}

// leaf returns one leaf schema, kind chosen by the tool's random source.
func (g *gen) leaf(k int) obj {
	switch g.r.IntN(6) {
	case 0:
		s := obj{"type": "string", "minLength": 1, "maxLength": 16 + g.r.IntN(240)}
		if g.r.IntN(2) == 0 {
			s["pattern"] = fmt.Sprintf("^[a-z]{%d,%d}$", 1+g.r.IntN(3), 8+g.r.IntN(20))
		}
		return s
	case 1:
		return obj{"type": "string", "format": formats[g.r.IntN(len(formats))], "description": fmt.Sprintf("field %d", k)}
	case 2:
		return obj{"type": "integer", "minimum": g.r.IntN(10), "maximum": 100 + g.r.IntN(10000)}
	case 3:
		return obj{"type": "number", "exclusiveMinimum": 0}
	case 4:
		return obj{"type": "boolean", "default": g.r.IntN(2) == 0}
	default:
		n := 2 + g.r.IntN(4)
		vals := make([]any, n)
		for j := range vals {
			vals[j] = fmt.Sprintf("%s%d", words[(g.i+j+k)%len(words)], j)
		}
		return obj{"type": "string", "enum": vals}
	}
}

// input is the tool's ~50-node input schema.
func (g *gen) input() obj {
	def := fmt.Sprintf("%s_ref", words[g.i%len(words)])
	defProps := obj{}
	for k := 0; k < 4; k++ {
		defProps[g.prop(20+k)] = g.leaf(20 + k)
	}
	props := obj{}
	for k := 0; k < 12; k++ {
		props[g.prop(k)] = g.leaf(k)
	}
	nested := obj{}
	for k := 0; k < 7; k++ {
		nested[g.prop(40+k)] = g.leaf(40 + k)
	}
	items := obj{"type": "object", "properties": obj{
		"id":    obj{"type": "string"},
		"value": obj{"anyOf": []any{obj{"type": "string"}, obj{"type": "integer"}, obj{"type": "null"}}},
		"at":    obj{"type": "string", "format": "date-time"},
	}, "required": []any{"id"}}
	second := obj{}
	for k := 0; k < 4; k++ {
		second[g.prop(50+k)] = g.leaf(50 + k)
	}
	props["target"] = obj{"oneOf": []any{
		obj{"type": "object", "properties": obj{"kind": obj{"const": "host"}, "host": obj{"type": "string", "format": "hostname"}}, "required": []any{"kind", "host"}},
		obj{"type": "object", "properties": obj{"kind": obj{"const": "ip"}, "ip": obj{"type": "string"}}, "required": []any{"kind", "ip"}},
	}}
	props["extra"] = obj{"$ref": "#/$defs/" + def + "_2"}
	props["limit"] = obj{"type": "integer", "minimum": 1, "maximum": 100 + g.i%400}
	props["mode"] = obj{"type": "string", "enum": []any{"fast", "full", "dry"}}
	props["ref"] = obj{"$ref": "#/$defs/" + def}
	props["nested"] = obj{"type": "object", "properties": nested, "additionalProperties": false}
	props["items"] = obj{"type": "array", "items": items, "maxItems": 10 + g.i%90}
	required := []any{g.prop(0), "limit"}
	if g.changed {
		props["limit"].(obj)["maximum"] = 50 + g.i%40 // narrowed
		props["mode"] = obj{"type": "string", "enum": []any{"fast", "full"}}
		nested[g.prop(40)] = obj{"type": "integer"} // retyped
		required = append(required, "mode")
	}
	return obj{"type": "object", "$defs": obj{
		def:        obj{"type": "object", "properties": defProps, "required": []any{g.prop(20)}},
		def + "_2": obj{"type": "object", "properties": second},
	},
		"properties": props, "required": required, "additionalProperties": false}
}

// output is the tool's output schema, about a dozen nodes.
func (g *gen) output() obj {
	hit := obj{"type": "object", "properties": obj{
		"id":       obj{"type": "string"},
		"score":    obj{"type": "number", "minimum": 0, "maximum": 1},
		g.prop(30): g.leaf(30),
	}, "required": []any{"id"}}
	return obj{"type": "object", "properties": obj{
		"hits":  obj{"type": "array", "items": hit},
		"next":  obj{"type": []any{"string", "null"}},
		"count": obj{"type": "integer", "minimum": 0},
	}, "required": []any{"hits"}}
}

// Nodes counts the schema nodes of a JSON Schema document: every object
// reached through a schema-valued keyword. For the test that holds the
// "about 50 nodes" claim.
func Nodes(raw json.RawMessage) int {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	return countNodes(v)
}

func countNodes(v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	n := 1
	for k, sub := range m {
		switch k {
		case "properties", "$defs", "definitions", "patternProperties":
			if mm, ok := sub.(map[string]any); ok {
				for _, s := range mm {
					n += countNodes(s)
				}
			}
		case "items", "additionalProperties", "not", "if", "then", "else", "contains":
			n += countNodes(sub)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if arr, ok := sub.([]any); ok {
				for _, s := range arr {
					n += countNodes(s)
				}
			}
		}
	}
	return n
}
