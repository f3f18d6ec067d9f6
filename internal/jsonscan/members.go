package jsonscan

import "encoding/json"

// Untrusted JSON is read by encoding/json only. These read a value one
// level at a time, for callers that say what is wrong with a document
// member by member rather than only that it is wrong.

// Members returns an object's members by key, the last of a repeated key
// winning, keys matched exactly (JSON keys are case-sensitive); false
// when b is no object.
func Members(b []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// Elements returns an array's elements; false when b is no array.
func Elements(b []byte) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if json.Unmarshal(b, &a) != nil || a == nil {
		return nil, false
	}
	return a, true
}

// Unquote returns the text of a JSON string; false when b is no string.
func Unquote(b []byte) (string, bool) {
	var s string
	if len(b) == 0 || b[0] != '"' || json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}
