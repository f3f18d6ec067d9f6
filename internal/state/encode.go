package state

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// encodeFile renders v, a JSON object, the way every state file is
// written: one top-level member a line, each value compact. A person
// reading the file with less or jq finds its fields; nothing nested is
// indented, so the file stays linear in what it holds. Indenting every
// level (json.MarshalIndent) would re-indent an embedded baseline at each
// of its levels: a 36 KB surface nested deep grew to hundreds of
// megabytes that way. HTML characters are not escaped, so an embedded
// json.RawMessage keeps its bytes.
func encodeFile(v any) ([]byte, error) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(compact.Bytes()))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	out := make([]byte, 0, compact.Len()+compact.Len()/64+16)
	out = append(out, '{')
	for i := 0; dec.More(); i++ {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(key)
		out = append(append(append(append(out, "\n  "...), name...), ": "...), val...)
	}
	return append(out, "\n}\n"...), nil
}
