package manifest

import (
	"os"
	"strings"
	"testing"
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
		hashes = append(hashes, m.Hash)
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

func TestParseErrorsSayWhere(t *testing.T) {
	for _, tc := range []struct{ in, ext, want string }{
		{"{\n  \"tools\": [\n    {\"name\": \"a\",}\n  ]\n}", ".json", "line 3, column 18"},
		{"tools:\n  - name: a\n    bad: [1,\n  - name: b\n", ".yaml", "line 3"},
		{`{"tools": [{"name": 5}]}`, ".json", `tools[0]: tool has no "name" string`},
		{`{"tools": [{"name": "a"}, {"name": "a"}]}`, ".json", `tools[1]: tool "a" is already declared at tools[0]`},
		{`{"result": {"nope": []}, "jsonrpc": "2.0"}`, ".json", `"result" has no "tools" array`},
		{`{"other": 1}`, ".json", `no "tools" array`},
		{"a: &x 1\nb: *x\n", ".yaml", "aliases are not allowed"},
		{"tools: []\ntools: []\n", ".yaml", "line 2"},
	} {
		_, err := Parse([]byte(tc.in), tc.ext)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	p := t.TempDir() + "/bad.json"
	if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("Load error %v does not name %s", err, p)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/result.json", "testdata/array.json", "testdata/envelope.json", "testdata/manifest.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"name":"\u00e9"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b, "")
		if err != nil {
			return
		}
		c, err := Canonical(m.Tools)
		if err != nil {
			t.Fatalf("parsed manifest does not canonicalise: %v", err)
		}
		m2, err := Parse(c, ".json")
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, c)
		}
		if m2.Hash != m.Hash {
			t.Fatal("canonical form hashes differently")
		}
	})
}
