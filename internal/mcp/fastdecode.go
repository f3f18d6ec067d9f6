package mcp

import (
	"encoding/json"
	"slices"

	"github.com/driftd/driftd/internal/jsonscan"
)

// The fast paths of the two decodes every probe makes on every response:
// the JSON-RPC envelope and a tools/list result. encoding/json validated
// a body, then scanned it again to find its members, then copied each
// raw member, and a list result went through the same again: a page of
// 50 tools was read five times. Here each is one pass of jsonscan.Locate,
// which validates and locates the members the decode reads (for a list,
// down to each tool's own members) as sub-slices of the body. A fast path
// declines (ok false) whenever encoding/json could answer differently —
// invalid JSON, a member of the wrong type, a key that matches a field
// only case-insensitively, as encoding/json allows — and the caller then
// takes encoding/json's path, so behaviour and error messages stay exactly
// encoding/json's (FuzzDecodeMessage, FuzzDecodeToolsList).

// envelopeKeys are the members of response, as encoding/json matches them.
var envelopeKeys = []string{"jsonrpc", "id", "method", "result", "error"}

// listKeys are the members of a ListToolsResult that ListTools reads.
var listKeys = []string{"tools", "nextCursor", "resultType", "ttlMs", "cacheScope", "_meta"}

// located is the spans of a message, down to listDepth, and which of
// them is its result: a result read from the message is read from them.
type located struct {
	src    []byte
	spans  []jsonscan.Span
	result int
}

// listDepth is how deep fastResponse locates a tools/list answer: its
// members (1), the result's (2), a listed tool (3) and the tool's members
// (4). Any other answer is located to its members only, so a result of a
// million small values costs no span each.
const listDepth = 4

func fastResponse(b []byte, depth int) (*response, bool) {
	spans, ok := locate(b, depth)
	if !ok {
		return nil, false
	}
	m, ok := members(b, spans, 0, envelopeKeys)
	if !ok {
		return nil, false
	}
	r := &response{ID: m["id"], Result: m["result"], Error: m["error"]}
	if at := lastMember(b, spans, 0, "result"); at > 0 && depth >= listDepth {
		r.located = &located{src: b, spans: spans, result: at}
	}
	switch v := m["jsonrpc"]; {
	case string(v) == `"2.0"`:
		r.JSONRPC = "2.0"
	case v == nil || string(v) == "null":
	default:
		return nil, false // another string or type: encoding/json says what
	}
	if v, ok := m["method"]; ok && string(v) != "null" {
		s, ok := jsonscan.Unquote(v)
		if !ok {
			return nil, false
		}
		r.Method = &s
	}
	return r, true
}

// members maps the members of the object at spans[i] to their raw values,
// as encoding/json reads them into a struct with fields; false when it is
// no object, when a key matches a field only as encoding/json's
// case-insensitive matching would (ExactKeys), or when a field is written
// twice: encoding/json decodes both in turn and reports the first that
// does not fit its type, even if the last would ({"tools":"","tools":[]}).
func members(b []byte, spans []jsonscan.Span, i int, fields []string) (map[string]json.RawMessage, bool) {
	if b[spans[i].Start] != '{' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 8)
	for j := i + 1; j < int(spans[i].Next); j = int(spans[j].Next) {
		k, ok := jsonscan.Unquote(spans[j].Key(b))
		if !ok {
			return nil, false
		}
		if _, twice := m[k]; twice && slices.Contains(fields, k) {
			return nil, false
		}
		m[k] = spans[j].Raw(b)
	}
	return m, jsonscan.ExactKeys(m, fields...)
}

// listResult is what ListTools reads of a tools/list result.
type listResult struct {
	Tools      *[]json.RawMessage `json:"tools"`
	NextCursor *json.RawMessage   `json:"nextCursor"`
	ResultMeta
	// parsed are the tools read from the one pass of the fast path, each
	// as ParseTool reads it (nil on encoding/json's path).
	parsed []Tool `json:"-"`
}

// decodeListResult reads a tools/list result, by the fast path when it
// can; parse asks the fast path to read each tool too (parsed). loc, if
// not nil, is where the response's decode located b: then the fast path
// reads b from it instead of passing over b again.
func decodeListResult(b []byte, loc *located, parse bool) (*listResult, error) {
	if r, ok := fastListResult(b, loc, parse); ok {
		return r, nil
	}
	var r listResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// fastListResult reads the result's members (depth 1 below the result),
// the tools (2) and, to parse them, each tool's members (3): from loc, or
// located here.
func fastListResult(b []byte, loc *located, parse bool) (*listResult, bool) {
	root := 0
	if loc != nil {
		b, root = loc.src, loc.result // the spans' offsets are into src
	} else {
		depth := 2
		if parse {
			depth = 3
		}
		spans, ok := jsonscan.Locate(b, depth, nil)
		if !ok {
			return nil, false
		}
		loc = &located{src: b, spans: spans}
	}
	spans := loc.spans
	m, ok := members(b, spans, root, listKeys)
	if !ok {
		return nil, false
	}
	r := &listResult{}
	if v := m["tools"]; v != nil && string(v) != "null" {
		if v[0] != '[' {
			return nil, false
		}
		at := lastMember(b, spans, root, "tools")
		n := 0
		for j := at + 1; j < int(spans[at].Next); j = int(spans[j].Next) {
			n++
		}
		tools := make([]json.RawMessage, 0, n) // sized: a page may list 100,000
		if parse {
			r.parsed = make([]Tool, 0, n)
		}
		for j := at + 1; j < int(spans[at].Next); j = int(spans[j].Next) {
			raw := spans[j].Raw(b)
			tools = append(tools, raw[:len(raw):len(raw)])
			if !parse {
				continue
			}
			r.parsed = append(r.parsed, parseTool(raw, func(f func(k, v []byte)) bool {
				if raw[0] != '{' {
					return false
				}
				for k := j + 1; k < int(spans[j].Next); k = int(spans[k].Next) {
					f(spans[k].Key(b), spans[k].Raw(b))
				}
				return true
			}))
		}
		r.Tools = &tools
	}
	r.NextCursor = rawPointer(m["nextCursor"])
	r.TTLMs = rawPointer(m["ttlMs"])
	r.CacheScope = rawPointer(m["cacheScope"])
	if v := m["resultType"]; v != nil && string(v) != "null" {
		s, ok := jsonscan.Unquote(v)
		if !ok {
			return nil, false
		}
		r.ResultType = &s
	}
	if v := m["_meta"]; v != nil && string(v) != "null" {
		meta, ok := members(b, spans, lastMember(b, spans, root, "_meta"), nil)
		if !ok {
			return nil, false
		}
		r.Meta = meta
	}
	return r, true
}

// lastMember is the index of the span of the last member named key of
// the object at spans[i], the one encoding/json reads; i when there is none.
func lastMember(b []byte, spans []jsonscan.Span, i int, key string) int {
	at := i
	for j := i + 1; j < int(spans[i].Next); j = int(spans[j].Next) {
		if jsonscan.KeyIs(spans[j].Key(b), key) {
			at = j
		}
	}
	return at
}

// rawPointer is how encoding/json fills a *json.RawMessage: nil when the
// member is absent or null.
func rawPointer(v json.RawMessage) *json.RawMessage {
	if v == nil || string(v) == "null" {
		return nil
	}
	return &v
}
