package catalogue

import "github.com/driftd/driftd/internal/schema"

// Direction says which side of a tool call a schema describes.
type Direction string

// The two directions. Input is contravariant (the server accepting less
// breaks callers); output is covariant (the server returning more, or
// other, breaks consumers).
const (
	Input  Direction = "input"
	Output Direction = "output"
)

// Grade ids: the BRK-* rule that decides, given the direction, whether a
// change breaks the consumers built against the declared schema.
const (
	BrkInputRequiredAdded         = "BRK-INPUT-REQUIRED-ADDED"
	BrkInputPropertyRemovedClosed = "BRK-INPUT-PROPERTY-REMOVED-CLOSED"
	BrkInputPropertyRemovedOpen   = "BRK-INPUT-PROPERTY-REMOVED-OPEN"
	BrkInputTypeNarrowed          = "BRK-INPUT-TYPE-NARROWED"
	BrkInputTypeChanged           = "BRK-INPUT-TYPE-CHANGED"
	BrkInputEnumNarrowed          = "BRK-INPUT-ENUM-NARROWED"
	BrkInputConstChanged          = "BRK-INPUT-CONST-CHANGED"
	BrkInputBoundTightened        = "BRK-INPUT-BOUND-TIGHTENED"
	BrkInputPatternChanged        = "BRK-INPUT-PATTERN-CHANGED"
	BrkInputFormatChanged         = "BRK-INPUT-FORMAT-CHANGED"
	BrkInputClosed                = "BRK-INPUT-CLOSED"
	BrkInputNullRemoved           = "BRK-INPUT-NULL-REMOVED"
	BrkOutputPropertyRemoved      = "BRK-OUTPUT-PROPERTY-REMOVED"
	BrkOutputRequiredRemoved      = "BRK-OUTPUT-REQUIRED-REMOVED"
	BrkOutputTypeWidened          = "BRK-OUTPUT-TYPE-WIDENED"
	BrkOutputTypeChanged          = "BRK-OUTPUT-TYPE-CHANGED"
	BrkOutputEnumWidened          = "BRK-OUTPUT-ENUM-WIDENED"
	BrkOutputConstChanged         = "BRK-OUTPUT-CONST-CHANGED"
	BrkOutputBoundLoosened        = "BRK-OUTPUT-BOUND-LOOSENED"
	BrkOutputNullAdded            = "BRK-OUTPUT-NULL-ADDED"
	BrkOutputSchemaRemoved        = "BRK-OUTPUT-SCHEMA-REMOVED"
	BrkOutputPatternChanged       = "BRK-OUTPUT-PATTERN-CHANGED"
	BrkOutputFormatChanged        = "BRK-OUTPUT-FORMAT-CHANGED"
	BrkOutputOpened               = "BRK-OUTPUT-OPENED"
	BrkOutputSchemaAdded          = "BRK-OUTPUT-SCHEMA-ADDED"
	BrkUnprovable                 = "BRK-UNPROVABLE"
	BrkCompatible                 = "BRK-COMPATIBLE"
	BrkAnnotationOnly             = "BRK-ANNOTATION-ONLY"
)

// Grade is one BRK-* rule. Breaking grades make MCP-DRIFT-SCHEMA findings,
// the others MCP-DRIFT-SCHEMA-COMPATIBLE; Severity is the finding's default
// severity and can be overridden per grade id.
type Grade struct {
	ID       string   `json:"id"`
	Breaking bool     `json:"breaking"`
	Severity Severity `json:"severity"`
	Doc      string   `json:"doc"`
}

