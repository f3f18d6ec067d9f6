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
