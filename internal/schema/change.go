package schema

// Change is one difference between a declared and a served schema. Its
// ID says what changed, independent of direction; the catalogue grades it
// per direction (input or output).
type Change struct {
	ID string `json:"change"`
	// Pointer is an RFC 6901 pointer into the served schema: where the
	// changed keyword is, or for a removed property where it was.
	Pointer  string `json:"pointer"`
	Declared string `json:"declared"`
	Served   string `json:"served"`
	// Open is set on CHG-PROPERTY-REMOVED when the served object still
	// allows other properties (not additionalProperties: false).
	Open bool `json:"-"`
}

// Change ids: what changed between a declared and a served schema,
// independent of direction.
const (
	ChgPropertyAdded      = "CHG-PROPERTY-ADDED"
	ChgPropertyRemoved    = "CHG-PROPERTY-REMOVED"
	ChgRequiredAdded      = "CHG-REQUIRED-ADDED"
	ChgRequiredRemoved    = "CHG-REQUIRED-REMOVED"
	ChgTypeNarrowed       = "CHG-TYPE-NARROWED"
	ChgTypeWidened        = "CHG-TYPE-WIDENED"
	ChgTypeChanged        = "CHG-TYPE-CHANGED"
	ChgEnumValueRemoved   = "CHG-ENUM-VALUE-REMOVED"
	ChgEnumValueAdded     = "CHG-ENUM-VALUE-ADDED"
	ChgEnumAdded          = "CHG-ENUM-ADDED"
	ChgEnumRemoved        = "CHG-ENUM-REMOVED"
	ChgConstChanged       = "CHG-CONST-CHANGED"
	ChgBoundTightened     = "CHG-BOUND-TIGHTENED"
	ChgBoundLoosened      = "CHG-BOUND-LOOSENED"
	ChgPatternAdded       = "CHG-PATTERN-ADDED"
	ChgPatternChanged     = "CHG-PATTERN-CHANGED"
	ChgPatternRemoved     = "CHG-PATTERN-REMOVED"
	ChgFormatAdded        = "CHG-FORMAT-ADDED"
	ChgFormatChanged      = "CHG-FORMAT-CHANGED"
	ChgFormatRemoved      = "CHG-FORMAT-REMOVED"
	ChgAdditionalClosed   = "CHG-ADDITIONAL-PROPERTIES-CLOSED"
	ChgAdditionalOpened   = "CHG-ADDITIONAL-PROPERTIES-OPENED"
	ChgNullAdded          = "CHG-NULL-ADDED"
	ChgNullRemoved        = "CHG-NULL-REMOVED"
	ChgSchemaAdded        = "CHG-SCHEMA-ADDED"
	ChgSchemaRemoved      = "CHG-SCHEMA-REMOVED"
	ChgCompositionChanged = "CHG-COMPOSITION-CHANGED"
	ChgKeywordChanged     = "CHG-KEYWORD-CHANGED"
	ChgUncomparable       = "CHG-UNCOMPARABLE"
	ChgDefaultChanged     = "CHG-DEFAULT-CHANGED"
	ChgDescriptionChanged = "CHG-DESCRIPTION-CHANGED"
)

// ChangeIDs lists every change id above, the engine's whole output
// vocabulary; the catalogue's tests hold its CHG table to it. Diff emits
// all but ChgSchemaAdded and ChgSchemaRemoved, which callers use for a
// schema present on one side only.
var ChangeIDs = []string{
	ChgPropertyAdded, ChgPropertyRemoved, ChgRequiredAdded, ChgRequiredRemoved,
	ChgTypeNarrowed, ChgTypeWidened, ChgTypeChanged,
	ChgEnumValueRemoved, ChgEnumValueAdded, ChgEnumAdded, ChgEnumRemoved, ChgConstChanged,
	ChgBoundTightened, ChgBoundLoosened,
	ChgPatternAdded, ChgPatternChanged, ChgPatternRemoved, ChgFormatAdded, ChgFormatChanged, ChgFormatRemoved,
	ChgAdditionalClosed, ChgAdditionalOpened, ChgNullAdded, ChgNullRemoved,
	ChgSchemaAdded, ChgSchemaRemoved, ChgCompositionChanged, ChgKeywordChanged, ChgUncomparable,
	ChgDefaultChanged, ChgDescriptionChanged,
}