// Grades is the BRK-* table.
var Grades = []Grade{
	{BrkInputRequiredAdded, true, Error, "input: a property became required; callers that omit it are refused"},
	{BrkInputPropertyRemovedClosed, true, Error, "input: a property was removed and additionalProperties is false; callers that send it are refused"},
	{BrkInputPropertyRemovedOpen, false, Warn, "input: a property was removed but others are still allowed; callers that send it may be silently ignored"},
	{BrkInputTypeNarrowed, true, Error, "input: fewer types are accepted"},
	{BrkInputTypeChanged, true, Error, "input: the accepted type changed"},
	{BrkInputEnumNarrowed, true, Error, "input: fewer values are accepted (enum values removed, or an enum or const added)"},
	{BrkInputConstChanged, true, Error, "input: the one accepted value changed"},
	{BrkInputBoundTightened, true, Error, "input: a numeric, length, count or multipleOf bound tightened"},
	{BrkInputPatternChanged, true, Error, "input: a pattern was added or changed"},
	{BrkInputFormatChanged, true, Error, "input: a format was added or changed"},
	{BrkInputClosed, true, Error, "input: additionalProperties became false; callers sending extra properties are refused"},
	{BrkInputNullRemoved, true, Error, "input: null is no longer accepted"},
	{BrkOutputPropertyRemoved, true, Error, "output: a property consumers read is no longer described"},
	{BrkOutputRequiredRemoved, true, Error, "output: a property consumers rely on is no longer guaranteed"},
	{BrkOutputTypeWidened, true, Error, "output: more types may be returned"},
	{BrkOutputTypeChanged, true, Error, "output: the returned type changed"},
	{BrkOutputEnumWidened, true, Error, "output: more values may be returned (enum values added, or the enum or const removed)"},
	{BrkOutputConstChanged, true, Error, "output: the one returned value changed"},
	{BrkOutputBoundLoosened, true, Error, "output: a bound loosened; consumers may receive values they did not expect"},
	{BrkOutputNullAdded, true, Error, "output: null may be returned"},
	{BrkOutputSchemaRemoved, true, Error, "output: the outputSchema was removed; results are no longer structured"},
	{BrkOutputPatternChanged, false, Warn, "output: a pattern was added, changed or removed"},
	{BrkOutputFormatChanged, false, Warn, "output: a format was added, changed or removed"},
	{BrkOutputOpened, false, Warn, "output: additionalProperties is no longer false; unknown properties may be returned"},
	{BrkOutputSchemaAdded, false, Info, "output: an outputSchema was added"},
	{BrkUnprovable, true, Warn, "the change could not be proven compatible or breaking (compositions, other keywords, schemas beyond driftd's bounds)"},
	{BrkCompatible, false, Info, "compatible in this direction"},
	{BrkAnnotationOnly, false, Info, "only an annotation (default, description) changed"},
}

// ChangeKind is one CHG-* id with the grade it gets in each direction. A
// property removal on the input side has two grades: closed and open.
type ChangeKind struct {
	ID     string `json:"id"`
	Doc    string `json:"doc"`
	Input  string `json:"input_grade"`
	Output string `json:"output_grade"`
	// InputOpen is the input grade when the object still allows other
	// properties, where it differs from Input.
	InputOpen string `json:"input_grade_open,omitempty"`
}

