package mcptest

import (
	"bytes"
	"encoding/json"

	"github.com/driftd/driftd/internal/mcp"
)

// getRead answers prompts/get and resources/read. The Mcp-Name header of
// a modern request was checked against params.name or params.uri before
// (checkMethodHeaders); here the params are held to the spec's shapes: a
// string name or uri, and prompt arguments an object of strings.
func (c *call) getRead(params map[string]json.RawMessage, modern bool) reply {
	errReply := c.fail
	if !modern {
		errReply = c.inband
	}
	var result json.RawMessage
	var rpcErr *RPCError
	if c.env.method == "prompts/get" {
		name, ok := stringOf(params["name"])
		if !ok {
			return c.refuse(mcp.CodeInvalidParams, "params.name must be a string")
		}
		args, hasArgs := params["arguments"]
		if hasArgs {
			m, ok := objectOf(args)
			if !ok {
				return c.refuse(mcp.CodeInvalidParams, "params.arguments must be an object")
			}
			for k, v := range m {
				if _, ok := stringOf(v); !ok {
					return c.refuse(mcp.CodeInvalidParams, "params.arguments."+k+" must be a string")
				}
			}
		}
		result, rpcErr = c.getPrompt(name, args)
	} else {
		uri, ok := stringOf(params["uri"])
		if !ok {
			return c.refuse(mcp.CodeInvalidParams, "params.uri must be a string")
		}
		result, rpcErr = c.readResource(uri)
	}
	if rpcErr != nil {
		return errReply(rpcErr.Code, rpcErr.Message, rpcErr.Data)
	}
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var obj map[string]any
	if !modern || dec.Decode(&obj) != nil || obj == nil {
		return rpcResult(c.id(), result)
	}
	// resources/read is a CacheableResult; prompts/get is not.
	return c.result(obj, c.env.method == "resources/read")
}

func (c *call) getPrompt(name string, args json.RawMessage) (json.RawMessage, *RPCError) {
	if c.opts.GetPrompt != nil {
		return c.opts.GetPrompt(name, args)
	}
	if !served(c.opts.Prompts, "name", name) {
		return nil, &RPCError{Code: mcp.CodeInvalidParams, Message: "Unknown prompt: " + name}
	}
	return json.RawMessage(`{"description":"mcptest prompt","messages":[{"role":"user","content":{"type":"text","text":"mcptest"}}]}`), nil
}

func (c *call) readResource(uri string) (json.RawMessage, *RPCError) {
	if c.opts.ReadResource != nil {
		return c.opts.ReadResource(uri)
	}
	if !served(c.opts.Resources, "uri", uri) {
		return nil, &RPCError{Code: mcp.CodeInvalidParams, Message: "Resource not found: " + uri}
	}
	b, _ := json.Marshal(map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/plain", "text": "mcptest"}}})
	return b, nil
}

// served reports whether an item of items has key equal to want.
func served(items []json.RawMessage, key, want string) bool {
	for _, it := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) != nil {
			continue
		}
		if s, ok := stringOf(m[key]); ok && s == want {
			return true
		}
	}
	return false
}
