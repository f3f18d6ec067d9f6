package mcp

import (
	"encoding/json"
	"testing"
)

func TestParseToolMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`{"name":"a","title":"T","description":"d \"q\" }","inputSchema":{"type":"object","properties":{"x":{"enum":["}",{"a":[1,2]}]}}},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`,
		` { "name" : "b" , "inputSchema" : { } , "name" : "c" } `,
		`{"inputSchema":{"type":"object"}}`,
		`{"name":5}`,
		`[1,2]`,
		`"x"`,
		`{"na\u006de":"d","description":null}`,
	} {
		got, err := ParseTool(json.RawMessage(raw))
		var want struct {
			Name         *string         `json:"name"`
			Title        string          `json:"title"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  json.RawMessage `json:"annotations"`
		}
		werr := json.Unmarshal([]byte(raw), &want)
		if werr != nil || want.Name == nil {
			if err == nil {
				t.Errorf("%s: ParseTool accepted, encoding/json did not (%v)", raw, werr)
			}
			continue
		}
		if err != nil || got.Name != *want.Name || got.Title != want.Title || got.Description != want.Description ||
			string(got.InputSchema) != string(want.InputSchema) || string(got.OutputSchema) != string(want.OutputSchema) ||
			string(got.Annotations) != string(want.Annotations) {
			t.Errorf("%s: got %+v, %v; want %+v", raw, got, err, want)
		}
	}
}

func FuzzParseTool(f *testing.F) {
	f.Add([]byte(`{"name":"a","inputSchema":{"type":"object"}}`))
	f.Add([]byte(`{"name":"\"}","x":[{"y":"]"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		got, err := ParseTool(b)
		// Member names are case-sensitive in MCP: the reference is a map,
		// not encoding/json's case-insensitive struct matching.
		var fields map[string]json.RawMessage
		var name string
		if json.Unmarshal(b, &fields) != nil || json.Unmarshal(fields["name"], &name) != nil || name == "" {
			if err == nil {
				t.Fatalf("%s: accepted without a non-empty name string", b)
			}
			return
		}
		if err != nil || got.Name != name || string(got.InputSchema) != string(fields["inputSchema"]) {
			t.Fatalf("%s: got %q %v, want %q", b, got.Name, err, name)
		}
	})
}

// TestToolSumCoversWhatIsCompared: Sum changes with every member a
// comparison reads (manifest.Compared remembers answers under it), and
// only with those.
func TestToolSumCoversWhatIsCompared(t *testing.T) {
	sum := func(raw string) [16]byte {
		t.Helper()
		tl, err := ParseTool(json.RawMessage(raw))
		if err != nil || tl.Sum == ([16]byte{}) {
			t.Fatalf("%s: %v, sum %x", raw, err, tl.Sum)
		}
		return tl.Sum
	}
	base := `{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`
	b := sum(base)
	for _, changed := range []string{
		`{"name":"b","title":"T","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a","title":"U","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a","title":"T","description":"e","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"string"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":false}}`,
		`{"name":"a","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true}}`,
		// The input schema moved to the output's place: the sums are of
		// their places, not a bag of members.
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"array"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	} {
		if sum(changed) == b {
			t.Errorf("%s: same Sum as %s", changed, base)
		}
	}
	for _, same := range []string{
		`{"annotations":{"readOnlyHint":true},"outputSchema":{"type":"array"},"inputSchema":{"type":"object"},"description":"d","title":"T","name":"a"}`,
		`{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true},"_meta":{"x":1},"icons":[]}`,
	} {
		if sum(same) != b {
			t.Errorf("%s: a Sum other than %s's, though no compared member differs", same, base)
		}
	}
}
