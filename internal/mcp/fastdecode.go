package mcp

import (
	"encoding/json"

	"github.com/driftd/driftd/internal/jsonscan"
)

// The fast paths of the two decodes every probe makes on every response:
// the JSON-RPC envelope and a tools/list result. encoding/json validated
// a body, then scanned it again to find its members, then copied each
// raw member, and a list result went through the same again: a page of
// 50 tools was read five times. Here a body is validated once
// (jsonscan.Valid) and its members located by jsonscan, as sub-slices of the
// body. A fast path declines (ok false) whenever encoding/json could
// answer differently — invalid JSON, a member of the wrong type, a key
// that matches a field only case-insensitively, as encoding/json allows —
// and the caller then takes encoding/json's path, so behaviour and error
// messages stay exactly encoding/json's (FuzzDecodeMessage,
// FuzzDecodeToolsList).

// envelopeKeys are the members of response, as encoding/json matches them.
var envelopeKeys = []string{"jsonrpc", "id", "method", "result", "error"}

// listKeys are the members of a ListToolsResult that ListTools reads.
var listKeys = []string{"tools", "nextCursor", "resultType", "ttlMs", "cacheScope", "_meta"}

func fastResponse(b []byte) (*response, bool) {
	if !jsonscan.Valid(b) {
		return nil, false
	}
	m, ok := jsonscan.Members(b)
	if !ok || !jsonscan.ExactKeys(m, envelopeKeys...) {
		return nil, false
	}
	r := &response{ID: m["id"], Result: m["result"], Error: m["error"]}
	switch v := m["jsonrpc"]; {
	case string(v) == `"2.0"`:
		r.JSONRPC = "2.0"
	case v == nil || string(v) == "null":
	default:
		return nil, false // another string or type: encoding/json says what
	}
	if v, ok := m["method"]; ok && string(v) != "null" {
		var s string
		if v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, false
		}
		r.Method = &s
	}
	return r, true
}

// listResult is what ListTools reads of a tools/list result.
type listResult struct {
	Tools      *[]json.RawMessage `json:"tools"`
	NextCursor *json.RawMessage   `json:"nextCursor"`
	ResultMeta
}

// decodeListResult reads a tools/list result, by the fast path when it can.
func decodeListResult(b []byte) (*listResult, error) {
	if r, ok := fastListResult(b); ok {
		return r, nil
	}
	var r listResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func fastListResult(b []byte) (*listResult, bool) {
	// b is a member of a body fastResponse or encoding/json validated,
	// and an object (checkResponse).
	m, ok := jsonscan.Members(b)
	if !ok || !jsonscan.ExactKeys(m, listKeys...) {
		return nil, false
	}
	r := &listResult{}
	if v := m["tools"]; v != nil && string(v) != "null" {
		tools, ok := jsonscan.Elements(v)
		if !ok {
			return nil, false
		}
		r.Tools = &tools
	}
	r.NextCursor = rawPointer(m["nextCursor"])
	r.TTLMs = rawPointer(m["ttlMs"])
	r.CacheScope = rawPointer(m["cacheScope"])
	if v := m["resultType"]; v != nil && string(v) != "null" {
		var s string
		if v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, false
		}
		r.ResultType = &s
	}
	if v := m["_meta"]; v != nil && string(v) != "null" {
		meta, ok := jsonscan.Members(v)
		if !ok {
			return nil, false
		}
		r.Meta = meta
	}
	return r, true
}

// rawPointer is how encoding/json fills a *json.RawMessage: nil when the
// member is absent or null.
func rawPointer(v json.RawMessage) *json.RawMessage {
	if v == nil || string(v) == "null" {
		return nil
	}
	return &v
}
