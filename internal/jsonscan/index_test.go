package jsonscan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decode builds from node i the value Parse builds, to hold the index to
// the parser.
func (ix *Index) decode(i int) any {
	n := ix.Nodes[i]
	switch n.Kind {
	case Null:
		return nil
	case False:
		return false
	case True:
		return true
	case Number:
		return json.Number(ix.Raw(i))
	case String:
		return string(ix.String(i))
	case Array:
		a := []any{}
		for j := i + 1; j < int(n.Next); j = int(ix.Nodes[j].Next) {
			a = append(a, ix.decode(j))
		}
		if len(a) != int(n.Len) {
			panic("array length")
		}
		return a
	}
	m := map[string]any{}
	members := 0
	for j := i + 1; j < int(n.Next); j = int(ix.Nodes[j].Next) {
		m[string(ix.Key(j))] = ix.decode(j)
		members++
	}
	if members != int(n.Len) {
		panic("object length")
	}
	return m
}

// indexAgrees reports how Index and Parse disagree on b, or "".
func indexAgrees(b []byte, ix *Index) string {
	want, werr := Parse(b, fuzzDepth)
	err := ix.Reset(b, fuzzDepth)
	switch {
	case err != werr:
		return "Index err " + errString(err) + ", Parse err " + errString(werr)
	case err != nil:
		return ""
	case ix.Nodes[0].Next != int32(len(ix.Nodes)) || ix.Nodes[0].Start != int32(len(b)-len(strings.TrimLeft(string(b), " \t\r\n"))):
		return "root node does not span the document"
	}
	if got := ix.decode(0); !reflect.DeepEqual(got, want) {
		return "values differ"
	}
	for i, n := range ix.Nodes {
		if raw := ix.Raw(i); n.Kind != String && n.Kind != Number && n.Kind != Object && n.Kind != Array && string(raw) != map[Kind]string{Null: "null", True: "true", False: "false"}[n.Kind] {
			return "a literal's bytes are " + string(raw)
		}
		if v, err := Parse(ix.Raw(i), fuzzDepth); err != nil || !reflect.DeepEqual(v, ix.decode(i)) {
			return "a node's bytes do not parse to its value"
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func TestIndexMatchesParse(t *testing.T) {
	var ix Index
	inputs := []string{`{"a":[1,2.5e3,-0,"x\u00e9\n",true,false,null],"b":{}}`, `"\ud83d\ude00"`, `01`, `1.`, `{"a":1,"a":2}`,
		"\"\xff\"", "{\"\xff\":1,\"k\\u0041\":\"v\\n\"}", `[1,]`, ` {} `, `[]`, `{"a" : [ ] , "b":{ } }`, strings.Repeat("[", 70) + strings.Repeat("]", 70),
		strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64), strings.Repeat(`{"a":`, 65) + `1` + strings.Repeat(`}`, 65), `[1e999999999]`, `"\x"`, `tru`, `nul`, ``}
	for _, in := range inputs {
		if why := indexAgrees([]byte(in), &ix); why != "" {
			t.Errorf("%.60q: %s", in, why)
		}
	}
}

func FuzzIndex(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,-0,"x\u00e9\n",true,false,null],"b":{}}`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, "\"\xff\"", `[1,]`, ` {} `} {
		f.Add([]byte(s))
	}
	var ix Index
	f.Fuzz(func(t *testing.T, b []byte) {
		if Depth(b) > fuzzDepth+2 {
			return
		}
		if why := indexAgrees(b, &ix); why != "" {
			t.Fatalf("%q: %s", b, why)
		}
	})
}

// likeAgrees reports how ResetLike(b, like of a) differs from Reset(b),
// or "".
func likeAgrees(a, b []byte) string {
	var like, got, want Index
	_ = like.Reset(a, fuzzDepth)
	werr := want.Reset(b, fuzzDepth)
	gerr := got.ResetLike(b, fuzzDepth, &like)
	switch {
	case gerr != werr:
		return "ResetLike err " + errString(gerr) + ", Reset err " + errString(werr)
	case !reflect.DeepEqual(got.Nodes, want.Nodes):
		return "nodes differ"
	case string(got.Text) != string(want.Text) || !reflect.DeepEqual(got.Spans, want.Spans):
		return "decoded texts differ"
	}
	return ""
}

var likePairs = [][2]string{
	{`{"a":{"x":[1,{"y":2}]},"b":[{"c":"d"}],"e":{}}`, `{"a":{"x":[1,{"y":2}]},"b":[{"c":"e"}],"e":{}}`},
	{`{"a":{"k\u0041":"v\n","p":["\u00e9",{"q":"\u0041"}]},"z":1}`, ` {"z":1, "a":{"k\u0041":"v\n","p":["\u00e9",{"q":"\u0041"}]},"n":{"k\u0041":"v\n"}}`},
	{`[{"a":1},{"b":2},[3]]`, `[{"a":1},{"b":3},[3],{"a":1}]`},
	{`{"a":{"b":{"c":{}}}}`, `{"a":{"a":{"b":{"c":{}}}}}`},
	{`{"a":[1,2],"b":{"c":1}}`, `{"a":[1,2,3],"b":{"c":1}`},
	{`{"a":{"b":1}}`, `{"a":{"b":1}}x`},
	{"{\"\xff\":{\"\xfe\":1}}", "{\"\xff\":{\"\xfe\":1},\"k\":2}"},
	{strings.Repeat(`{"a":`, 60) + `{"b":[1]}` + strings.Repeat(`}`, 60), strings.Repeat(`{"a":`, 64) + `{"b":[1]}` + strings.Repeat(`}`, 64)},
	{`{"a":{"b":[1]}}`, strings.Repeat(`[`, 62) + `{"a":{"b":[1]}}` + strings.Repeat(`]`, 62)},
}

func TestIndexLikeMatchesReset(t *testing.T) {
	for _, p := range likePairs {
		for _, ab := range [][2]string{p, {p[1], p[0]}, {p[0], p[0]}} {
			if why := likeAgrees([]byte(ab[0]), []byte(ab[1])); why != "" {
				t.Errorf("like %.50q, indexing %.50q: %s", ab[0], ab[1], why)
			}
		}
	}
}

func FuzzIndexLike(f *testing.F) {
	for _, p := range likePairs {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if why := likeAgrees(a, b); why != "" {
			t.Fatalf("like %q, indexing %q: %s", a, b, why)
		}
	})
}
