package catalogue

import (
	"fmt"
	"os"
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

// diffRows is one case per row of DESIGN §6.4: a declared/served pair, the
// one change it must produce, where, and its grade in each direction.
var diffRows = []struct {
	name, declared, served string
	change, pointer        string
	input, output          string
}{
	{"property added", obj(`"a":{"type":"string"}`), obj(`"a":{"type":"string"},"b":{"type":"integer"}`),
		ChgPropertyAdded, "/properties/b", BrkCompatible, BrkCompatible},
	{"required added", obj(`"a":{"type":"string"}`), obj(`"a":{"type":"string"}`, `"required":["a"]`),
		ChgRequiredAdded, "/properties/a", BrkInputRequiredAdded, BrkCompatible},
	{"property removed, closed", obj(`"a":{},"b":{}`, `"additionalProperties":false`), obj(`"a":{}`, `"additionalProperties":false`),
		ChgPropertyRemoved, "/properties/b", BrkInputPropertyRemovedClosed, BrkOutputPropertyRemoved},
	{"property removed, open", obj(`"a":{},"b":{}`), obj(`"a":{}`),
		ChgPropertyRemoved, "/properties/b", BrkInputPropertyRemovedOpen, BrkOutputPropertyRemoved},
	{"required removed", obj(`"a":{}`, `"required":["a"]`), obj(`"a":{}`),
		ChgRequiredRemoved, "/properties/a", BrkCompatible, BrkOutputRequiredRemoved},
	{"type narrowed", obj(`"a":{"type":["string","integer"]}`), obj(`"a":{"type":"string"}`),
		ChgTypeNarrowed, "/properties/a/type", BrkInputTypeNarrowed, BrkCompatible},
	{"type narrowed number to integer", `{"type":"number"}`, `{"type":"integer"}`,
		ChgTypeNarrowed, "/type", BrkInputTypeNarrowed, BrkCompatible},
	{"type widened", obj(`"a":{"type":"integer"}`), obj(`"a":{"type":["integer","string"]}`),
		ChgTypeWidened, "/properties/a/type", BrkCompatible, BrkOutputTypeWidened},
	{"type widened by removal", `{"type":"string"}`, `{}`,
		ChgTypeWidened, "", BrkCompatible, BrkOutputTypeWidened},
	{"type changed", obj(`"a":{"type":"integer"}`), obj(`"a":{"type":"string"}`),
		ChgTypeChanged, "/properties/a/type", BrkInputTypeChanged, BrkOutputTypeChanged},
	{"enum value removed", `{"enum":["a","b","c"]}`, `{"enum":["a","b"]}`,
		ChgEnumValueRemoved, "/enum", BrkInputEnumNarrowed, BrkCompatible},
	{"enum added", `{"type":"string"}`, `{"type":"string","enum":["a"]}`,
		ChgEnumAdded, "/enum", BrkInputEnumNarrowed, BrkCompatible},
	{"enum value added", `{"enum":["a"]}`, `{"enum":["a","b"]}`,
		ChgEnumValueAdded, "/enum", BrkCompatible, BrkOutputEnumWidened},
	{"enum removed", `{"type":"string","enum":["a"]}`, `{"type":"string"}`,
		ChgEnumRemoved, "", BrkCompatible, BrkOutputEnumWidened},
	{"const changed", `{"const":"v1"}`, `{"const":"v2"}`,
		ChgConstChanged, "/const", BrkInputConstChanged, BrkOutputConstChanged},
	{"maximum tightened", obj(`"n":{"type":"integer","maximum":100}`), obj(`"n":{"type":"integer","maximum":50}`),
		ChgBoundTightened, "/properties/n/maximum", BrkInputBoundTightened, BrkCompatible},
	{"minLength added", `{"type":"string"}`, `{"type":"string","minLength":3}`,
		ChgBoundTightened, "/minLength", BrkInputBoundTightened, BrkCompatible},
	{"multipleOf tightened", `{"multipleOf":2}`, `{"multipleOf":4}`,
		ChgBoundTightened, "/multipleOf", BrkInputBoundTightened, BrkCompatible},
	{"uniqueItems added", `{"type":"array"}`, `{"type":"array","uniqueItems":true}`,
		ChgBoundTightened, "/uniqueItems", BrkInputBoundTightened, BrkCompatible},
	{"maxItems loosened", `{"maxItems":5}`, `{"maxItems":10}`,
		ChgBoundLoosened, "/maxItems", BrkCompatible, BrkOutputBoundLoosened},
	{"exclusiveMinimum removed", `{"exclusiveMinimum":0}`, `{}`,
		ChgBoundLoosened, "", BrkCompatible, BrkOutputBoundLoosened},
	{"pattern changed", `{"pattern":"^[a-z]+$"}`, `{"pattern":"^[a-z]{2}$"}`,
		ChgPatternChanged, "/pattern", BrkInputPatternChanged, BrkOutputPatternChanged},
	{"pattern added", `{"type":"string"}`, `{"type":"string","pattern":"^x"}`,
		ChgPatternAdded, "/pattern", BrkInputPatternChanged, BrkOutputPatternChanged},
	{"pattern removed", `{"pattern":"^x"}`, `{}`,
		ChgPatternRemoved, "", BrkCompatible, BrkOutputPatternChanged},
	{"format added", `{"type":"string"}`, `{"type":"string","format":"email"}`,
		ChgFormatAdded, "/format", BrkInputFormatChanged, BrkOutputFormatChanged},
	{"format changed", `{"format":"date"}`, `{"format":"date-time"}`,
		ChgFormatChanged, "/format", BrkInputFormatChanged, BrkOutputFormatChanged},
	{"format removed", `{"format":"date"}`, `{}`,
		ChgFormatRemoved, "", BrkCompatible, BrkOutputFormatChanged},
	{"additional properties closed", obj(`"a":{}`), obj(`"a":{}`, `"additionalProperties":false`),
		ChgAdditionalClosed, "/additionalProperties", BrkInputClosed, BrkCompatible},
	{"additional properties opened", obj(`"a":{}`, `"additionalProperties":false`), obj(`"a":{}`),
		ChgAdditionalOpened, "", BrkCompatible, BrkOutputOpened},
	{"null added", obj(`"a":{"type":"string"}`), obj(`"a":{"type":["string","null"]}`),
		ChgNullAdded, "/properties/a/type", BrkCompatible, BrkOutputNullAdded},
	{"null removed", obj(`"a":{"type":["string","null"]}`), obj(`"a":{"type":"string"}`),
		ChgNullRemoved, "/properties/a/type", BrkInputNullRemoved, BrkCompatible},
	{"composition changed", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"},{"type":"boolean"}]}`,
		ChgCompositionChanged, "/anyOf", BrkUnprovable, BrkUnprovable},
	{"keyword changed", `{"patternProperties":{"^x":{"type":"string"}}}`, `{"patternProperties":{"^x":{"type":"integer"}}}`,
		ChgKeywordChanged, "/patternProperties", BrkUnprovable, BrkUnprovable},
	{"x-mcp-header changed", obj(`"r":{"type":"string","x-mcp-header":"Region"}`), obj(`"r":{"type":"string","x-mcp-header":"Zone"}`),
		ChgKeywordChanged, "/properties/r/x-mcp-header", BrkUnprovable, BrkUnprovable},
	{"remote $ref", obj(`"a":{"$ref":"https://example.invalid/a.json"}`), obj(`"a":{"$ref":"https://example.invalid/b.json"}`),
		ChgUncomparable, "/properties/a", BrkUnprovable, BrkUnprovable},
	{"default changed", `{"type":"integer","default":10}`, `{"type":"integer","default":20}`,
		ChgDefaultChanged, "/default", BrkAnnotationOnly, BrkAnnotationOnly},
	{"description changed", obj(`"a":{"description":"old"}`), obj(`"a":{"description":"new"}`),
		ChgDescriptionChanged, "/properties/a/description", BrkAnnotationOnly, BrkAnnotationOnly},
	{"change inside a $def", `{"$defs":{"n":{"type":"integer","maximum":9}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`,
		`{"$defs":{"n":{"type":"integer","maximum":5}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`,
		ChgBoundTightened, "/$defs/n/maximum", BrkInputBoundTightened, BrkCompatible},
	{"change inside draft-07 definitions", `{"definitions":{"s":{"enum":["x","y"]}},"items":{"$ref":"#/definitions/s"}}`,
		`{"definitions":{"s":{"enum":["x"]}},"items":{"$ref":"#/definitions/s"}}`,
		ChgEnumValueRemoved, "/definitions/s/enum", BrkInputEnumNarrowed, BrkCompatible},
	{"change inside items", `{"type":"array","items":{"type":"string"}}`, `{"type":"array","items":{"type":"integer"}}`,
		ChgTypeChanged, "/items/type", BrkInputTypeChanged, BrkOutputTypeChanged},
	{"false schema", obj(`"a":{}`), obj(`"a":false`),
		ChgTypeNarrowed, "/properties/a", BrkInputTypeNarrowed, BrkCompatible},
}

func TestDiffRows(t *testing.T) {
	for _, row := range diffRows {
		t.Run(row.name, func(t *testing.T) {
			changes := DiffSchemas([]byte(row.declared), []byte(row.served))
			if len(changes) != 1 {
				t.Fatalf("changes = %+v, want exactly one %s", changes, row.change)
			}
			c := changes[0]
			if c.ID != row.change || c.Pointer != row.pointer {
				t.Fatalf("change = %s at %q, want %s at %q", c.ID, c.Pointer, row.change, row.pointer)
			}
			for _, dir := range []struct {
				d    Direction
				want string
			}{{Input, row.input}, {Output, row.output}} {
				g := c.Grade(dir.d)
				want, _ := LookupGrade(dir.want)
				if g.ID != dir.want || g.Severity != want.Severity {
					t.Errorf("%s grade = %s (%s), want %s (%s)", dir.d, g.ID, g.Severity, dir.want, want.Severity)
				}
			}
			if c.Declared == "" || c.Served == "" {
				t.Errorf("change lacks the declared or served constraint: %+v", c)
			}
		})
	}
}

func TestDiffEquivalentSchemas(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DiffSchemas([]byte(tc.a), []byte(tc.b)); len(got) != 0 {
				t.Fatalf("equal schemas produced %+v", got)
			}
		})
	}
}

