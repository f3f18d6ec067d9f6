package probe

import (
	"encoding/json"
	"testing"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
)

// TestInputSchemaRootMemo holds checkInputSchema's answer to the schema's
// bytes whether it was worked out or remembered under the schema's Sum,
// and for a definition built by hand (no Sum).
func TestInputSchemaRootMemo(t *testing.T) {
	caches := NewCaches(0)
	for _, c := range []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, true},
		{`{"type":"string"}`, false},
		{`{"type":"string","properties":{},"type":"object"}`, true}, // the last "type" is read
		{`{"type":"object","type":"array"}`, false},
		{`{"properties":{"type":"object"}}`, false}, // a nested "type" is not the root's
	} {
		parsed, err := mcp.ParseTool(json.RawMessage(`{"name":"t","inputSchema":` + c.schema + `}`))
		if err != nil {
			t.Fatal(err)
		}
		byHand := mcp.Tool{Name: "t", InputSchema: json.RawMessage(c.schema)}
		if parsed.InputSum == (jsonscan.Sum{}) {
			t.Fatal("a parsed definition has no input Sum")
		}
		for _, tool := range []mcp.Tool{parsed, parsed, byHand} { // worked out, remembered, by hand
			if got := checkInputSchema(caches, tool, 0) == nil; got != c.ok {
				t.Errorf("%s: root is object %v, want %v", c.schema, got, c.ok)
			}
		}
	}
}
