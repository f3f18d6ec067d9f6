package schema

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// obj wraps properties into an object schema.
func obj(props string, extra ...string) string {
	s := `{"type":"object","properties":{` + props + `}`
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

// equivalent pairs differ only in ways that do not change what they accept.
var equivalent = []struct{ name, a, b string }{
	{"key order", `{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"]}`,
		`{"required":["a"],"properties":{"a":{"minLength":1,"type":"string"}},"type":"object"}`},
	{"required order", obj(`"a":{},"b":{}`, `"required":["a","b"]`), obj(`"b":{},"a":{}`, `"required":["b","a"]`)},
	{"enum order", `{"enum":["x","y",1]}`, `{"enum":[1,"y","x"]}`},
	{"type array order", `{"type":["string","null"]}`, `{"type":["null","string"]}`},
	{"type string vs array", `{"type":"string"}`, `{"type":["string"]}`},
	{"$ref vs inline", `{"$defs":{"s":{"type":"string","maxLength":5}},"type":"object","properties":{"a":{"$ref":"#/$defs/s"}}}`,
		obj(`"a":{"type":"string","maxLength":5}`)},
	{"definitions vs $defs", `{"definitions":{"s":{"type":"string"}},"items":{"$ref":"#/definitions/s"}}`,
		`{"$defs":{"t":{"type":"string"}},"items":{"$ref":"#/$defs/t"}}`},
	{"anyOf order", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"integer"},{"type":"string"}]}`},
	{"anyOf through $ref", `{"$defs":{"i":{"type":"integer"}},"anyOf":[{"$ref":"#/$defs/i"},{"type":"null"}]}`, `{"anyOf":[{"type":"null"},{"type":"integer"}]}`},
	{"true vs empty", obj(`"a":true`), obj(`"a":{}`)},
	{"numbers", `{"maximum":10,"multipleOf":0.5}`, `{"maximum":10.0,"multipleOf":0.50}`},
	{"title and examples", `{"type":"string","title":"A","examples":["x"]}`, `{"type":"string","title":"B"}`},
	{"recursive schema", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},"$ref":"#/$defs/node"}`},
	{"same remote ref", obj(`"a":{"$ref":"https://example.invalid/a.json"}`), obj(`"a":{"$ref":"https://example.invalid/a.json"}`)},
}

func TestDiffEquivalentSchemas(t *testing.T) {
	for _, tc := range equivalent {
		t.Run(tc.name, func(t *testing.T) {
			if got := testCache.Diff([]byte(tc.a), []byte(tc.b)); len(got) != 0 {
				t.Fatalf("equal schemas produced %+v", got)
			}
		})
	}
}

func TestDiffHostileSchemas(t *testing.T) {
	deep := strings.Repeat(`{"items":`, 10_000) + `{}` + strings.Repeat(`}`, 10_000)
	bigEnum := func(n, skip int) string {
		var b strings.Builder
		b.WriteString(`{"enum":[`)
		for i := 0; i < n; i++ {
			if i == skip {
				continue
			}
			if b.Len() > 9 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"v%d"`, i)
		}
		b.WriteString("]}")
		return b.String()
	}
	bigProps := func(n int, typ string) string {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{"type":%q}`, i, typ)
		}
		b.WriteString("}}")
		return b.String()
	}
	for _, tc := range []struct {
		name, a, b string
		want       string
	}{
		{"10,000-deep nesting", deep, `{}`, ChgUncomparable},
		{"$ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"type":"string"}`, ChgUncomparable},
		{"self $ref", `{"$ref":"#"}`, `{"type":"string"}`, ChgUncomparable},
		{"broken $ref", `{"$ref":"#/nowhere"}`, `{}`, ChgUncomparable},
		{"100,000-value enum", bigEnum(100_000, -1), bigEnum(100_000, 500), ChgEnumValueRemoved},
		{"huge properties", bigProps(50_000, "string"), bigProps(50_000, "integer"), ChgTypeChanged},
		{"exponential $ref fan-out", fanOut(30), fanOut(31), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			changes := testCache.Diff([]byte(tc.a), []byte(tc.b))
			t.Logf("%d changes in %v", len(changes), time.Since(start))
			if tc.want == "" {
				return
			}
			found := false
			for _, c := range changes {
				found = found || c.ID == tc.want
			}
			if !found {
				t.Fatalf("no %s among %d changes (first %+v)", tc.want, len(changes), first(changes))
			}
		})
	}
}

// fanOut builds a schema where each level refers to the next twice: a
// naive expansion is 2^n nodes.
func fanOut(n int) string {
	var b strings.Builder
	b.WriteString(`{"$defs":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `,"d%d":{"type":"string"}},"$ref":"#/$defs/d0"}`, n)
	return b.String()
}

func first(cs []Change) any {
	if len(cs) == 0 {
		return nil
	}
	return cs[0]
}

func FuzzDiffSchemas(f *testing.F) {
	for _, tc := range equivalent {
		f.Add([]byte(tc.a), []byte(tc.b))
	}
	// Pairs that differ; the catalogue's §6.4 rows cover every change id.
	for _, p := range [][2]string{
		{obj(`"a":{},"b":{}`, `"required":["a"]`), obj(`"a":{"type":["string","null"]}`, `"additionalProperties":false`)},
		{`{"enum":["a","b"],"maximum":5,"pattern":"^x"}`, `{"const":"a","maximum":4.5,"format":"date"}`},
		{`{"items":{"type":"integer"},"multipleOf":2}`, `{"prefixItems":[true],"items":false,"multipleOf":3}`},
		{`{"anyOf":[{"$ref":"#/$defs/x"}],"$defs":{"x":{"type":"string"}}}`, `{"oneOf":[{"type":"string"}],"default":1}`},
	} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	known := map[string]bool{}
	for _, id := range ChangeIDs {
		known[id] = true
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		_ = testCache.Diff(a, b) // must not panic or hang
		for _, c := range testCache.Diff(a, a) {
			if c.ID != ChgUncomparable {
				t.Fatalf("a schema differs from itself: %+v", c)
			}
		}
		for _, c := range testCache.Diff(a, b) {
			if !known[c.ID] {
				t.Fatalf("change outside the engine's vocabulary (and so without a catalogue grade): %+v", c)
			}
		}
	})
}
