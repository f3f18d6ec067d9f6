package manifest

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp"
)

func TestLoadShapesAgree(t *testing.T) {
	var hashes []string
	for _, p := range []string{"testdata/result.json", "testdata/array.json", "testdata/envelope.json", "testdata/manifest.yaml"} {
		m, err := Load(p)
		if err != nil {
			t.Fatalf("Load(%s): %v", p, err)
		}
		if got := strings.Join(m.Names(), ","); got != "search_orders,cancel_order" && got != "cancel_order,search_orders" {
			t.Errorf("%s: names %s", p, got)
		}
		hashes = append(hashes, mustHash(t, m))
	}
	for _, h := range hashes[1:] {
		if h != hashes[0] {
			t.Fatalf("the four shapes of one manifest hash differently: %v", hashes)
		}
	}
}

func TestCanonicalIsSortedAndStable(t *testing.T) {
	m, err := Load("testdata/envelope.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Canonical(m.Tools)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(a, ".json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Canonical(again.Tools)
	if string(a) != string(b) {
		t.Fatal("canonical form is not a fixed point")
	}
	if strings.Index(string(a), `"cancel_order"`) > strings.Index(string(a), `"search_orders"`) {
		t.Fatal("tools are not sorted by name")
	}
	search := string(a)[strings.Index(string(a), `"description"`):]
	if strings.Index(search, `"description"`) > strings.Index(search, `"inputSchema"`) || strings.Index(search, `"inputSchema"`) > strings.Index(search, `"name"`) {
		t.Fatalf("keys are not in sorted order:\n%s", a)
	}
}

func TestCanonicalKeepsNumbersExact(t *testing.T) {
	m, err := Parse([]byte(`[{"name":"a","inputSchema":{"type":"object","maximum":12345678901234567890,"multipleOf":0.1}}]`), ".json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Canonical(m.Tools)
	if !strings.Contains(string(b), "12345678901234567890") || !strings.Contains(string(b), "0.1") {
		t.Fatalf("numbers changed:\n%s", b)
	}
}

// TestParseErrorsSayWhere pairs each bad manifest with its exact error:
// line and column when the problem has a place, and what was expected.
func TestParseErrorsSayWhere(t *testing.T) {
	for _, tc := range []struct{ in, ext, want string }{
		{"{\n  \"tools\": [\n    {\"name\": \"a\",}\n  ]\n}", ".json", `:3:18: not valid JSON: expected a "key" in double quotes, found '}': a trailing comma is not allowed`},
		{`{"tools": [{"name": "a"},]}`, ".json", `:1:26: not valid JSON: expected a value, found ']': a trailing comma is not allowed`},
		{`{"tools": [{"name": thing}]}`, ".json", `:1:21: not valid JSON: expected a value, found thing: a string needs "double quotes"`},
		{`{"tools": [{"name": tru}]}`, ".json", `:1:21: not valid JSON: expected a value, found tru: a string needs "double quotes"`},
		{`{"tools": [{"name" "a"}]}`, ".json", `:1:20: not valid JSON: expected ':' after the key, found '"'`},
		{`{"tools": [{"name": "a" "b": 1}]}`, ".json", `:1:25: not valid JSON: expected ',' or '}', found '"'`},
		{`{"tools": [{"name": "a"} {"name": "b"}]}`, ".json", `:1:26: not valid JSON: expected ',' or ']', found '{'`},
		{`{"tools": []} {}`, ".json", `:1:15: not valid JSON: expected the end of the file after the value, found '{'`},
		{"{\"tools\": [{\"name\": \"é\", \"x\": é}]}", ".json", `:1:31: not valid JSON: expected a value, found 'é'`},
		{`{"tools": [{"name": "a\q"}]}`, ".json", `:1:24: not valid JSON: expected an escape: \" \\ \/ \b \f \n \r \t or \uXXXX, found 'q'`},
		{`{"tools": [{"n": -x}]}`, ".json", `:1:19: not valid JSON: expected a digit, found 'x'`},
		{"{\"tools\": [\n  {\"name\": \"a\"},\n", ".json", `:3:1: not valid JSON: the file ends before the '[' at 1:11 is closed; expected a value or ']'`},
		{`{"tools": [{"name": "a`, ".json", `:1:23: not valid JSON: the file ends inside the string begun at 1:21; expected its closing '"'`},
		{"  \n", ".json", `: not valid JSON: the file is empty`},
		{"tools:\n  - name: a\n    bad: [1,\n  - name: b\n", ".yaml", ":3: not valid YAML: did not find expected node content"},
		{"tools:\n  - name: a\n    description: x\n   title: y\n", ".yaml", ":4: not valid YAML: did not find expected '-' indicator"},
		{"a: &x 1\nb: *x\n", ".yaml", ":2:4: YAML aliases are not allowed in manifests"},
		{"tools: []\ntools: []\n", ".yaml", `:2:1: key "tools" repeated`},
		{`{"tools": [{"name": 5}]}`, ".json", `: tools[0]: tool has no "name" string`},
		{`{"tools": [{"name": "a"}, {"name": "a"}]}`, ".json", `: tools[1]: tool "a" is already declared at tools[0]`},
		{`{"result": {"nope": []}, "jsonrpc": "2.0"}`, ".json", `: JSON-RPC response: "result" has no "tools" array`},
		{`{"other": 1}`, ".json", `: no "tools" array: expected a tools/list result, a bare array of tools, or a JSON-RPC response`},
	} {
		_, err := Parse([]byte(tc.in), tc.ext)
		var me *Error
		if !errors.As(err, &me) || err.Error() != "<manifest>"+tc.want {
			t.Errorf("Parse(%q) error = %v (%T)\nwant <manifest>%s", tc.in, err, err, tc.want)
		}
	}
}

// TestLoadNamesTheFile: every surface prints FILE:LINE:COLUMN: first, as
// editors and CI annotations read it.
func TestLoadNamesTheFile(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"testdata/bad-syntax.json", `testdata/bad-syntax.json:3:14: not valid JSON: expected a value, found hello: a string needs "double quotes"`},
		{"testdata/bad-syntax.yaml", `testdata/bad-syntax.yaml:3: not valid YAML: did not find expected ',' or '}'`},
	} {
		if _, err := Load(tc.path); err == nil || err.Error() != tc.want {
			t.Errorf("Load(%s) = %v\nwant %s", tc.path, err, tc.want)
		}
	}
	p := t.TempDir() + "/bad.json"
	if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.HasPrefix(err.Error(), p+":1:2: ") {
		t.Fatalf("Load error %v does not begin with %s:1:2", err, p)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/result.json", "testdata/array.json", "testdata/envelope.json", "testdata/manifest.yaml", "testdata/surface.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"name":"\u00e9"}]`))
	f.Add([]byte(`{"prompts":[{"name":"p","arguments":[{"name":"a","required":true}]}],"resourceTemplates":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b, "")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%T %v: want an *Error", err, err)
			}
			return
		}
		c, err := m.Canonical()
		if err != nil {
			t.Fatalf("parsed manifest does not canonicalise: %v", err)
		}
		m2, err := Parse(c, ".json")
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, c)
		}
		if mustHash(t, m2) != mustHash(t, m) {
			t.Fatal("canonical form hashes differently")
		}
	})
}

