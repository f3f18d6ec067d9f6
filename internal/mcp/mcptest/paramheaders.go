package mcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/driftd/driftd/internal/mcp"
)

// paramHeader is one x-mcp-header annotation of a tool's inputSchema.
type paramHeader struct {
	name string   // the Mcp-Param-{name} suffix
	path []string // argument path through nested "properties"
}

// paramHeaders collects the x-mcp-header annotations reachable from the
// schema root through chains of "properties", the only places the spec
// allows them.
func paramHeaders(tool json.RawMessage) []paramHeader {
	var t struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if json.Unmarshal(tool, &t) != nil {
		return nil
	}
	var out []paramHeader
	var walk func(schema json.RawMessage, path []string)
	walk = func(schema json.RawMessage, path []string) {
		if len(path) > 32 {
			return
		}
		s, _ := objectOf(schema)
		props, _ := objectOf(s["properties"])
		for key, sub := range props {
			p := append(append([]string(nil), path...), key)
			subObj, _ := objectOf(sub)
			if name, ok := stringOf(subObj["x-mcp-header"]); ok && name != "" {
				out = append(out, paramHeader{name: name, path: p})
			}
			walk(sub, p)
		}
	}
	walk(t.InputSchema, nil)
	return out
}

// checkParamHeaders enforces the Mcp-Param-* mirroring of annotated
// arguments and returns the violation, if any.
func (c *call) checkParamHeaders(tool, args json.RawMessage) string {
	for _, ph := range paramHeaders(tool) {
		header := "Mcp-Param-" + ph.name
		vals := c.r.Header.Values(header)
		val, present := lookupArg(args, ph.path)
		switch {
		case !present && len(vals) > 0:
			return header + " sent for an absent or null argument"
		case !present:
			continue
		case len(vals) == 0:
			return header + " missing"
		case len(vals) > 1:
			return header + " repeated"
		}
		dec, err := mcp.DecodeHeaderValue(vals[0])
		if err != nil {
			return fmt.Sprintf("%s %q invalid: %v", header, vals[0], err)
		}
		if !argMatches(val, dec) {
			return fmt.Sprintf("%s %q does not match argument %s", header, vals[0], val)
		}
	}
	return ""
}

// lookupArg follows path into the arguments object; null counts as absent.
func lookupArg(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, key := range path {
		m, ok := objectOf(cur)
		if !ok {
			return nil, false
		}
		if cur, ok = m[key]; !ok {
			return nil, false
		}
	}
	cur = bytes.TrimSpace(cur)
	return cur, len(cur) > 0 && string(cur) != "null"
}

// argMatches compares a body value with its decoded header text using the
// spec's conversions: strings as-is, integers in decimal, booleans as
// true/false.
func argMatches(val json.RawMessage, header string) bool {
	if s, ok := stringOf(val); ok {
		return s == header
	}
	switch string(val) {
	case "true", "false":
		return string(val) == header
	}
	want, err := strconv.ParseInt(header, 10, 64)
	if err != nil {
		return false
	}
	if n, err := strconv.ParseInt(string(val), 10, 64); err == nil {
		return n == want
	}
	f, err := strconv.ParseFloat(string(val), 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53-1 && int64(f) == want
}
