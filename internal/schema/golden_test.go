package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/benchgen"
)

var update = flag.Bool("update", false, "rewrite testdata/diff.golden")

// TestDiffGolden pins Diff's whole output — ids, pointers, texts, order,
// Open — over a corpus of pairs: the benchmarks' tools, the tests' pairs,
// and mutated schemas that exercise every keyword, $refs, duplicate and
// escaped keys, number spellings and key orders. Rewrite the golden file
// with -update only for a deliberate change of output.
func TestDiffGolden(t *testing.T) {
	var b bytes.Buffer
	for _, p := range diffCorpus() {
		out := []any{p.name}
		for _, c := range testCache.Diff(p.declared, p.served) {
			row := []any{c.ID, c.Pointer, c.Declared, c.Served}
			if c.Open {
				row = append(row, "open")
			}
			out = append(out, row)
		}
		line, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	const golden = "testdata/diff.golden"
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(got), len(wantLines)) {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("line %d differs:\n got %s\nwant %s", i+1, g, w)
		}
	}
}

type schemaPair struct {
	name             string
	declared, served []byte
}

// diffCorpus is the golden test's input, the same on every run.
func diffCorpus() []schemaPair {
	var out []schemaPair
	add := func(name string, a, b []byte) { out = append(out, schemaPair{name, a, b}) }
	for _, tc := range equivalent {
		add("equivalent/"+tc.name, []byte(tc.a), []byte(tc.b))
	}
	for i, tc := range [][2]string{
		{obj(`"a":{},"b":{}`, `"required":["a"]`), obj(`"a":{"type":["string","null"]}`, `"additionalProperties":false`)},
		{`{"enum":["a","b"],"maximum":5,"pattern":"^x"}`, `{"const":"a","maximum":4.5,"format":"date"}`},
		{`{"items":{"type":"integer"},"multipleOf":2}`, `{"prefixItems":[true],"items":false,"multipleOf":3}`},
		{`{"anyOf":[{"$ref":"#/$defs/x"}],"$defs":{"x":{"type":"string"}}}`, `{"oneOf":[{"type":"string"}],"default":1}`},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"type":"string"}`},
		{`{"$ref":"#"}`, `{"type":"string"}`},
		{`{"$ref":"#/nowhere"}`, `{}`},
		{fanOut(12), fanOut(13)},
		{`{"type":"object"`, `{}`},
		{strings.Repeat(`{"items":`, 70) + `{}` + strings.Repeat(`}`, 70), `{}`},
		{`{"properties":{"a":true,"b":false},"additionalProperties":{"type":"integer","minimum":0}}`, `{"properties":{"a":false},"additionalProperties":false,"prefixItems":[true]}`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"type":"string"},{"$ref":"#"}]}}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}},"b":{"const":1}}}`},
	} {
		add(fmt.Sprintf("fixed/%d", i), []byte(tc[0]), []byte(tc[1]))
	}
	schemas := func(i int, changed bool) (in, out json.RawMessage) {
		var tool struct{ InputSchema, OutputSchema json.RawMessage }
		if err := json.Unmarshal(benchgen.Tool(i, changed), &tool); err != nil {
			panic(err)
		}
		return tool.InputSchema, tool.OutputSchema
	}
	for i := range 40 {
		din, dout := schemas(i, false)
		sin, sout := schemas(i, true)
		nin, nout := schemas(i+1, false)
		add(fmt.Sprintf("benchgen/%d/input", i), din, sin)
		add(fmt.Sprintf("benchgen/%d/input reversed", i), sin, din)
		add(fmt.Sprintf("benchgen/%d/output", i), dout, sout)
		if i%10 == 0 {
			add(fmt.Sprintf("benchgen/%d/next tool", i), din, nin)
			add(fmt.Sprintf("benchgen/%d/next output", i), dout, nout)
		}
	}
	r := rand.New(rand.NewPCG(15, 14))
	for i := range 400 {
		in, _ := schemas(r.IntN(1000), false)
		var base any
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&base); err != nil {
			panic(err)
		}
		m := &mutator{r: r}
		d, s := m.copy(base), m.copy(base)
		for range r.IntN(4) {
			d = m.mutate(d, 0)
		}
		for range 1 + r.IntN(4) {
			s = m.mutate(s, 0)
		}
		add(fmt.Sprintf("mutated/%d", i), m.encode(d), m.encode(s))
	}
	return out
}

