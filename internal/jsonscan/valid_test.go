package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	`{}`, `[]`, ` 1 `, `-0.5e+10`, `01`, `1.`, `.5`, `-`, `1e`, `"a\u00e9\"\\\/\b\f\n\r\t"`, `"\u12"`, `"\x"`,
	"\"\x01\"", "\"\xff\xfe\"", `{"a":1,"b":[true,false,null,{"c":"d"}]}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[,1]`,
	`{"a":1}}`, `[1]]`, `{1:2}`, `tru`, `nulll`, `[1 2]`, `{"a":[}`, "", " ", `"`, `[`, `{`, `{"a"`, `{"a":`,
	`[{"a":[{"b":[1,2,{"c":{}}]}]}]`, `1 2`, "\t[ 1 , 2 ]\n",
}

func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
	for _, depth := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closeWith := "]"
			if open != "[" {
				closeWith = "}"
			}
			s := strings.Repeat(open, depth) + "1" + strings.Repeat(closeWith, depth)
			if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Errorf("depth %d of %q: Valid %v, encoding/json %v", depth, open, got, want)
			}
		}
	}
}

func BenchmarkValid(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for i := range 50 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"name":"tool","description":"looks things up \"quoted\" and more","inputSchema":{"type":"object","properties":{"a":{"type":"string","minLength":1,"maxLength":64},"b":{"type":"integer","minimum":-5,"maximum":1e3},"c":{"type":"array","items":{"type":"boolean"}}},"required":["a"]}}`)
	}
	sb.WriteString(`]}}`)
	doc := []byte(sb.String())
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			Valid(doc)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			json.Valid(doc)
		}
	})
}

// FuzzLocate holds Locate to Valid (the same verdict) and, on valid text,
// its spans to Members and Elements, level by level down to the depth
// asked: the same members with the same keys, the same elements, in order.
func FuzzLocate(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s), uint8(2))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{}],"nextCursor":"c"}}`), uint8(4))
	f.Fuzz(func(t *testing.T, b []byte, depth uint8) {
		spans, ok := Locate(b, int(depth%6), nil)
		if ok != json.Valid(b) {
			t.Fatalf("Locate(%q) ok = %v, encoding/json.Valid %v", b, ok, !ok)
		}
		if !ok {
			return
		}
		if next := checkSpan(t, b, spans, 0, 0, int(depth%6)); next != int32(len(spans)) {
			t.Fatalf("Locate(%q): the top value's subtree ends at span %d of %d", b, next, len(spans))
		}
	})
}

// checkSpan checks span i, at level, and the spans under it; it returns
// the index after them.
func checkSpan(t *testing.T, b []byte, spans []Span, i int32, level, depth int) int32 {
	t.Helper()
	sp := spans[i]
	raw := sp.Raw(b)
	if !json.Valid(raw) || strings.TrimSpace(string(raw)) != string(raw) {
		t.Fatalf("span %d of %q is %q, not one value", i, b, raw)
	}
	type member struct{ key, raw string }
	var want []member
	switch raw[0] {
	case '{':
		EachMember(raw, func(k, v []byte) { want = append(want, member{string(k), string(v)}) })
	case '[':
		els, _ := Elements(raw)
		for _, e := range els {
			want = append(want, member{"", string(e)})
		}
	}
	if level == depth || len(want) == 0 {
		if sp.Next != i+1 {
			t.Fatalf("span %d of %q (level %d of %d, %d members) has Next %d, want %d", i, b, level, depth, len(want), sp.Next, i+1)
		}
		return i + 1
	}
	j := i + 1
	for n, w := range want {
		if j >= sp.Next {
			t.Fatalf("span %d of %q: %d members located, want %d", i, b, n, len(want))
		}
		if got := (member{string(spans[j].Key(b)), string(spans[j].Raw(b))}); got != w {
			t.Fatalf("span %d of %q: member %d is %+v, want %+v", i, b, n, got, w)
		}
		j = checkSpan(t, b, spans, j, level+1, depth)
	}
	if j != sp.Next {
		t.Fatalf("span %d of %q: Next %d, members end at %d", i, b, sp.Next, j)
	}
	return j
}
