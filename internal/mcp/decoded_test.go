package mcp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/driftd/driftd/internal/jsonscan"
)

// TestDecoded: an answer met again is the same decoded value, without
// decoding; a caller's page is its own (changing it changes no later
// answer); what does not decode is not kept; a nil Decoded decodes.
func TestDecoded(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c2"}}`)
	for _, d := range []*Decoded{nil, NewDecoded(1 << 20)} {
		r1, err := d.response(body, jsonscan.SumOf(body))
		if err != nil {
			t.Fatal(err)
		}
		r2, err := d.response(body, jsonscan.SumOf(body))
		if err != nil || !reflect.DeepEqual(r1, r2) {
			t.Fatalf("second decode: %v %+v", err, r2)
		}
		p1, ok := d.page(r1.Result)
		if !ok || len(p1.parsed) != 2 || p1.parsed[1].Name != "b" || string(*p1.next) != `"c2"` {
			t.Fatalf("page: %v %+v", ok, p1)
		}
		p2, _ := d.page(r1.Result)
		if d != nil && p1 != p2 {
			t.Error("a result met again was decoded again")
		}
		if _, err := d.response([]byte(`{"jsonrpc":`), jsonscan.Sum{}); err == nil {
			t.Error("a broken body decoded")
		}
	}
	d := NewDecoded(1 << 20)
	if _, err := d.response([]byte(`{"jsonrpc":`), jsonscan.Sum{}); err == nil || d.responses.Len() != 0 {
		t.Errorf("a broken body was kept: %d entries", d.responses.Len())
	}
	if _, ok := d.page(json.RawMessage(`{"tools":null}`)); ok || d.pages.Len() != 0 {
		t.Error("a result without tools was kept")
	}
}
