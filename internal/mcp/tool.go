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
}

// ErrToolName is returned by ParseTool for a definition without a usable name.
var ErrToolName = errors.New(`tool has no "name" string`)

// ParseTool reads one tool object. A definition that is not an object, or
// whose name is missing, null, empty or not a string, yields ErrToolName. raw must be
// valid JSON (as every element of a decoded page is): the top-level members
// are located by one scan, without decoding the schemas.
func ParseTool(raw json.RawMessage) (Tool, error) {
	t := Tool{Raw: raw}
	fields, ok := jsonscan.Members(raw)
	if !ok {
		return t, ErrToolName
	}
	t.InputSchema, t.OutputSchema, t.Annotations = fields["inputSchema"], fields["outputSchema"], fields["annotations"]
	name := fields["name"]
	if len(name) == 0 || name[0] != '"' || json.Unmarshal(name, &t.Name) != nil || t.Name == "" {
		return t, ErrToolName
	}
	_ = json.Unmarshal(fields["title"], &t.Title)
	_ = json.Unmarshal(fields["description"], &t.Description)
	return t, nil
}
