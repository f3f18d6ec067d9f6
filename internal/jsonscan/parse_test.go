package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func stdDecode(b []byte) (any, error) {
	if !json.Valid(b) {
		return nil, ErrSyntax
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, ErrSyntax
	}
	return v, nil
}

// fuzzDepth is the schema engine's bound, the one Parse runs with in driftd.
const fuzzDepth = 64

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,-0,"x\u00e9\n",true,false,null],"b":{}}`, `"\ud83d\ude00"`, `01`, `1.`, `{"a":1,"a":2}`, "\"\xff\"", `[1,]`, ` {} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Depth(b) > fuzzDepth {
			return
		}
		got, err := Parse(b, fuzzDepth)
		want, werr := stdDecode(b)
		if errors.Is(err, ErrTooDeep) {
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("Parse(%q) err=%v, encoding/json err=%v", b, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q) = %#v, encoding/json = %#v", b, got, want)
		}
		if err == nil {
			var std bytes.Buffer
			if json.Compact(&std, b) == nil && !bytes.Equal(Compact(nil, b), std.Bytes()) {
				t.Fatalf("Compact(%q) = %q, encoding/json = %q", b, Compact(nil, b), std.Bytes())
			}
			if IsCompact(b) != bytes.Equal(Compact(nil, b), b) {
				t.Fatalf("IsCompact(%q) = %v, Compact gives %q", b, IsCompact(b), Compact(nil, b))
			}
		}
	})
}
