package manifest

import (
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/mcp"
)

func TestSurfaceManifest(t *testing.T) {
	m, err := Load("testdata/surface.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range mcp.Kinds {
		if !m.Declares(k) {
			t.Errorf("does not declare %s", k)
		}
	}
	p := m.Items[mcp.KindPrompt]
	if len(p) != 2 || p[0].Key != "summarise_order" || len(p[0].Arguments) != 2 || !p[0].Arguments[0].Required || p[0].Arguments[1].Required {
		t.Errorf("prompts read as %+v", p)
	}
	if r := m.Items[mcp.KindResource]; len(r) != 1 || r[0].Key != "orders://recent" || r[0].MimeType != "application/json" {
		t.Errorf("resources read as %+v", r)
	}
	if rt := m.Items[mcp.KindResourceTemplate]; len(rt) != 1 || rt[0].Key != "order" || rt[0].URI != "orders://{order_id}" {
		t.Errorf("templates read as %+v", rt)
	}
	a, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(a, ".json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := again.Canonical()
	if string(a) != string(b) {
		t.Fatalf("canonical form is not a fixed point:\n%s\n%s", a, b)
	}
	if strings.Index(string(a), `"apology"`) > strings.Index(string(a), `"summarise_order"`) {
		t.Errorf("prompts are not sorted by name:\n%s", a)
	}
	h1, _ := m.Hash()
	h2, _ := again.Hash()
	if h1 != h2 {
		t.Error("a surface and its canonical form hash differently")
	}
}

func TestToolsOnlyManifestDeclaresToolsOnly(t *testing.T) {
	m, err := Load("testdata/result.json")
	if err != nil {
		t.Fatal(err)
	}
	if !m.Declares(mcp.KindTool) {
		t.Error("a tools-only manifest does not declare tools")
	}
	for _, k := range mcp.ItemKinds {
		if m.Declares(k) {
			t.Errorf("a tools-only manifest declares %s", k)
		}
	}
	c, _ := m.Canonical()
	if strings.Contains(string(c), "prompts") || !strings.HasPrefix(string(c), "{\n  \"tools\"") {
		t.Errorf("a tools-only manifest renders as more than a tools/list result:\n%s", c)
	}
}

func TestPromptsOnlyManifestDeclaresNoTools(t *testing.T) {
	m, err := Parse([]byte(`{"prompts":[{"name":"p"}],"resources":[]}`), ".json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Declares(mcp.KindTool) || !m.Declares(mcp.KindPrompt) || !m.Declares(mcp.KindResource) || m.Declares(mcp.KindResourceTemplate) {
		t.Errorf("declares tools=%v prompts=%v resources=%v templates=%v", m.Declares(mcp.KindTool),
			m.Declares(mcp.KindPrompt), m.Declares(mcp.KindResource), m.Declares(mcp.KindResourceTemplate))
	}
	// The same in a JSON-RPC envelope and in YAML.
	for _, in := range []struct{ b, ext string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"p"}]}}`, ".json"},
		{"prompts:\n  - name: p\n", ".yaml"},
	} {
		m, err := Parse([]byte(in.b), in.ext)
		if err != nil {
			t.Fatalf("%s: %v", in.b, err)
		}
		if m.Declares(mcp.KindTool) || len(m.Items[mcp.KindPrompt]) != 1 {
			t.Errorf("%s: read as %+v", in.b, m)
		}
	}
}

func TestBadItems(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"prompts":[{"description":"x"}]}`, `prompts[0]: "name" missing`},
		{`{"prompts":[{"name":"p"},{"name":"p"}]}`, `prompts[1]: prompt "p" is already declared at prompts[0]`},
		{`{"prompts":[{"name":"p","arguments":[{"required":true}]}]}`, `prompts[0]: arguments[0] has no "name" string`},
		{`{"prompts":[{"name":"p","arguments":[{"name":"a","required":"yes"}]}]}`, `prompts[0]: arguments[0] "required" is not a boolean`},
		{`{"resources":[{"name":"r"}]}`, `resources[0]: "uri" missing`},
		{`{"resourceTemplates":[{"name":"t","uriTemplate":5}]}`, `resourceTemplates[0]: "uriTemplate" is not a string`},
		{`{"resourceTemplates":{}}`, `"resourceTemplates" is not an array`},
		{`{"tools":[],"prompts":[7]}`, `prompts[0]: not an object`},
	} {
		_, err := Parse([]byte(tc.in), ".json")
		if err == nil || err.Error() != "<manifest>: "+tc.want {
			t.Errorf("%s: got %v, want %s", tc.in, err, tc.want)
		}
	}
}
