package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// slowMessage is decodeMessage by encoding/json alone, as it was.
func slowMessage(b []byte) (*response, messageKind, error) {
	var r response
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, 0, fmt.Errorf("body is not a JSON-RPC object: %w", err)
	}
	if dec.More() {
		return nil, 0, fmt.Errorf("trailing data after the JSON-RPC object")
	}
	return classify(&r)
}

var messageSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
	`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
	`{"JSONRPC":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","Result":{},"id":1}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":2,"id":1,"result":{}}`,
	`{"jsonrpc":null,"id":null,"result":null,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
	`{"jsonrpc":"2.0","id":1,"result":{},"result":{"b":1}}`,
	`{"jsonrp\u0063":"2.0","id":1,"result":{}}`,
	`[1,2]`, `"x"`, ``, `{`, `{"jsonrpc":"2.0","id":1,"result":{"a":"\xff"}}`,
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		gotR, gotK, gotErr := decodeMessage(b, listDepth)
		wantR, wantK, wantErr := slowMessage(b)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotK != wantK {
			t.Fatalf("%q: fast (%v, %v), encoding/json (%v, %v)", b, gotK, gotErr, wantK, wantErr)
		}
		if wantErr == nil && !sameResponse(gotR, wantR) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", b, gotR, wantR)
		}
	})
}

func sameResponse(a, b *response) bool {
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return "=" + *p
	}
	return a.JSONRPC == b.JSONRPC && str(a.Method) == str(b.Method) &&
		bytes.Equal(a.ID, b.ID) && bytes.Equal(a.Result, b.Result) && bytes.Equal(a.Error, b.Error)
}

var listSeeds = []string{
	`{"tools":[{"name":"a"},{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c"}`,
	`{"tools":[],"nextCursor":null,"_meta":{"k":1,"k":2}}`,
	`{"tools":null}`, `{}`, `{"tools":{}}`, `{"Tools":[]}`, `{"tools":[],"NextCursor":"x"}`,
	`{"tools":[1, "x" , null ,[]],"resultType":"complete","ttlMs":5,"cacheScope":"x"}`,
	`{"tools":[],"resultType":7}`, `{"tools":[],"resultType":null,"ttlMs":null,"_meta":null}`,
	`{"tools":[],"_meta":[]}`, `{"tools":[],"_meta":{"a\u0062":{"x":[1]}}}`,
	`{"tools":[{"name":"a","name":"b","title":7,"description":"d\u00e9","inputSchema":{"type":"object"},"outputSchema":null}],"tools":[{"na\u006de":"c"},{"name":""},{"name":null},"x",{}]}`,
}

func FuzzDecodeToolsList(f *testing.F) {
	for _, s := range listSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// ListTools sees a result checkResponse accepted: valid JSON, an object.
		if !json.Valid(b) || len(bytes.TrimSpace(b)) == 0 || bytes.TrimSpace(b)[0] != '{' {
			return
		}
		got, gotErr := decodeListResult(b, nil, true)
		var want listResult
		wantErr := json.Unmarshal(b, &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: fast error %v, encoding/json %v", b, gotErr, wantErr)
		}
		if wantErr != nil {
			return
		}
		if !reflect.DeepEqual(normal(got), normal(&want)) {
			t.Fatalf("%q: fast %s, encoding/json %s", b, normal(got), normal(&want))
		}
		// Read from where the response's own pass located it, in a body.
		body := append(append([]byte(`{"jsonrpc":"2.0","id":7,"result":`), b...), '}')
		msg, _, err := decodeMessage(body, listDepth)
		if err != nil || msg.located == nil {
			t.Fatalf("%q in a response: %v, located %v", b, err, msg != nil && msg.located != nil)
		}
		if fromBody, err := decodeListResult(msg.Result, msg.located, true); err != nil || normal(fromBody) != normal(got) || fmt.Sprintf("%q", fromBody.parsed) != fmt.Sprintf("%q", got.parsed) {
			t.Fatalf("%q: read from the response's spans %s (%v), alone %s", b, normal(fromBody), err, normal(got))
		}
		if unparsed, err := decodeListResult(b, nil, false); err != nil || normal(unparsed) != normal(got) || unparsed.parsed != nil {
			t.Fatalf("%q: without parsing %s (%v, %d parsed), with %s", b, normal(unparsed), err, len(unparsed.parsed), normal(got))
		}
		// The tools the fast path read in its own pass are ParseTool's.
		for i, p := range got.parsed {
			want, _ := ParseTool((*got.Tools)[i])
			if fmt.Sprintf("%q", p) != fmt.Sprintf("%q", want) {
				t.Fatalf("%q: tool %d read as %q, ParseTool %q", b, i, p, want)
			}
		}
		if got.Tools != nil && got.parsed != nil && len(got.parsed) != len(*got.Tools) {
			t.Fatalf("%q: %d tools read, %d listed", b, len(got.parsed), len(*got.Tools))
		}
	})
}

// normal prints a listResult with raw members as strings, so that equal
// bytes compare equal however they are held.
func normal(r *listResult) string {
	b, _ := json.Marshal(r)
	meta := "nil"
	if r.Meta != nil {
		meta = fmt.Sprint(len(r.Meta))
	}
	tools := "nil"
	if r.Tools != nil {
		tools = fmt.Sprint(len(*r.Tools))
	}
	return fmt.Sprintf("%s meta=%s tools=%s", b, meta, tools)
}

func TestFastDecodeSeeds(t *testing.T) {
	for _, s := range messageSeeds {
		gotR, gotK, gotErr := decodeMessage([]byte(s), 1)
		wantR, wantK, wantErr := slowMessage([]byte(s))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotK != wantK || (wantErr == nil && !sameResponse(gotR, wantR)) {
			t.Errorf("%s: fast (%+v %v %v), encoding/json (%+v %v %v)", s, gotR, gotK, gotErr, wantR, wantK, wantErr)
		}
	}
	if _, ok := fastResponse([]byte(messageSeeds[0]), 1); !ok {
		t.Error("the common response took the slow path")
	}
	if _, ok := fastListResult([]byte(listSeeds[0]), nil, true); !ok {
		t.Error("the common list result took the slow path")
	}
}
