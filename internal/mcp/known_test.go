package mcp

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
)

// TestListToolsKnown: a page answered to a request of the known answer's
// id with exactly its bytes is left unread, and Read decodes it as
// ListTools would have; another id, other bytes or an error status are
// decoded as always, and an event stream names no answer at all.
func TestListToolsKnown(t *testing.T) {
	const tools = `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`
	var served atomic.Value
	served.Store(tools)
	var status, sse atomic.Int32
	status.Store(http.StatusOK)
	_, c := newWire(t, map[string]func(http.ResponseWriter, map[string]any){"tools/list": func(w http.ResponseWriter, req map[string]any) {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, req["id"], served.Load())
		if sse.Load() == 1 {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		fmt.Fprint(w, msg)
	}})
	ctx := context.Background()
	s := &Session{c: c, Era: EraModern, Version: ModernVersion}
	first, err := s.ListTools(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	known := first.Exchange.Answer
	if known.ID != first.Exchange.ID || known == (Known{}) {
		t.Fatalf("answer = %+v for the exchange of id %d", known, first.Exchange.ID)
	}
	again := func() (*ListPage, error) {
		c.StartIDsAfter(known.ID - 1) // the request the answer was to
		return s.ListToolsKnown(ctx, "", known, true)
	}

	p, err := again()
	if err != nil || !p.Exchange.Unread || p.Tools != nil || p.Exchange.Result != nil || p.Exchange.Answer != known {
		t.Fatalf("the known answer again: err %v, unread %v, %d tools, answer %+v", err, p.Exchange.Unread, len(p.Tools), p.Exchange.Answer)
	}
	read, err := s.Read(p, true)
	if err != nil || p.Exchange.Unread || !reflect.DeepEqual(read.Tools, first.Tools) || !reflect.DeepEqual(read.Parsed, first.Parsed) {
		t.Fatalf("read: err %v, unread %v, tools %s, want %s", err, p.Exchange.Unread, read.Tools, first.Tools)
	}
	if same, err := s.Read(read, true); err != nil || same != read {
		t.Errorf("reading a page that was read: %v, %p for %p", err, same, read)
	}

	if p, err = s.ListToolsKnown(ctx, "", known, true); err != nil || p.Exchange.Unread || len(p.Tools) != 1 {
		t.Errorf("another id: err %v, unread %v, %d tools", err, p.Exchange.Unread, len(p.Tools))
	}
	served.Store(`{"tools":[]}`)
	if p, err = again(); err != nil || p.Exchange.Unread || p.Tools == nil || len(p.Tools) != 0 || p.Exchange.Answer == known {
		t.Errorf("other bytes: err %v, unread %v, %d tools", err, p.Exchange.Unread, len(p.Tools))
	}
	served.Store(tools)
	status.Store(http.StatusInternalServerError)
	if p, err = again(); Classify(err) != ReasonHTTPStatus || p.Exchange.Unread || p.Exchange.Answer != (Known{}) {
		t.Errorf("an error status: err %v, unread %v, answer %+v", err, p.Exchange.Unread, p.Exchange.Answer)
	}
	status.Store(http.StatusOK)
	sse.Store(1)
	if p, err = again(); err != nil || p.Exchange.Unread || len(p.Tools) != 1 || p.Exchange.Answer != (Known{}) {
		t.Errorf("an event stream: err %v, unread %v, %d tools, answer %+v", err, p.Exchange.Unread, len(p.Tools), p.Exchange.Answer)
	}
}
