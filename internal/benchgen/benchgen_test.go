package benchgen

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The benchmarks' claims about their input: ~50-node input schemas, all
// distinct, deterministic, and every tool's changed variant differs.
func TestToolsAreRealisticAndDistinct(t *testing.T) {
	seen := map[string]int{}
	for i := 0; i < 500; i++ {
		var tool struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		raw := Tool(i, false)
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		if tool.Name != Name(i) {
			t.Fatalf("tool %d is named %q, want %q", i, tool.Name, Name(i))
		}
		if n := Nodes(tool.InputSchema); n < 35 || n > 65 {
			t.Errorf("tool %d: input schema has %d nodes, want about 50", i, n)
		}
		if j, dup := seen[string(tool.InputSchema)]; dup {
			t.Errorf("tools %d and %d share an input schema", j, i)
		}
		seen[string(tool.InputSchema)] = i
		if !bytes.Equal(raw, Tool(i, false)) {
			t.Fatalf("tool %d is not deterministic", i)
		}
		if bytes.Equal(raw, Tool(i, true)) {
			t.Fatalf("tool %d: the changed variant is the same", i)
		}
	}
}
