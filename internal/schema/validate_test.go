package schema

import (
	"strings"
	"testing"
)

// TestValidateInsideArrays: a violation inside an array element names the
// declared path with * for the element, the declared constraint and the
// observed type of the offending value.
func TestValidateInsideArrays(t *testing.T) {
	for _, c := range []struct{ schema, instance, want string }{
		{`{"type":"object","properties":{"hits":{"type":"array","items":{"type":"object","properties":{"total":{"type":"number"}}}}}}`,
			`{"hits":[{"total":"x"}]}`, `/hits/*/total: expected type "number", got string`},
		{`{"type":"object","properties":{"hits":{"type":"array","items":{"type":"object","properties":{"total":{"type":"number"}}}}}}`,
			`{"hits":[{"total":1},{"total":2},{"total":true}]}`, `/hits/*/total: expected type "number", got boolean`},
		{`{"type":"object","properties":{"rows":{"type":"array","items":{"type":"array","items":{"type":"integer","minimum":0}}}}}`,
			`{"rows":[[1],[2,-3]]}`, `/rows/*/*: expected minimum 0, got integer`},
		{`{"type":"object","properties":{"hits":{"type":"array","items":{"$ref":"#/$defs/hit"}}},"$defs":{"hit":{"type":"object","properties":{"total":{"type":"number"}}}}}`,
			`{"hits":[{"total":"x"}]}`, `/hits/*/total: expected type "number", got string`},
		{`{"type":"object","properties":{"total":{"type":"number"}}}`, `{"total":"x"}`, `/total: expected type "number", got string`},
	} {
		vs, err := testCache.Validate([]byte(c.schema), []byte(c.instance))
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || vs[0].String() != c.want {
			t.Errorf("%s against %s:\n got %v\nwant %s", c.instance, c.schema, vs, c.want)
		}
	}
}

// TestValidateNeverNamesInstanceKeys: a member name the instance chose,
// even one shaped like a schema path, never reaches a pointer.
func TestValidateNeverNamesInstanceKeys(t *testing.T) {
	schema := `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"object","properties":{"n":{"type":"integer"}}},"patternProperties":{"^p":{"type":"integer"}}}}}`
	instance := `{"m":{"x/properties/EVIL~1properties~0ALSO":{"n":"s"},"p/properties/EVIL2":"s"}}`
	vs, err := testCache.Validate([]byte(schema), []byte(instance))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if strings.Contains(v.String(), "EVIL") || strings.Contains(v.String(), "ALSO") {
			t.Errorf("violation names an instance key: %s", v)
		}
	}
	if len(vs) == 0 {
		t.Error("no violation")
	}
	t.Log(vs)
}