// mutator changes schemas at random places in the ways servers do and in
// ways the engine must survive.
type mutator struct{ r *rand.Rand }

func (m *mutator) copy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = m.copy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = m.copy(e)
		}
		return c
	}
	return v
}

var numbers = []string{"0", "1", "1.0", "1e1", "10", "-0", "0.5", "2", "4", "3", "100", "1E2", "99999999999999999999", "0.1"}

func (m *mutator) pick(vs ...any) any { return vs[m.r.IntN(len(vs))] }

func (m *mutator) num() json.Number { return json.Number(numbers[m.r.IntN(len(numbers))]) }

func (m *mutator) value(depth int) any {
	switch m.r.IntN(7) {
	case 0:
		return m.num()
	case 1:
		return m.pick("a", "b", "x~y/z", "é", "")
	case 2:
		return m.r.IntN(2) == 0
	case 3:
		return nil
	case 4:
		if depth < 2 {
			return []any{m.value(depth + 1), m.value(depth + 1)}
		}
	case 5:
		if depth < 2 {
			return map[string]any{"k": m.value(depth + 1), "$ref": "#/x"}
		}
	}
	return "v"
}

// small returns a small schema.
func (m *mutator) small(depth int) any {
	switch m.r.IntN(8) {
	case 0:
		return m.r.IntN(2) == 0
	case 1:
		return map[string]any{"$ref": m.pick("#/$defs/"+m.defName(), "#", "#/properties/limit", "https://example.invalid/s.json", "#/nowhere")}
	case 2:
		return map[string]any{"type": m.pick("string", "integer", "number", "null", []any{"string", "null"})}
	}
	s := map[string]any{}
	for range 1 + m.r.IntN(3) {
		m.keyword(s, depth+1)
	}
	return s
}

func (m *mutator) defName() string {
	return m.pick("customer_ref", "status_ref", "limit_ref_2", "region_ref", "d").(string)
}

