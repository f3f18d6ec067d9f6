package catalogue

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func stdDecode(b []byte) (any, error) {
	if !json.Valid(b) {
		return nil, errJSON
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errJSON
	}
	return v, nil
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,-0,"x\u00e9\n",true,false,null],"b":{}}`, `"\ud83d\ude00"`, `01`, `1.`, `{"a":1,"a":2}`, "\"\xff\"", `[1,]`, ` {} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if JSONDepth(b) > maxDiffDepth {
			return
		}
		got, err := parseJSON(b)
		want, werr := stdDecode(b)
		if errors.Is(err, errTooDeep) {
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("parseJSON(%q) err=%v, encoding/json err=%v", b, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("parseJSON(%q) = %#v, encoding/json = %#v", b, got, want)
		}
	})
}
