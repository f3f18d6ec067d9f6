package jsonscan

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

func TestSkipValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int // index just past the first value
	}{
		{`"a\"b",1`, 6},
		{`{"x":"}","y":[1,{"z":"]"}]} tail`, 27},
		{`[1,[2,[3]]],`, 11},
		{`-1.5e3}`, 6},
		{`true ,`, 4},
		{`"unclosed\`, 10},
		{`{"open":[`, 9},
	} {
		if got := SkipValue([]byte(tc.in), 0); got != tc.want {
			t.Errorf("SkipValue(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestMembersMatchEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":{"c":"}"},"d":[1,"]"]}`,
		` { "k" : "v" , "k" : "w" } `,
		`{"na\u006de":"x","e":"\"{"}`,
		`{}`,
	} {
		got, ok := Members([]byte(in))
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil || !ok {
			t.Fatalf("%s: ok=%v, encoding/json %v", in, ok, err)
		}
		if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`[1]`, `"x"`, ``, `{"a":1`} {
		if _, ok := Members([]byte(in)); ok {
			t.Errorf("Members(%q) accepted a non-object", in)
		}
	}
}

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`{"a":[{"b":[]}]}`, 4},
		{`["[[[", "\"[[["]`, 1},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), 100},
	} {
		if got := Depth([]byte(tc.in)); got != tc.want {
			t.Errorf("Depth(%.40q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestDepthBoundsParse ties Depth to Parse: input within the bound by
// Depth is never ErrTooDeep, input more than one level beyond it always is
// (an empty container at the last level parses).
func TestDepthBoundsParse(t *testing.T) {
	for n := 60; n <= 70; n++ {
		for _, leaf := range []string{`1`, `{}`} {
			in := []byte(strings.Repeat(`{"a":`, n) + leaf + strings.Repeat(`}`, n))
			_, err := Parse(in, fuzzDepth)
			if d := Depth(in); (d <= fuzzDepth && err != nil) || (d > fuzzDepth+1 && err != ErrTooDeep) {
				t.Errorf("depth %d: Parse err %v, Depth %d", n, err, d)
			}
		}
	}
}

// FuzzMembers holds Members, Member and Unquote to encoding/json on every
// valid object: the same members (last duplicate wins), each key looked up
// alone, and every string literal decoded alike.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":{"c":"}"},"d":[1,"]"]}`, ` { "k" : "v" , "k" : "w" } `,
		`{"na\u006de":"x","e":"\"{\\"}`, `{"\ud800":1,"\u00e9":2,"é":3}`, "{\"\xff\":\"\xfe\"}",
		`{"type":"object","type":"string"}`, `["not","an","object"]`, `"str\\\"ing"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if v := strings.TrimSpace(string(b)); v != "" && v[0] == '"' {
			var want string
			_ = json.Unmarshal(b, &want)
			if got, ok := Unquote([]byte(v)); !ok || got != want {
				t.Fatalf("Unquote(%s) = %q, %v; encoding/json %q", v, got, ok, want)
			}
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil {
			if _, ok := Members(b); ok {
				t.Fatalf("Members(%s) ok, encoding/json refuses an object there", b)
			}
			return
		}
		got, ok := Members(b)
		if !ok || len(got) != len(want) {
			t.Fatalf("Members(%s) = %d members, %v; encoding/json %d", b, len(got), ok, len(want))
		}
		for k, w := range want {
			if string(got[k]) != string(w) {
				t.Fatalf("Members(%s)[%q] = %s, encoding/json %s", b, k, got[k], w)
			}
			if m, ok := Member(b, k); !ok || string(m) != string(w) {
				t.Fatalf("Member(%s, %q) = %s, %v; encoding/json %s", b, k, m, ok, w)
			}
		}
		if _, ok := Member(b, "\x00absent"); ok && want["\x00absent"] == nil {
			t.Fatalf("Member(%s) found an absent key", b)
		}
	})
}