// keyword sets one keyword of s to a random value.
func (m *mutator) keyword(s map[string]any, depth int) {
	sub := func() any {
		if depth > 4 {
			return true
		}
		return m.small(depth)
	}
	switch m.r.IntN(30) {
	case 0:
		s["type"] = m.pick("string", "integer", "number", "null", "object", "array", []any{"string", "null"}, []any{"integer", "string"}, []any{}, json.Number("5"))
	case 1:
		s["enum"] = []any{m.value(0), m.value(0), m.pick("fast", "full", "dry")}
	case 2:
		s["const"] = m.pick(m.value(0), "host", "ip")
	case 3:
		s[m.pick("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains").(string)] = m.num()
	case 4:
		s[m.pick("exclusiveMinimum", "exclusiveMaximum").(string)] = m.pick(m.num(), true, false)
	case 5:
		s["multipleOf"] = m.pick(json.Number("2"), json.Number("4"), json.Number("3"), json.Number("0"), json.Number("0.5"), json.Number("1.5"))
	case 6:
		s["uniqueItems"] = m.r.IntN(2) == 0
	case 7:
		s[m.pick("pattern", "format").(string)] = m.pick("^x", "email", "date-time", "^[a-z]+$", "^[a-z]{1,17}$", "hostname", json.Number("1"))
	case 8:
		s["required"] = []any{m.pick("limit", "mode", "a", "x~y/z"), m.pick("limit", "id", json.Number("1")), "mode"}
	case 9:
		s["additionalProperties"] = m.pick(false, true, map[string]any{}, map[string]any{"type": "string"}, sub())
	case 10:
		s["items"] = m.pick(sub(), []any{sub(), sub()}, false)
	case 11:
		s["prefixItems"] = []any{sub(), sub()}[:1+m.r.IntN(2)]
	case 12, 13:
		s[m.pick("anyOf", "oneOf", "allOf").(string)] = []any{sub(), sub(), sub()}[:1+m.r.IntN(3)]
	case 14:
		s[m.pick("not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "contentSchema").(string)] = sub()
	case 15:
		s[m.pick("patternProperties", "dependentSchemas").(string)] = map[string]any{"^x": sub()}
	case 16:
		s["dependentRequired"] = map[string]any{"a": []any{"b"}}
	case 17:
		s["x-mcp-header"] = m.pick("Region", "Zone")
	case 18:
		s["default"] = m.value(0)
	case 19:
		s["description"] = m.pick("old", "new", "")
	case 20:
		s[m.pick("title", "examples", "$comment", "deprecated", "readOnly", "x-custom").(string)] = m.value(0)
	case 21:
		s["$ref"] = m.pick("#/$defs/"+m.defName(), "#", "#/$defs/x~1y", "#/properties/mode", "#/properties/items/items", "remote.json")
	case 22:
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			s["properties"] = props
		}
		props[m.pick("a", "b", "limit", "mode", "x~y/z", "é", "k\"q").(string)] = sub()
	case 23:
		s["$defs"] = map[string]any{m.defName(): sub(), "x/y": sub()}
	case 24:
		s["definitions"] = map[string]any{"d": sub()}
	case 25:
		s["properties"] = m.pick(json.Number("1"), []any{}, map[string]any{})
	case 26:
		s["additionalItems"] = sub()
	case 27:
		s["$dynamicRef"] = "#meta"
	default:
		for _, k := range slices.Sorted(maps.Keys(s)) {
			if m.r.IntN(3) == 0 {
				delete(s, k)
			}
		}
	}
}

// mutate changes v at a random depth and returns the changed value.
func (m *mutator) mutate(v any, depth int) any {
	s, ok := v.(map[string]any)
	if !ok || depth > 6 || (depth > 0 && m.r.IntN(4) == 0) {
		switch m.r.IntN(6) {
		case 0:
			return m.small(depth)
		case 1:
			return m.r.IntN(2) == 0
		}
		if !ok {
			s = map[string]any{}
		}
		m.keyword(s, depth)
		return s
	}
	var children []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		switch k {
		case "properties", "$defs", "definitions", "patternProperties":
			if mm, ok := s[k].(map[string]any); ok {
				for _, name := range slices.Sorted(maps.Keys(mm)) {
					children = append(children, k+"\x00"+name)
				}
			}
		case "items", "additionalProperties", "not":
			children = append(children, k)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if arr, ok := s[k].([]any); ok {
				for i := range arr {
					children = append(children, fmt.Sprintf("%s\x01%d", k, i))
				}
			}
		}
	}
	if len(children) == 0 {
		m.keyword(s, depth)
		return s
	}
	c := children[m.r.IntN(len(children))]
	switch {
	case strings.Contains(c, "\x00"):
		k, name, _ := strings.Cut(c, "\x00")
		mm := s[k].(map[string]any)
		if m.r.IntN(8) == 0 {
			delete(mm, name)
		} else {
			mm[name] = m.mutate(mm[name], depth+1)
		}
	case strings.Contains(c, "\x01"):
		k, idx, _ := strings.Cut(c, "\x01")
		var i int
		fmt.Sscan(idx, &i)
		arr := s[k].([]any)
		arr[i] = m.mutate(arr[i], depth+1)
	default:
		s[c] = m.mutate(s[c], depth+1)
	}
	return s
}

// encode writes v as JSON with shuffled keys, now and then a duplicate key
// (the last one wins), an escaped key or whitespace.
func (m *mutator) encode(v any) []byte {
	var b bytes.Buffer
	m.write(&b, v)
	return b.Bytes()
}

func (m *mutator) write(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		if m.r.IntN(3) == 0 {
			m.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if m.r.IntN(40) == 0 {
				m.key(b, k)
				b.WriteString(`:{"type":"boolean"},`)
			}
			if m.r.IntN(30) == 0 {
				b.WriteString(" \n")
			}
			m.key(b, k)
			b.WriteByte(':')
			m.write(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			m.write(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(x))
	default:
		enc, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		b.Write(enc)
	}
}

func (m *mutator) key(b *bytes.Buffer, k string) {
	if k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyz_0123456789") == "" && m.r.IntN(25) == 0 {
		fmt.Fprintf(b, `"\u%04x%s"`, k[0], k[1:])
		return
	}
	enc, _ := json.Marshal(k)
	b.Write(enc)
}
