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
// whose name is missing or not a string, yields ErrToolName. raw must be
// valid JSON (as every element of a decoded page is): the top-level members
// are located by one scan, without decoding the schemas.
func ParseTool(raw json.RawMessage) (Tool, error) {
	t := Tool{Raw: raw}
	fields, ok := topLevel(raw)
	if !ok {
		return t, ErrToolName
	}
	t.InputSchema, t.OutputSchema, t.Annotations = fields["inputSchema"], fields["outputSchema"], fields["annotations"]
	if json.Unmarshal(fields["name"], &t.Name) != nil {
		return t, ErrToolName
	}
	_ = json.Unmarshal(fields["title"], &t.Title)
	_ = json.Unmarshal(fields["description"], &t.Description)
	return t, nil
}

// topLevel maps the members of the JSON object b to their raw values; the
// last duplicate wins, as in encoding/json. It reports false when b is not
// an object.
func topLevel(b []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	out := make(map[string]json.RawMessage, 8)
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = skipValue(b, i)
		var key string
		if json.Unmarshal(b[ks:i], &key) != nil {
			return nil, false
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vs := i
		i = skipValue(b, i)
		out[key] = json.RawMessage(b[vs:i])
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return out, i < len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at i.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
		i++
	}
	return i
}
