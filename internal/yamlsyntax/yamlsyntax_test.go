package yamlsyntax

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		msg  string
	}{
		// yaml.v3 says line 1: where the sequence began, counted from 0.
		{"tools:\n  - name: a\n    description: x\n   title: y\n", 4, "did not find expected '-' indicator"},
		// yaml.v3 says line 2; the brace left open is on line 3.
		{"tools:\n  - name: a\n    inputSchema: {type: object\n  - name: b\n", 3, "did not find expected ',' or '}'"},
		{"a: b\n\tc: d\n", 2, "found a tab character that violates indentation"},
		{"a: 'open\n", 2, "found unexpected end of stream"},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.in), &n)
		if err == nil {
			t.Fatalf("%q parses", tc.in)
		}
		line, msg := Locate([]byte(tc.in), err)
		if line != tc.line || msg != tc.msg {
			t.Errorf("Locate(%q) = %d, %q; want %d, %q (yaml said %v)", tc.in, line, msg, tc.line, tc.msg, err)
		}
	}
}
