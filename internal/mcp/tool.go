package mcp

import (
	"encoding/json"
	"errors"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Tool is one tool definition, as served or declared. Raw keeps the exact
// definition; the parsed fields are what comparisons read.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Raw          json.RawMessage `json:"-"`
	// InputSum and OutputSum are the schemas' jsonscan.SumOf, set when the
	// definition is parsed (ParseTool, a listing's decoder), zero for an
	// absent schema: the diff compares and keys schemas by them, so it
	// reads neither schema when they are equal or their diff is cached.
	// Whoever changes a parsed schema's bytes must sum it again.
	InputSum, OutputSum jsonscan.Sum `json:"-"`
	// Sum is the jsonscan.SumOf of all a comparison reads of the
	// definition: its name, title, description and annotations as sent,
	// and the schemas' Sums; set where they are, zero when the definition
	// was built by hand. Two definitions of one Sum compare alike with any
	// third, so a comparison can be remembered under it
	// (manifest.Compared). Whoever changes a parsed definition must sum it
	// again.
	Sum jsonscan.Sum `json:"-"`
}

// ErrToolName is returned by ParseTool for a definition without a usable name.
var ErrToolName = errors.New(`tool has no "name" string`)

// ParseTool reads one tool object. A definition that is not an object, or
// whose name is missing, null, empty or not a string, yields ErrToolName. raw must be
// JSON: its members are read with keys matched exactly (JSON keys are
// case-sensitive), the last of a repeated key winning; the schemas are
// kept raw, not decoded.
func ParseTool(raw json.RawMessage) (Tool, error) {
	t := parseTool(raw)
	if t.Name == "" {
		return t, ErrToolName
	}
	return t, nil
}

// parseTool is ParseTool without the error: an unusable name is an empty
// Name.
func parseTool(raw json.RawMessage) Tool {
	t := Tool{Raw: raw}
	m, ok := jsonscan.Members(raw)
	if !ok {
		return t
	}
	name, title, description := m["name"], m["title"], m["description"]
	t.InputSchema, t.OutputSchema, t.Annotations = m["inputSchema"], m["outputSchema"], m["annotations"]
	if len(t.InputSchema) > 0 { // summed here, while its bytes are in the CPU's caches
		t.InputSum = jsonscan.SumOf(t.InputSchema)
	}
	if len(t.OutputSchema) > 0 {
		t.OutputSum = jsonscan.SumOf(t.OutputSchema)
	}
	t.Sum = jsonscan.SumOf(name, title, description, t.Annotations, t.InputSum[:], t.OutputSum[:])
	t.Name, _ = jsonscan.Unquote(name)
	// A title or description that is not a string is left empty, as
	// encoding/json leaves a string field it cannot fill.
	t.Title, _ = jsonscan.Unquote(title)
	t.Description, _ = jsonscan.Unquote(description)
	return t
}
