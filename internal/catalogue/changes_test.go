package catalogue

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/schema"
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
		schema.ChgPropertyAdded, "/properties/b", BrkCompatible, BrkCompatible},
	{"required added", obj(`"a":{"type":"string"}`), obj(`"a":{"type":"string"}`, `"required":["a"]`),
		schema.ChgRequiredAdded, "/properties/a", BrkInputRequiredAdded, BrkCompatible},
	{"property removed, closed", obj(`"a":{},"b":{}`, `"additionalProperties":false`), obj(`"a":{}`, `"additionalProperties":false`),
		schema.ChgPropertyRemoved, "/properties/b", BrkInputPropertyRemovedClosed, BrkOutputPropertyRemoved},
	{"property removed, open", obj(`"a":{},"b":{}`), obj(`"a":{}`),
		schema.ChgPropertyRemoved, "/properties/b", BrkInputPropertyRemovedOpen, BrkOutputPropertyRemoved},
	{"required removed", obj(`"a":{}`, `"required":["a"]`), obj(`"a":{}`),
		schema.ChgRequiredRemoved, "/properties/a", BrkCompatible, BrkOutputRequiredRemoved},
	{"type narrowed", obj(`"a":{"type":["string","integer"]}`), obj(`"a":{"type":"string"}`),
		schema.ChgTypeNarrowed, "/properties/a/type", BrkInputTypeNarrowed, BrkCompatible},
	{"type narrowed number to integer", `{"type":"number"}`, `{"type":"integer"}`,
		schema.ChgTypeNarrowed, "/type", BrkInputTypeNarrowed, BrkCompatible},
	{"type widened", obj(`"a":{"type":"integer"}`), obj(`"a":{"type":["integer","string"]}`),
		schema.ChgTypeWidened, "/properties/a/type", BrkCompatible, BrkOutputTypeWidened},
	{"type widened by removal", `{"type":"string"}`, `{}`,
		schema.ChgTypeWidened, "", BrkCompatible, BrkOutputTypeWidened},
	{"type changed", obj(`"a":{"type":"integer"}`), obj(`"a":{"type":"string"}`),
		schema.ChgTypeChanged, "/properties/a/type", BrkInputTypeChanged, BrkOutputTypeChanged},
	{"enum value removed", `{"enum":["a","b","c"]}`, `{"enum":["a","b"]}`,
		schema.ChgEnumValueRemoved, "/enum", BrkInputEnumNarrowed, BrkCompatible},
	{"enum added", `{"type":"string"}`, `{"type":"string","enum":["a"]}`,
		schema.ChgEnumAdded, "/enum", BrkInputEnumNarrowed, BrkCompatible},
	{"enum value added", `{"enum":["a"]}`, `{"enum":["a","b"]}`,
		schema.ChgEnumValueAdded, "/enum", BrkCompatible, BrkOutputEnumWidened},
	{"enum removed", `{"type":"string","enum":["a"]}`, `{"type":"string"}`,
		schema.ChgEnumRemoved, "", BrkCompatible, BrkOutputEnumWidened},
	{"const changed", `{"const":"v1"}`, `{"const":"v2"}`,
		schema.ChgConstChanged, "/const", BrkInputConstChanged, BrkOutputConstChanged},
	{"maximum tightened", obj(`"n":{"type":"integer","maximum":100}`), obj(`"n":{"type":"integer","maximum":50}`),
		schema.ChgBoundTightened, "/properties/n/maximum", BrkInputBoundTightened, BrkCompatible},
	{"minLength added", `{"type":"string"}`, `{"type":"string","minLength":3}`,
		schema.ChgBoundTightened, "/minLength", BrkInputBoundTightened, BrkCompatible},
	{"multipleOf tightened", `{"multipleOf":2}`, `{"multipleOf":4}`,
		schema.ChgBoundTightened, "/multipleOf", BrkInputBoundTightened, BrkCompatible},
	{"uniqueItems added", `{"type":"array"}`, `{"type":"array","uniqueItems":true}`,
		schema.ChgBoundTightened, "/uniqueItems", BrkInputBoundTightened, BrkCompatible},
	{"maxItems loosened", `{"maxItems":5}`, `{"maxItems":10}`,
		schema.ChgBoundLoosened, "/maxItems", BrkCompatible, BrkOutputBoundLoosened},
	{"exclusiveMinimum removed", `{"exclusiveMinimum":0}`, `{}`,
		schema.ChgBoundLoosened, "", BrkCompatible, BrkOutputBoundLoosened},
	{"pattern changed", `{"pattern":"^[a-z]+$"}`, `{"pattern":"^[a-z]{2}$"}`,
		schema.ChgPatternChanged, "/pattern", BrkInputPatternChanged, BrkOutputPatternChanged},
	{"pattern added", `{"type":"string"}`, `{"type":"string","pattern":"^x"}`,
		schema.ChgPatternAdded, "/pattern", BrkInputPatternChanged, BrkOutputPatternChanged},
	{"pattern removed", `{"pattern":"^x"}`, `{}`,
		schema.ChgPatternRemoved, "", BrkCompatible, BrkOutputPatternChanged},
	{"format added", `{"type":"string"}`, `{"type":"string","format":"email"}`,
		schema.ChgFormatAdded, "/format", BrkInputFormatChanged, BrkOutputFormatChanged},
	{"format changed", `{"format":"date"}`, `{"format":"date-time"}`,
		schema.ChgFormatChanged, "/format", BrkInputFormatChanged, BrkOutputFormatChanged},
	{"format removed", `{"format":"date"}`, `{}`,
		schema.ChgFormatRemoved, "", BrkCompatible, BrkOutputFormatChanged},
	{"additional properties closed", obj(`"a":{}`), obj(`"a":{}`, `"additionalProperties":false`),
		schema.ChgAdditionalClosed, "/additionalProperties", BrkInputClosed, BrkCompatible},
	{"additional properties opened", obj(`"a":{}`, `"additionalProperties":false`), obj(`"a":{}`),
		schema.ChgAdditionalOpened, "", BrkCompatible, BrkOutputOpened},
	{"null added", obj(`"a":{"type":"string"}`), obj(`"a":{"type":["string","null"]}`),
		schema.ChgNullAdded, "/properties/a/type", BrkCompatible, BrkOutputNullAdded},
	{"null removed", obj(`"a":{"type":["string","null"]}`), obj(`"a":{"type":"string"}`),
		schema.ChgNullRemoved, "/properties/a/type", BrkInputNullRemoved, BrkCompatible},
	{"composition changed", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"},{"type":"boolean"}]}`,
		schema.ChgCompositionChanged, "/anyOf", BrkUnprovable, BrkUnprovable},
	{"keyword changed", `{"patternProperties":{"^x":{"type":"string"}}}`, `{"patternProperties":{"^x":{"type":"integer"}}}`,
		schema.ChgKeywordChanged, "/patternProperties", BrkUnprovable, BrkUnprovable},
	{"x-mcp-header changed", obj(`"r":{"type":"string","x-mcp-header":"Region"}`), obj(`"r":{"type":"string","x-mcp-header":"Zone"}`),
		schema.ChgKeywordChanged, "/properties/r/x-mcp-header", BrkUnprovable, BrkUnprovable},
	{"remote $ref", obj(`"a":{"$ref":"https://example.invalid/a.json"}`), obj(`"a":{"$ref":"https://example.invalid/b.json"}`),
		schema.ChgUncomparable, "/properties/a", BrkUnprovable, BrkUnprovable},
	{"default changed", `{"type":"integer","default":10}`, `{"type":"integer","default":20}`,
		schema.ChgDefaultChanged, "/default", BrkAnnotationOnly, BrkAnnotationOnly},
	{"description changed", obj(`"a":{"description":"old"}`), obj(`"a":{"description":"new"}`),
		schema.ChgDescriptionChanged, "/properties/a/description", BrkAnnotationOnly, BrkAnnotationOnly},
	{"change inside a $def", `{"$defs":{"n":{"type":"integer","maximum":9}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`,
		`{"$defs":{"n":{"type":"integer","maximum":5}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`,
		schema.ChgBoundTightened, "/$defs/n/maximum", BrkInputBoundTightened, BrkCompatible},
	{"change inside draft-07 definitions", `{"definitions":{"s":{"enum":["x","y"]}},"items":{"$ref":"#/definitions/s"}}`,
		`{"definitions":{"s":{"enum":["x"]}},"items":{"$ref":"#/definitions/s"}}`,
		schema.ChgEnumValueRemoved, "/definitions/s/enum", BrkInputEnumNarrowed, BrkCompatible},
	{"change inside items", `{"type":"array","items":{"type":"string"}}`, `{"type":"array","items":{"type":"integer"}}`,
		schema.ChgTypeChanged, "/items/type", BrkInputTypeChanged, BrkOutputTypeChanged},
	{"false schema", obj(`"a":{}`), obj(`"a":false`),
		schema.ChgTypeNarrowed, "/properties/a", BrkInputTypeNarrowed, BrkCompatible},
}

