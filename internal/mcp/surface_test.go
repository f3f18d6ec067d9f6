package mcp

import (
	"slices"
	"testing"
)

func TestTemplateVariables(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"orders://{order_id}", []string{"order_id"}},
		{"file:///{+path}{?q,limit*}", []string{"limit", "path", "q"}},
		{"x://{id:3}/{id}{#frag}{/a,b}{;c}{&d}", []string{"a", "b", "c", "d", "frag", "id"}},
		{"no-variables", nil},
		{"broken{open", nil},
	} {
		if got := TemplateVariables(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseItem(t *testing.T) {
	it, problems := ParseItem(KindPrompt, []byte(`{"name":"p","title":"T","arguments":[{"name":"a","required":true},{"name":"b"}]}`))
	if len(problems) > 0 || it.Key != "p" || it.Title != "T" || len(it.Arguments) != 2 || !it.Arguments[0].Required || it.Arguments[1].Required {
		t.Errorf("prompt %+v %v", it, problems)
	}
	it, problems = ParseItem(KindResource, []byte(`{"uri":"a://b","name":"n","mimeType":7}`))
	if it.Key != "a://b" || !slices.Equal(problems, []string{`"mimeType" is not a string`}) {
		t.Errorf("resource %+v %v", it, problems)
	}
	it, problems = ParseItem(KindResourceTemplate, []byte(`{"uriTemplate":"a://{b}"}`))
	if it.Key != "" || !slices.Equal(problems, []string{`"name" missing`}) {
		t.Errorf("template %+v %v", it, problems)
	}
	if _, problems = ParseItem(KindPrompt, []byte(`[1]`)); !slices.Equal(problems, []string{"not an object"}) {
		t.Errorf("array: %v", problems)
	}
}
