package catalogue

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/schema"
)

// CompareTool returns the drift findings for one tool that is both
// declared (d) and served (s): schema changes graded by direction,
// effective annotation hints, description and title. The same comparison
// serves the probe, driftd diff and the run-to-run diff. Schema diffs go
// through c, the program's schema cache (nil: computed, not kept).
func CompareTool(c *schema.Cache, d, s mcp.Tool) []Finding {
	return compareTool(c, d, s, againstManifest)
}

// CompareServed is CompareTool between two served definitions of a tool,
// the previous run's (before) and this run's (now): the same findings,
// whose messages name the sides "before" and "now" instead of "declared"
// and "served".
func CompareServed(c *schema.Cache, before, now mcp.Tool) []Finding {
	return compareTool(c, before, now, runToRun)
}

// sides name the two definitions a message compares.
type sides struct{ old, new string }

var (
	againstManifest = sides{"declared", "served"}
	runToRun        = sides{"before", "now"}
)

func compareTool(c *schema.Cache, d, s mcp.Tool, sd sides) []Finding {
	in := schemaChanges(c, Input, d.InputSchema, s.InputSchema, d.InputSum, s.InputSum)
	outc := schemaChanges(c, Output, d.OutputSchema, s.OutputSchema, d.OutputSum, s.OutputSum)
	tx := toolTexts(d, s, sd)
	var out []Finding
	if n := len(in) + len(outc); n > 0 {
		// One allocation for the tool's findings (unless its hints changed
		// too): a manifest remembers them (manifest.Compared).
		out = make([]Finding, 0, n+tx.changed())
	}
	out = compareSchema(out, s.Name, Input, in)
	out = compareSchema(out, s.Name, Output, outc)
	if !bytes.Equal(d.Annotations, s.Annotations) { // the same bytes decode to the same hints and title
		out = append(out, compareAnnotations(s.Name, d.Annotations, s.Annotations, sd)...)
	}
	return append(out, compareTexts(&tx)...)
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// same reports whether two schemas are the same bytes: by their Sums when
// both are known (jsonscan.Sum: a server cannot aim for a collision), else
// byte for byte.
func same(declared, served json.RawMessage, dsum, ssum jsonscan.Sum) bool {
	var zero jsonscan.Sum
	if dsum != zero && ssum != zero {
		return dsum == ssum
	}
	return bytes.Equal(declared, served)
}

// schemaChanges are the changes between a declared and a served schema
// in direction dir. Identical schemas are the common case and cost a
// comparison of their Sums (dsum, ssum; zero when unknown, and then of
// their bytes), without reading either schema.
func schemaChanges(c *schema.Cache, dir Direction, declared, served json.RawMessage, dsum, ssum jsonscan.Sum) []schema.Change {
	switch dp, sp := present(declared), present(served); {
	case !dp && !sp:
		return nil
	case !dp:
		return []schema.Change{{ID: schema.ChgSchemaAdded, Declared: "no " + string(dir) + "Schema", Served: string(dir) + "Schema present"}}
	case !sp:
		return []schema.Change{{ID: schema.ChgSchemaRemoved, Declared: string(dir) + "Schema present", Served: "no " + string(dir) + "Schema"}}
	case same(declared, served, dsum, ssum):
		return nil
	default:
		return c.DiffFrom(dsum, ssum, declared, served)
	}
}

// compareSchema appends to out a finding per change of tool's schema in
// direction dir, graded by direction.
func compareSchema(out []Finding, tool string, dir Direction, changes []schema.Change) []Finding {
	for _, c := range changes {
		g := GradeOf(c, dir)
		rule := DriftSchemaCompatible
		if g.Breaking {
			rule = DriftSchema
		}
		f := New(rule, tool, string(dir)+"Schema: "+c.Declared+" → "+c.Served)
		f.Severity, f.Direction, f.Pointer, f.Change, f.Grade = g.Severity, string(dir), c.Pointer, c.ID, g.ID
		out = append(out, f)
	}
	return out
}

// hintDefaults are the effective values of absent tool annotation hints.
var hintDefaults = []struct {
	name string
	def  bool
}{
	{"readOnlyHint", false},
	{"destructiveHint", true},
	{"idempotentHint", false},
	{"openWorldHint", true},
}

// compareAnnotations compares effective hint values, so a server that
// spells out a default is not drift.
func compareAnnotations(tool string, declared, served json.RawMessage, sd sides) []Finding {
	var d, s map[string]json.RawMessage
	_ = json.Unmarshal(declared, &d)
	_ = json.Unmarshal(served, &s)
	var out []Finding
	for _, h := range hintDefaults {
		dv, dDefault := hint(d, h.name, h.def)
		sv, sDefault := hint(s, h.name, h.def)
		if dv != sv {
			f := New(DriftAnnotation, tool,
				fmt.Sprintf("%s %s %v%s, %s %v%s", h.name, sd.old, dv, dflt(dDefault), sd.new, sv, dflt(sDefault)))
			f.Pointer = "/annotations/" + h.name
			out = append(out, f)
		}
	}
	return out
}

// texts are the model-facing texts of one definition, declared and served.
// They are held in place, not in a slice: one allocation per tool was a
// sixth of a warm diff.
type texts struct {
	kind, name string
	sides      sides
	// pairs[:n] are (pointer, what, declared, served), compared in order.
	pairs [3][4]string
	n     int
}

func (tx *texts) add(pointer, what, declared, served string) {
	tx.pairs[tx.n] = [4]string{pointer, what, declared, served}
	tx.n++
}

// changed is how many of the texts differ: the findings compareTexts
// returns.
func (tx *texts) changed() int {
	n := 0
	for _, p := range tx.pairs[:tx.n] {
		if p[2] != p[3] {
			n++
		}
	}
	return n
}

func toolTexts(d, s mcp.Tool, sd sides) texts {
	tx := texts{name: s.Name, sides: sd}
	if !bytes.Equal(d.Annotations, s.Annotations) {
		tx.add("/annotations/title", "annotations.title", annotationTitle(d.Annotations), annotationTitle(s.Annotations))
	}
	tx.add("/description", "description", d.Description, s.Description)
	tx.add("/title", "title", d.Title, s.Title)
	return tx
}

// compareTexts compares the texts a model reads: a tool's
// annotations.title, description and title; an item's description, title
// and (for resources and templates, whose identity is elsewhere) name.
// A description is MCP-DRIFT-DESCRIPTION, every other text
// MCP-DRIFT-TITLE; both are reported by length and digest only.
func compareTexts(tx *texts) []Finding {
	var out []Finding
	for _, p := range tx.pairs[:tx.n] {
		if p[2] == p[3] {
			continue
		}
		rule := DriftTitle
		if p[0] == "/description" {
			rule = DriftDescription
		}
		f := textChanged(rule, tx.name, p[0], p[1], p[2], p[3], tx.sides)
		f.Kind = tx.kind
		out = append(out, f)
	}
	return out
}

// annotationTitle returns annotations.title, "" when absent or not a string.
func annotationTitle(annotations json.RawMessage) string {
	var m map[string]json.RawMessage // exact key match, unlike a struct field
	_ = json.Unmarshal(annotations, &m)
	var title string
	_ = json.Unmarshal(m["title"], &title)
	return title
}

// hint returns a hint's effective value and whether it is the default.
func hint(m map[string]json.RawMessage, name string, def bool) (bool, bool) {
	var v bool
	if raw, ok := m[name]; ok && json.Unmarshal(raw, &v) == nil {
		return v, false
	}
	return def, true
}

func dflt(isDefault bool) string {
	if isDefault {
		return " (by default)"
	}
	return ""
}

// textChanged reports a changed text by length and digest, never by
// content: the text is server-controlled and could carry anything.
func textChanged(rule, tool, pointer, what, declared, served string, sd sides) Finding {
	f := New(rule, tool, fmt.Sprintf("%s changed: %s %d bytes (sha256 %s), %s %d bytes (sha256 %s)",
		what, sd.old, len(declared), digest(declared), sd.new, len(served), digest(served)))
	f.Pointer = pointer
	return f
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// Ids of run-to-run changes of the served set that are not schema
// changes: the daemon counts served changes by CHG id
// (driftd_served_changes_total), schema changes by their own CHG-* id.
const (
	ChgToolAdded       = "CHG-TOOL-ADDED"
	ChgToolRemoved     = "CHG-TOOL-REMOVED"
	ChgToolAnnotation  = "CHG-TOOL-ANNOTATION"
	ChgToolDescription = "CHG-TOOL-DESCRIPTION"
	ChgToolTitle       = "CHG-TOOL-TITLE"
)

// ServedChangeIDs lists the non-schema served-change ids.
var ServedChangeIDs = []string{ChgToolAdded, ChgToolRemoved, ChgToolAnnotation, ChgToolDescription, ChgToolTitle}

// ServedChangeID maps a CompareTool finding to its served-change id: the
// schema change id, or the tool-level id for its rule.
func ServedChangeID(f Finding) string {
	switch f.Rule {
	case DriftAnnotation:
		return ChgToolAnnotation
	case DriftDescription:
		return ChgToolDescription
	case DriftTitle:
		return ChgToolTitle
	}
	return f.Change
}
