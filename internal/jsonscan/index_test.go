package jsonscan

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// build turns node i of ix back into the value encoding/json decodes.
func build(ix *Index, i int) any {
	n := ix.Nodes[i]
	switch n.Kind {
	case Object:
		m := map[string]any{}
		for j := i + 1; j < int(n.Next); j = int(ix.Nodes[j].Next) {
			m[string(ix.Key(j))] = build(ix, j)
		}
		return m
	case Array:
		a := []any{}
		for j := i + 1; j < int(n.Next); j = int(ix.Nodes[j].Next) {
			a = append(a, build(ix, j))
		}
		return a
	case String:
		return string(ix.String(i))
	case Number:
		return json.Number(ix.Raw(i))
	case True:
		return true
	case False:
		return false
	}
	return nil
}

func TestIndex(t *testing.T) {
	for _, doc := range []string{
		`{"a":1,"b":[true,false,null,"x\u00e9"],"a":{"c\"":-1.5e3}}`,
		` [ 1 , {} , [] , "" , {"":""} ] `,
		`"\ud800 lone"`,
		`0`,
		`{"type":"object","properties":{"x":{"type":"string","enum":["a","b"]}}}`,
	} {
		var ix Index
		if err := ix.Reset([]byte(doc), 64); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		want, err := Decode([]byte(doc), 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := build(&ix, 0); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: index holds %#v, encoding/json %#v", doc, got, want)
		}
		for i, n := range ix.Nodes {
			if !json.Valid(ix.Raw(i)) {
				t.Errorf("%s: node %d's bytes %q are not its value", doc, i, ix.Raw(i))
			}
			if n.KeyEnd == 0 && i > 0 && ix.Nodes[parentOf(&ix, i)].Kind == Object {
				t.Errorf("%s: member %d has no key", doc, i)
			}
		}
		if strings.TrimSpace(doc) != string(ix.Raw(0)) {
			t.Errorf("%s: root bytes %q", doc, ix.Raw(0))
		}
	}
}

func parentOf(ix *Index, i int) int {
	p := 0
	for j := 0; j < i; j++ {
		if ix.Nodes[j].Next > int32(i) {
			p = j
		}
	}
	return p
}

func TestIndexRejects(t *testing.T) {
	for doc, want := range map[string]error{
		``:                ErrSyntax,
		`{"a" 1}`:         ErrSyntax,
		`[1,]`:            ErrSyntax,
		`{"a":1}{}`:       ErrSyntax,
		`1 2`:             ErrSyntax,
		`{"a":1,}`:        ErrSyntax,
		`[01]`:            ErrSyntax,
		`"\x"`:            ErrSyntax,
		`[[[1]]]`:         ErrTooDeep,
		`{"a":[{"b":2}]}`: ErrTooDeep,
		`[[[[`:            ErrTooDeep, // too deep before it is found malformed
	} {
		var ix Index
		if err := ix.Reset([]byte(doc), 2); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", doc, err, want)
		}
		if len(ix.Nodes) != 0 {
			t.Errorf("%q: %d nodes kept after an error", doc, len(ix.Nodes))
		}
	}
}

func TestDecodeDepth(t *testing.T) {
	for doc, want := range map[string]error{
		`[[1]]`:     nil,
		`[[[]]]`:    nil,
		`[[[1]]]`:   ErrTooDeep,
		`[[1]] x`:   ErrSyntax,
		`{"a":"b"}`: nil,
	} {
		if _, err := Decode([]byte(doc), 2); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", doc, err, want)
		}
	}
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	if _, err := Decode([]byte(deep), 64); !errors.Is(err, ErrTooDeep) {
		t.Errorf("20,000 levels: %v, want ErrTooDeep", err)
	}
	for doc, want := range map[string]int{`1`: 0, `{}`: 1, `{"a":1}`: 1, `[[]]`: 2, `[{"a":[1]}]`: 3, `[`: -1} {
		if got := Depth([]byte(doc)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", doc, got, want)
		}
	}
}
