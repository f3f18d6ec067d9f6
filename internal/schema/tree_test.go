package schema

import "testing"

// TestTreeEqual: equal reads values as encoding/json decodes them: key
// order and escapes do not matter, the last of duplicate keys wins,
// numbers compare as written, and absent equals null.
func TestTreeEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1}`, true},
		{`{"a":"\u0078"}`, `{"a":"x"}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`{"a":1}`, `{"a":1.0}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":[]}`, `{"a":{}}`, false},
		{`{"a":""}`, `{"a":null}`, false},
		{`{"":{"x":1}}`, `{"":{"x":1}}`, true},
	} {
		ta, err := newTree([]byte(c.a))
		if err != nil {
			t.Fatal(err)
		}
		tb, err := newTree([]byte(c.b))
		if err != nil {
			t.Fatal(err)
		}
		if got := equal(ta.root(), tb.root(), 0); got != c.want {
			t.Errorf("equal(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := ta.root().hash() == tb.root().hash(); c.want && !got {
			t.Errorf("%s and %s are equal with different hashes", c.a, c.b)
		}
		ta.release()
		tb.release()
	}
	tr, err := newTree([]byte(`{"a":null}`))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.release()
	present, _ := tr.root().get("a")
	missing, ok := tr.root().get("b")
	if ok || !equal(present, missing, 0) {
		t.Error("an absent member does not equal null")
	}
}

func TestTreeRejects(t *testing.T) {
	deep := ""
	for range maxDiffDepth + 2 {
		deep = `{"a":` + deep
	}
	for _, b := range []string{`{"a":1`, `{"a":1}x`, deep} {
		if tr, err := newTree([]byte(b)); err == nil {
			tr.release()
			t.Errorf("%.40s: accepted", b)
		}
	}
}