func TestDiffRows(t *testing.T) {
	for _, row := range diffRows {
		t.Run(row.name, func(t *testing.T) {
			changes := testSchemas.Diff([]byte(row.declared), []byte(row.served))
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
				g := GradeOf(c, dir.d)
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

func TestCatalogueOfChangesAndGrades(t *testing.T) {
	reached := map[string]bool{}
	for _, c := range Changes {
		if !strings.HasPrefix(c.ID, "CHG-") || c.Doc == "" {
			t.Errorf("%s: bad id or no doc", c.ID)
		}
		for _, open := range []bool{false, true} {
			for _, d := range []Direction{Input, Output} {
				g := GradeOf(schema.Change{ID: c.ID, Open: open}, d)
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
	var ids []string
	for _, c := range Changes {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(sorted(ids), sorted(schema.ChangeIDs)) {
		t.Errorf("the CHG table %v differs from the schema engine's change ids %v", ids, schema.ChangeIDs)
	}
	rowChanges := map[string]bool{}
	for _, r := range diffRows {
		rowChanges[r.change] = true
	}
	for _, c := range Changes {
		if !rowChanges[c.ID] && c.ID != schema.ChgSchemaAdded && c.ID != schema.ChgSchemaRemoved {
			t.Errorf("%s has no row in TestDiffRows", c.ID)
		}
	}
}

func sorted(ss []string) []string { return slices.Sorted(slices.Values(ss)) }

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

// testSchemas is the tests' schema cache, as a program's would be.
var testSchemas = schema.NewCache(16 << 20)
