package mcp

import "encoding/json"

// Server answers are read by encoding/json only: these are the shapes
// driftd reads loosely, member by member, to say what is wrong with an
// answer rather than only that it is wrong.

// members returns an object's members by key, the last of a repeated key
// winning, keys matched exactly (JSON keys are case-sensitive); false
// when b is no object.
func members(b []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// elements returns an array's elements; false when b is no array.
func elements(b []byte) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if json.Unmarshal(b, &a) != nil || a == nil {
		return nil, false
	}
	return a, true
}

// unquote returns the text of a JSON string; false when b is no string.
func unquote(b []byte) (string, bool) {
	var s string
	if len(b) == 0 || b[0] != '"' || json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}
