package jsonscan

import "encoding/json"

// Elements returns the elements of the JSON array b as sub-slices of b,
// without copying or decoding them. It reports false when b is not an
// array. b must be valid JSON.
func Elements(b []byte) ([]json.RawMessage, bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	out := []json.RawMessage{}
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		vs := i
		i = SkipValue(b, i)
		out = append(out, json.RawMessage(b[vs:i:i]))
		i = SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
	}
	return out, i < len(b)
}
