package mcp

import (
	"encoding/json"
	"errors"
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
// whose name is missing or not a string, yields ErrToolName.
func ParseTool(raw json.RawMessage) (Tool, error) {
	var shape struct {
		Name        json.RawMessage `json:"name"`
		Title       json.RawMessage `json:"title"`
		Description json.RawMessage `json:"description"`
		Tool
	}
	if err := json.Unmarshal(raw, &shape); err != nil && !isTypeError(err) {
		return Tool{Raw: raw}, ErrToolName
	}
	t := shape.Tool
	t.Raw = raw
	if json.Unmarshal(shape.Name, &t.Name) != nil {
		return t, ErrToolName
	}
	_ = json.Unmarshal(shape.Title, &t.Title)
	_ = json.Unmarshal(shape.Description, &t.Description)
	return t, nil
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}
