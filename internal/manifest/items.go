package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
)

// itemArrays finds the prompts, resources and resourceTemplates arrays of
// a manifest object (or of the result of a JSON-RPC response), and whether
// it has a tools member too. Keys are matched exactly: these members are
// new, and no manifest was ever written with another spelling. A bare
// array is a list of tools.
func itemArrays(b []byte) (map[mcp.Kind][]json.RawMessage, bool, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, true, nil
	}
	// b is valid JSON (parse checked it, or converted it from YAML): its
	// members are located in one pass, not decoded.
	top, ok := jsonscan.Members(b)
	if !ok {
		return nil, true, nil // toolArray says what is wrong
	}
	if res, ok := top["result"]; ok && !hasAnyKey(top) {
		if inner, ok := jsonscan.Members(res); ok {
			top = inner
		}
	}
	hasTools := false
	for k := range top {
		if strings.EqualFold(k, "tools") {
			hasTools = true
		}
	}
	out := map[mcp.Kind][]json.RawMessage{}
	for _, k := range mcp.ItemKinds {
		v, ok := top[k.Key()]
		if !ok {
			continue
		}
		raws, ok := jsonscan.Elements(v)
		if !ok {
			return nil, false, fmt.Errorf("%q is not an array", k.Key())
		}
		out[k] = raws
	}
	return out, hasTools, nil
}

// hasAnyKey reports whether m has a member of any list, tools included.
func hasAnyKey(m map[string]json.RawMessage) bool {
	for _, k := range mcp.Kinds {
		if _, ok := m[k.Key()]; ok {
			return true
		}
	}
	return false
}

// itemsFromRaw reads each declared list. A declared item must have the
// spec's shape, and its identity (a prompt's or template's name, a
// resource's uri) must be unique within its list.
func itemsFromRaw(lists map[mcp.Kind][]json.RawMessage) (map[mcp.Kind][]mcp.Item, error) {
	if len(lists) == 0 {
		return nil, nil
	}
	out := make(map[mcp.Kind][]mcp.Item, len(lists))
	for _, k := range mcp.ItemKinds {
		raws, ok := lists[k]
		if !ok {
			continue
		}
		items := make([]mcp.Item, 0, len(raws))
		seen := map[string]int{}
		for i, raw := range raws {
			it, problems := mcp.ParseItem(k, raw)
			if len(problems) > 0 {
				return nil, fmt.Errorf("%s[%d]: %s", k.Key(), i, strings.Join(problems, "; "))
			}
			if j, dup := seen[it.Key]; dup {
				return nil, fmt.Errorf("%s[%d]: %s %q is already declared at %s[%d]", k.Key(), i, k.Noun(), it.Key, k.Key(), j)
			}
			seen[it.Key] = i
			items = append(items, it)
		}
		out[k] = items
	}
	return out, nil
}
