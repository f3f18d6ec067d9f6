package schema

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/jsonscan"
)

// plainAgrees reports how plainSchema and the compiler disagree on raw:
// a schema plainSchema calls valid must compile.
func plainAgrees(raw []byte) string {
	if jsonscan.Depth(raw) > MaxDepth || !plainSchema(raw) {
		return ""
	}
	if err := check(raw); err != nil {
		return "plain, but the compiler says: " + err.Error()
	}
	return ""
}

// Plain schemas, each valid without compiling.
var plainValid = []string{
	`{"type":"object"}`,
	`{"type":"object","properties":{"a":{"type":"string","minLength":1,"maxLength":5,"pattern":"^[a-z]+$","format":"email"}},"required":["a"],"additionalProperties":false}`,
	`{"type":["string","null"],"enum":["x",null,1.5,{"k":[true]}],"default":"x","description":"line\none \"quoted\""}`,
	`{"$defs":{"n":{"type":"integer","minimum":-3,"exclusiveMaximum":10.5,"multipleOf":0.5}},"properties":{"a":{"$ref":"#/$defs/n"},"b":{"items":{"$ref":"#/$defs/n"}}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","anyOf":[{"type":"string"},true,{"not":{"const":3}}]}`,
	`{"type":"array","prefixItems":[{"type":"string"}],"items":false,"minItems":0,"uniqueItems":true,"contains":{"type":"integer"},"maxContains":2}`,
	`{"properties":{"r":{"type":"string","x-mcp-header":"Region"}},"patternProperties":{"^x-":{"type":"string"}},"propertyNames":{"maxLength":8}}`,
	`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":[]},"dependentSchemas":{"a":{"required":["b"]}},"examples":[{}]}`,
	`{"type":"object","title":"T","deprecated":true,"readOnly":false,"$comment":"c","unevaluatedProperties":false}`,
}

// Schemas plainSchema leaves to the compiler: valid or not, they are
// outside its vocabulary or need the compiler's judgement.
var plainDeclined = []string{
	`{"type":"strin"}`,
	`{"type":[]}`,
	`{"type":["string","string"]}`,
	`{"minLength":-1}`,
	`{"minLength":1.5}`,
	`{"minimum":"1"}`,
	`{"minimum":1e400}`,
	`{"multipleOf":0}`,
	`{"pattern":"("}`,
	`{"patternProperties":{"(":{}}}`,
	`{"$ref":"#/$defs/missing"}`,
	`{"$ref":"#/$defs/a~1b","$defs":{"a/b":{}}}`,
	`{"$ref":"https://example.invalid/s.json"}`,
	`{"$ref":"#/properties/a","properties":{"a":{}}}`,
	`{"properties":{"a":{"$defs":{"x":{}}}}}`,
	`{"type":"string","type":"string"}`,
	`{"enum":[{"a":1,"a":2}]}`,
	`{"required":["a","a"]}`,
	`{"required":[1]}`,
	`{"anyOf":[]}`,
	`{"items":[{"type":"string"}]}`,
	`{"items":5}`,
	`{"exclusiveMinimum":true}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
	`{"$schema":"https://example.invalid/dialect"}`,
	`{"$id":"https://example.invalid/s","type":"object"}`,
	`{"definitions":{"a":{}},"$ref":"#/definitions/a"}`,
	`{"dependencies":{"a":["b"]}}`,
	`{"description":"\ud800"}`,
	"{\"description\":\"\xff\"}",
	`{"unknown":1}`,
	`true`,
	`[]`,
	`{"type":"object"`,
}

func TestPlainSchemasNeedNoCompiler(t *testing.T) {
	for _, s := range plainValid {
		if !plainSchema([]byte(s)) {
			t.Errorf("%s: not plain", s)
		}
		if why := plainAgrees([]byte(s)); why != "" {
			t.Errorf("%s: %s", s, why)
		}
	}
	for _, s := range plainDeclined {
		if plainSchema([]byte(s)) {
			t.Errorf("%s: plain, want it compiled", s)
		}
		if got, want := errText(Check([]byte(s))), errText(check([]byte(s))); got != want {
			t.Errorf("%s: Check says %q, the compiler %q", s, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPlainSchemaAgreesWithCompiler holds the fast path to the compiler on
// a corpus: the benchmarks' tools (every one plain), the fuzz corpus in
// testdata, the golden test's pairs and thousands of mutated schemas.
func TestPlainSchemaAgreesWithCompiler(t *testing.T) {
	var corpus [][]byte
	for i := range 300 {
		for _, changed := range []bool{false, true} {
			var tool struct{ InputSchema, OutputSchema json.RawMessage }
			if err := json.Unmarshal(benchgen.Tool(i, changed), &tool); err != nil {
				t.Fatal(err)
			}
			for _, s := range [][]byte{tool.InputSchema, tool.OutputSchema} {
				if !plainSchema(s) {
					t.Errorf("benchgen tool %d: %s is not plain", i, s)
				}
				corpus = append(corpus, s)
			}
		}
	}
	corpus = append(corpus, fuzzCorpus(t)...)
	for _, p := range diffCorpus() {
		corpus = append(corpus, p.declared, p.served)
	}
	r := rand.New(rand.NewPCG(15, 2))
	m := &mutator{r: r}
	for range 3000 {
		v := any(map[string]any{"type": "object"})
		for range 1 + r.IntN(8) {
			v = m.mutate(v, 0)
		}
		corpus = append(corpus, m.encode(v))
	}
	plain, valid := 0, 0
	for _, s := range corpus {
		if why := plainAgrees(s); why != "" {
			t.Errorf("%s: %s", s, why)
		}
		if plainSchema(s) {
			plain++
		}
		if check(s) == nil {
			valid++
		}
	}
	t.Logf("%d schemas: %d valid, %d of them decided without compiling", len(corpus), valid, plain)
}

// fuzzCorpus returns the schemas of testdata's fuzz corpus files.
func fuzzCorpus(t *testing.T) [][]byte {
	files, err := filepath.Glob("testdata/fuzz/*/*")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if lit, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				out = append(out, []byte(s))
			}
		}
	}
	return out
}

func FuzzPlainSchema(f *testing.F) {
	for _, s := range append(plainValid, plainDeclined...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if why := plainAgrees(raw); why != "" {
			t.Fatalf("%q: %s", raw, why)
		}
		if plainSchema(raw) && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			t.Fatalf("%q: plain, but not an object", raw)
		}
	})
}