func TestCatalogueOfChangesAndGrades(t *testing.T) {
	reached := map[string]bool{}
	for _, c := range Changes {
		if !strings.HasPrefix(c.ID, "CHG-") || c.Doc == "" {
			t.Errorf("%s: bad id or no doc", c.ID)
		}
		for _, open := range []bool{false, true} {
			for _, d := range []Direction{Input, Output} {
				g := GradeOf(c.ID, d, open)
				if g.ID == "" {
					t.Errorf("%s has no %s grade", c.ID, d)
				}
				reached[g.ID] = true
			}
		}
	}
	for _, g := range Grades {
		if !strings.HasPrefix(g.ID, "BRK-") || g.Doc == "" || g.Severity.Rank() == 0 {
			t.Errorf("%s: bad id, doc or severity", g.ID)
		}
		if !reached[g.ID] {
			t.Errorf("%s is reachable from no change", g.ID)
		}
		if g.Breaking && g.ID != BrkUnprovable && g.Severity != Error {
			t.Errorf("%s is breaking but not ERROR", g.ID)
		}
	}
	rowChanges := map[string]bool{}
	for _, r := range diffRows {
		rowChanges[r.change] = true
	}
	for _, c := range Changes {
		if !rowChanges[c.ID] && c.ID != ChgSchemaAdded && c.ID != ChgSchemaRemoved {
			t.Errorf("%s has no row in TestDiffRows", c.ID)
		}
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
			changes := DiffSchemas([]byte(tc.a), []byte(tc.b))
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
	for _, r := range diffRows {
		f.Add([]byte(r.declared), []byte(r.served))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		_ = DiffSchemas(a, b) // must not panic or hang
		for _, c := range DiffSchemas(a, a) {
			if c.ID != ChgUncomparable {
				t.Fatalf("a schema differs from itself: %+v", c)
			}
		}
		for _, c := range DiffSchemas(a, b) {
			if c.ID == "" || GradeOf(c.ID, Input, c.Open).ID == "" {
				t.Fatalf("change without a catalogue entry: %+v", c)
			}
		}
	})
}

// examplesMarkdown renders diffRows as the example table of
// docs/schema-diff.md.
func examplesMarkdown() string {
	var b strings.Builder
	b.WriteString("| change | declared | served | pointer | input grade | output grade |\n|---|---|---|---|---|---|\n")
	for _, r := range diffRows {
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | `%s` | `%s` | `%s` |\n", r.change,
			strings.ReplaceAll(r.declared, "|", "\\|"), strings.ReplaceAll(r.served, "|", "\\|"), r.pointer, r.input, r.output)
	}
	return b.String()
}

func TestSchemaDiffDocIsCurrent(t *testing.T) {
	const path = "../../docs/schema-diff.md"
	const begin, end = "<!-- examples:begin -->\n", "<!-- examples:end -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the examples markers", path)
	}
	want := s[:i+len(begin)] + examplesMarkdown() + s[j:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s != want {
		t.Fatalf("%s examples are out of date; run go test ./internal/catalogue -update", path)
	}
}
