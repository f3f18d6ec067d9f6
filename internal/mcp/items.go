package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/driftd/driftd/internal/jsonscan"
)

// ItemPage is one page of prompts/list, resources/list or
// resources/templates/list.
type ItemPage struct {
	Items      []json.RawMessage
	NextCursor string
	HasNext    bool
	ResultMeta
	Exchange *Exchange
}

// ListItems fetches one page of the list of k (a kind other than tools);
// cursor "" asks for the first. These lists are read by encoding/json:
// they are small beside tools/list and carry no schemas.
func (s *Session) ListItems(ctx context.Context, k Kind, cursor string) (*ItemPage, error) {
	method := k.Method()
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	ex, _, err := s.c.do(ctx, call{era: s.Era, version: s.Version, method: method, params: params, sessionID: s.SessionID})
	page := &ItemPage{Exchange: ex}
	if err != nil {
		return page, err
	}
	// The items are read by ParseItem, never decoded here.
	mems, ok := jsonscan.Members(ex.Result)
	var meta ResultMeta
	if !ok || metaOf(mems, &meta) != nil {
		return page, &Error{Reason: ReasonInvalidResponse, Method: method, Err: fmt.Errorf("result is not a %s result object", method)}
	}
	page.ResultMeta = meta
	arr, ok := mems[k.Key()]
	if !ok || string(arr) == "null" {
		return page, &Error{Reason: ReasonInvalidResponse, Method: method, Err: fmt.Errorf("result has no %q array", k.Key())}
	}
	if page.Items, ok = jsonscan.Elements(arr); !ok {
		return page, &Error{Reason: ReasonInvalidResponse, Method: method, Err: fmt.Errorf("%q is not an array", k.Key())}
	}
	if raw, ok := mems["nextCursor"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &page.NextCursor); err != nil {
			return page, &Error{Reason: ReasonInvalidResponse, Method: method, Err: errors.New(`"nextCursor" is not a string`)}
		}
		page.HasNext = true
	}
	return page, nil
}

// metaOf reads the members every modern result carries, as encoding/json
// would into a ResultMeta, from the result's members.
func metaOf(mems map[string]json.RawMessage, m *ResultMeta) error {
	small := map[string]json.RawMessage{}
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if v, ok := mems[k]; ok {
			small[k] = v
		}
	}
	b, err := json.Marshal(small)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, m)
}

// IsMethodNotFound reports whether err is a JSON-RPC -32601 answer: the
// server has no such list.
func IsMethodNotFound(err error) bool {
	var me *Error
	return errors.As(err, &me) && me.RPC != nil && me.RPC.Code == CodeMethodNotFound
}

// IsRPCError reports whether err is a JSON-RPC error answer, of any code.
func IsRPCError(err error) bool {
	var me *Error
	return errors.As(err, &me) && me.RPC != nil
}
