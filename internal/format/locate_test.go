package format

import (
	"testing"

	"github.com/driftd/driftd/internal/mcp"
)

func TestLocate(t *testing.T) {
	const jsonResult = "{\n \"tools\": [\n  {\"name\": \"a\",\n   \"inputSchema\": {\"type\": \"object\",\n    \"properties\": {\n     \"x\": {\"type\": \"string\"}}}}\n ],\n \"prompts\": [\n  {\"name\": \"p\"}]\n}\n"
	const envelope = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\n\"tools\": [\n{\"name\": \"a\"}]}}"
	const array = "[\n{\"name\": \"z\"},\n{\"name\": \"a\"}\n]"
	const yamlDoc = "tools:\n  - name: a\n    inputSchema:\n      type: object\n      properties:\n        x:\n          type: string\nresources:\n  - uri: file:///r\n    name: r\n"
	cases := []struct {
		name, path, body string
		kind             mcp.Kind
		item, dir, ptr   string
		want             int
	}{
		{"tool", "m.json", jsonResult, mcp.KindTool, "a", "", "", 3},
		{"schema pointer", "m.json", jsonResult, mcp.KindTool, "a", "input", "/properties/x", 6},
		{"deepest part of a pointer", "m.json", jsonResult, mcp.KindTool, "a", "input", "/properties/y/type", 5},
		{"no such schema", "m.json", jsonResult, mcp.KindTool, "a", "output", "/properties/x", 3},
		{"undeclared: the list", "m.json", jsonResult, mcp.KindTool, "b", "", "", 2},
		{"prompt", "m.json", jsonResult, mcp.KindPrompt, "p", "", "", 9},
		{"undeclared list", "m.json", jsonResult, mcp.KindResource, "r", "", "", 1},
		{"envelope", "m.json", envelope, mcp.KindTool, "a", "", "", 3},
		{"bare array", "m.json", array, mcp.KindTool, "a", "", "", 3},
		{"yaml schema pointer", "m.yaml", yamlDoc, mcp.KindTool, "a", "input", "/properties/x/type", 7},
		{"yaml resource by uri", "m.yml", yamlDoc, mcp.KindResource, "file:///r", "", "", 9},
		{"yaml without extension", "m", yamlDoc, mcp.KindTool, "a", "", "", 2},
		{"not parseable", "m.json", "{\"tools\": [", mcp.KindTool, "a", "", "", 1},
		{"too deep", "m.json", "[" + string(make([]byte, 0)) + deep(600) + "]", mcp.KindTool, "a", "", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Locate(File{Path: c.path, Bytes: []byte(c.body)})
			if got := l.Line(c.kind, c.item, c.dir, c.ptr); got != c.want {
				t.Errorf("line %d, want %d", got, c.want)
			}
		})
	}
}

func deep(n int) string {
	s := ""
	for range n {
		s += "["
	}
	for range n {
		s += "]"
	}
	return s
}