// Changes is the CHG-* table.
var Changes = []ChangeKind{
	{schema.ChgPropertyAdded, "a property was added", BrkCompatible, BrkCompatible, ""},
	{schema.ChgRequiredAdded, "a property became required", BrkInputRequiredAdded, BrkCompatible, ""},
	{schema.ChgPropertyRemoved, "a property was removed", BrkInputPropertyRemovedClosed, BrkOutputPropertyRemoved, BrkInputPropertyRemovedOpen},
	{schema.ChgRequiredRemoved, "a property is no longer required", BrkCompatible, BrkOutputRequiredRemoved, ""},
	{schema.ChgTypeNarrowed, "fewer types are allowed", BrkInputTypeNarrowed, BrkCompatible, ""},
	{schema.ChgTypeWidened, "more types are allowed", BrkCompatible, BrkOutputTypeWidened, ""},
	{schema.ChgTypeChanged, "the types changed, neither a subset of the other", BrkInputTypeChanged, BrkOutputTypeChanged, ""},
	{schema.ChgEnumValueRemoved, "enum values were removed", BrkInputEnumNarrowed, BrkCompatible, ""},
	{schema.ChgEnumAdded, "an enum was added where any value was allowed", BrkInputEnumNarrowed, BrkCompatible, ""},
	{schema.ChgEnumValueAdded, "enum values were added", BrkCompatible, BrkOutputEnumWidened, ""},
	{schema.ChgEnumRemoved, "the enum (or const) was removed", BrkCompatible, BrkOutputEnumWidened, ""},
	{schema.ChgConstChanged, "const changed", BrkInputConstChanged, BrkOutputConstChanged, ""},
	{schema.ChgBoundTightened, "a bound tightened (minimum, maximum, exclusive*, *Length, *Items, *Properties, *Contains, multipleOf, uniqueItems)", BrkInputBoundTightened, BrkCompatible, ""},
	{schema.ChgBoundLoosened, "a bound loosened", BrkCompatible, BrkOutputBoundLoosened, ""},
	{schema.ChgPatternAdded, "a pattern was added", BrkInputPatternChanged, BrkOutputPatternChanged, ""},
	{schema.ChgPatternChanged, "the pattern changed", BrkInputPatternChanged, BrkOutputPatternChanged, ""},
	{schema.ChgPatternRemoved, "the pattern was removed", BrkCompatible, BrkOutputPatternChanged, ""},
	{schema.ChgFormatAdded, "a format was added", BrkInputFormatChanged, BrkOutputFormatChanged, ""},
	{schema.ChgFormatChanged, "the format changed", BrkInputFormatChanged, BrkOutputFormatChanged, ""},
	{schema.ChgFormatRemoved, "the format was removed", BrkCompatible, BrkOutputFormatChanged, ""},
	{schema.ChgAdditionalClosed, "additionalProperties became false", BrkInputClosed, BrkCompatible, ""},
	{schema.ChgAdditionalOpened, "additionalProperties is no longer false", BrkCompatible, BrkOutputOpened, ""},
	{schema.ChgNullAdded, "null became allowed", BrkCompatible, BrkOutputNullAdded, ""},
	{schema.ChgNullRemoved, "null is no longer allowed", BrkInputNullRemoved, BrkCompatible, ""},
	{schema.ChgSchemaAdded, "the schema was added as a whole", BrkCompatible, BrkOutputSchemaAdded, ""},
	{schema.ChgSchemaRemoved, "the schema was removed as a whole", BrkUnprovable, BrkOutputSchemaRemoved, ""},
	{schema.ChgCompositionChanged, "oneOf/anyOf/allOf/not/if/then/else changed and could not be proven equal", BrkUnprovable, BrkUnprovable, ""},
	{schema.ChgKeywordChanged, "another assertion keyword changed (patternProperties, contains, x-mcp-header, …)", BrkUnprovable, BrkUnprovable, ""},
	{schema.ChgUncomparable, "a schema exceeds driftd's bounds or has a remote $ref, which is never fetched", BrkUnprovable, BrkUnprovable, ""},
	{schema.ChgDefaultChanged, "a default changed", BrkAnnotationOnly, BrkAnnotationOnly, ""},
	{schema.ChgDescriptionChanged, "a description inside the schema changed", BrkAnnotationOnly, BrkAnnotationOnly, ""},
}

var (
	gradeByID  = indexBy(Grades, func(g Grade) string { return g.ID })
	changeByID = indexBy(Changes, func(c ChangeKind) string { return c.ID })
)

func indexBy[T any](rows []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(rows))
	for _, r := range rows {
		m[key(r)] = r
	}
	return m
}

// LookupGrade returns the BRK-* rule with id.
func LookupGrade(id string) (Grade, bool) { g, ok := gradeByID[id]; return g, ok }

// GradeOf returns the grade of a schema change in direction d; for a
// property removal on the input side, ch.Open (the object still allows
// other properties) picks the milder grade.
func GradeOf(ch schema.Change, d Direction) Grade {
	c := changeByID[ch.ID]
	id := c.Output
	if d == Input {
		id = c.Input
		if ch.Open && c.InputOpen != "" {
			id = c.InputOpen
		}
	}
	return gradeByID[id]
}
