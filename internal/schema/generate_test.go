package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var generateCorpus = []string{
	`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["q","limit"]}`,
	`{"type":"object","additionalProperties":false}`,
	`{"type":"object","properties":{"status":{"enum":["open","shipped"]},"v":{"const":2}},"required":["status","v"]}`,
	`{"type":"object","properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"},"code":{"type":"string","pattern":"^[A-Z]{2}-\\d{3,4}$"}},"required":["zip","code"]}`,
	`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"id":{"type":"string","format":"uuid"}},"required":["when","mail","id"]}`,
	`{"type":"object","properties":{"name":{"type":"string","minLength":10,"maxLength":12}},"required":["name"]}`,
	`{"type":"object","properties":{"price":{"type":"number","exclusiveMinimum":0,"multipleOf":0.25},"n":{"type":"integer","minimum":-50,"maximum":-10}},"required":["price","n"]}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":2,"uniqueItems":true}},"required":["tags"]}`,
	`{"type":"object","$defs":{"addr":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},"properties":{"ship":{"$ref":"#/$defs/addr"}},"required":["ship"]}`,
	`{"type":"object","definitions":{"n":{"type":"integer","minimum":3}},"properties":{"x":{"$ref":"#/definitions/n"}},"required":["x"]}`,
	`{"type":"object","properties":{"f":{"anyOf":[{"type":"integer","minimum":5},{"type":"null"}]}},"required":["f"]}`,
	`{"type":"object","properties":{"o":{"oneOf":[{"type":"string","maxLength":3},{"type":"integer"}]}},"required":["o"]}`,
	`{"allOf":[{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}`,
	`{"type":"object","properties":{"deep":{"type":"object","properties":{"deeper":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"minItems":2}},"required":["deeper"]}},"required":["deep"]}`,
	`{"type":"object","properties":{"v":{"type":["null","string"],"minLength":2}},"required":["v"],"minProperties":1}`,
	`{"type":"object","properties":{"limit":{"type":"integer","default":10,"description":"at most this many"},"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`,
}

func TestGenerateCorpus(t *testing.T) {
	for _, s := range generateCorpus {
		args, err := testCache.Generate([]byte(s), 7)
		if err != nil {
			t.Errorf("Generate(%s): %v", s, err)
			continue
		}
		vs, err := testCache.Validate([]byte(s), args)
		if err != nil || len(vs) > 0 {
			t.Errorf("generated %s for %s: invalid %v %v", args, s, vs, err)
		}
		again, _ := testCache.Generate([]byte(s), 7)
		if !bytes.Equal(args, again) {
			t.Errorf("same seed, different arguments: %s vs %s", args, again)
		}
	}
}

func TestGenerateUnsatisfiable(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":3}},"required":["n"]}`,
		`{"type":"object","properties":{"x":false},"required":["x"]}`,
		`{"type":"object","properties":{"x":{"$ref":"https://example.invalid/x.json"}},"required":["x"]}`,
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^a$","minLength":3}},"required":["s"]}`,
		`{"type":"object","properties":{"x":{"not":{}}},"required":["x"]}`,
	} {
		if args, err := testCache.Generate([]byte(s), 1); !errors.Is(err, ErrUnsatisfiable) {
			t.Errorf("Generate(%s) = %s, %v; want ErrUnsatisfiable", s, args, err)
		}
	}
}

func TestValidateNeverQuotesValues(t *testing.T) {
	schema := `{"type":"object","properties":{"hits":{"type":"array"},"n":{"type":"integer","maximum":3}},"required":["hits","total"]}`
	vs, err := testCache.Validate([]byte(schema), []byte(`{"hits":"MARKER-value","n":99}`))
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, v := range vs {
		got += v.String() + "\n"
	}
	for _, want := range []string{"/hits: expected type \"array\", got string", "/n: expected maximum 3, got integer", "root: expected required"} {
		if !strings.Contains(got, want) {
			t.Errorf("violations lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "MARKER") || strings.Contains(got, "99") {
		t.Fatalf("a returned value leaked into a violation:\n%s", got)
	}
	b, _ := json.Marshal(vs)
	if strings.Contains(string(b), "MARKER") {
		t.Fatal("leak in JSON")
	}
}

// TestGenerateFillsMirroredProperties: an optional property annotated
// with x-mcp-header (or holding one below it) is generated, so a planned
// call sends its Mcp-Param-* header; other optional properties are not.
func TestGenerateFillsMirroredProperties(t *testing.T) {
	s := `{"type":"object","properties":{"q":{"type":"string"},"region":{"type":"string","x-mcp-header":"Region","enum":["eu","us"]},"plain":{"type":"string"},"opts":{"type":"object","properties":{"tenant":{"type":"integer","x-mcp-header":"Tenant","minimum":1}}}},"required":["q"]}`
	b, err := testCache.Generate([]byte(s), 1)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	opts, _ := got["opts"].(map[string]any)
	if got["region"] == nil || opts["tenant"] == nil || got["plain"] != nil || got["q"] == nil {
		t.Fatalf("generated %s", b)
	}
}