func mustHash(t *testing.T, m *Manifest) string {
	t.Helper()
	h, err := m.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestDeclaredSchemasCompact: a manifest written indented (as capture
// writes it) declares schemas byte-identical to the compact ones a server
// sends in the same key order, which the drift comparison then takes as
// equal without diffing them.
func TestDeclaredSchemasCompact(t *testing.T) {
	indented := []byte(`{
  "tools": [
    {
      "name": "a",
      "inputSchema": {
        "properties": {
          "q": { "type": "string", "description": "a  query" }
        },
        "type": "object"
      }
    }
  ]
}`)
	m, err := Parse(indented, ".json")
	if err != nil {
		t.Fatal(err)
	}
	served := `{"properties":{"q":{"type":"string","description":"a  query"}},"type":"object"}`
	if got := string(m.Tools[0].InputSchema); got != served {
		t.Errorf("declared inputSchema %s, want the compact %s", got, served)
	}
	doc := []byte(`{"tools":[{"name":"a","inputSchema":` + served + `}]}` + "\n")
	want, err := Parse(doc, ".json")
	if err != nil {
		t.Fatal(err)
	}
	if mustHash(t, m) != mustHash(t, want) {
		t.Error("compacting changed the manifest's hash")
	}
	// Nothing can be appended into what follows a definition.
	if raw := want.Tools[0].Raw; cap(raw) != len(raw) {
		t.Errorf("a definition can be appended into the next (cap %d, len %d)", cap(raw), len(raw))
	}
}

// TestFromBytesKeepsNoFileBytes: a manifest from FromBytes holds no slice
// of the bytes it was parsed from (a daemon keeps manifests, not files):
// overwriting them changes none of its definitions.
func TestFromBytesKeepsNoFileBytes(t *testing.T) {
	b := []byte(`{"tools": [{"name": "t", "inputSchema": {"type": "object"}}],
	  "prompts": [{"name": "p", "arguments": [{"name": "a"}]}],
	  "resources": [{"uri": "file:///r", "name": "r"}]}`)
	m, err := FromBytes("m.json", b)
	if err != nil {
		t.Fatal(err)
	}
	var before [][]byte
	for _, k := range mcp.ItemKinds {
		for _, it := range m.Items[k] {
			before = append(before, bytes.Clone(it.Raw))
		}
	}
	before = append(before, bytes.Clone(m.Tools[0].Raw))
	for i := range b {
		b[i] = 'x'
	}
	var after [][]byte
	for _, k := range mcp.ItemKinds {
		for _, it := range m.Items[k] {
			after = append(after, it.Raw)
		}
	}
	after = append(after, m.Tools[0].Raw)
	if len(after) != 3 {
		t.Fatalf("%d definitions, want 3", len(after))
	}
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			t.Errorf("definition %d changed with the file's bytes: %s", i, after[i])
		}
	}
	if w := m.Weight(); w < len(before[0])+len(before[1])+len(before[2]) {
		t.Errorf("Weight %d is less than the definitions' bytes", w)
	}
}
