package mcptest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/driftd/driftd/internal/mcp"
)

// servedTools is the tool list this request's connection sees.
func (c *call) servedTools() []json.RawMessage {
	tools := c.opts.Tools
	if c.conn != 1 {
		if c.opts.OtherConnTools != nil {
			tools = c.opts.OtherConnTools
		}
		if c.opts.ReverseOtherConns {
			tools = slices.Clone(tools)
			slices.Reverse(tools)
		}
	}
	if tools == nil {
		tools = []json.RawMessage{}
	}
	return tools
}

// refuse answers a client violation; legacy and modern differ only in
// nothing here, since the spec fixes 400 for malformed requests.
func (c *call) refuse(code int, why string) reply {
	return rpcError(http.StatusBadRequest, c.id(), code, "Invalid params: "+why, nil).because(why)
}

func (c *call) toolsList(params map[string]json.RawMessage, modern bool) reply {
	return c.listPage("tools", c.servedTools(), params, modern)
}

// itemsList answers prompts/list, resources/list or
// resources/templates/list; ok is false when that list is not served.
func (c *call) itemsList(method string, params map[string]json.RawMessage, modern bool) (reply, bool) {
	var items []json.RawMessage
	var key string
	switch method {
	case "prompts/list":
		items, key = c.opts.Prompts, "prompts"
		if c.conn != 1 && c.opts.OtherConnPrompts != nil {
			items = c.opts.OtherConnPrompts
		}
	case "resources/list":
		items, key = c.opts.Resources, "resources"
		if items == nil && c.opts.ResourceTemplates != nil {
			items = []json.RawMessage{}
		}
	case "resources/templates/list":
		items, key = c.opts.ResourceTemplates, "resourceTemplates"
		if items == nil && c.opts.Resources != nil {
			items = []json.RawMessage{}
		}
	}
	if items == nil {
		return reply{}, false
	}
	if c.conn != 1 && c.opts.ReverseOtherConns {
		items = slices.Clone(items)
		slices.Reverse(items)
	}
	return c.listPage(key, items, params, modern), true
}

// listPage answers one page of a list: items from the params' cursor on,
// PageSize of them, and a nextCursor when more remain.
func (c *call) listPage(key string, items []json.RawMessage, params map[string]json.RawMessage, modern bool) reply {
	offset := 0
	if raw, ok := params["cursor"]; ok {
		cur, ok := stringOf(raw)
		if !ok {
			return c.refuse(mcp.CodeInvalidParams, "params.cursor must be a string")
		}
		if offset, ok = c.h.cursorOffset(cur); !ok {
			return c.refuse(mcp.CodeInvalidParams, "unknown cursor "+cur)
		}
	}
	size := c.opts.PageSize
	if size <= 0 {
		size = len(items)
	}
	offset = min(offset, len(items))
	end := min(offset+size, len(items))
	res := map[string]any{key: items[offset:end]}
	if end < len(items) {
		res["nextCursor"] = c.h.cursorFor(end)
	}
	if c.faultOn(FaultCursorLoop) {
		res["nextCursor"] = c.h.cursorFor(min(size, len(items)))
	}
	if !modern {
		return rpcResult(c.id(), res)
	}
	return c.result(res, true)
}

func (c *call) toolsCall(params map[string]json.RawMessage, modern bool) reply {
	name, ok := stringOf(params["name"])
	if !ok {
		return c.refuse(mcp.CodeInvalidParams, "params.name must be a string")
	}
	args, hasArgs := params["arguments"]
	if hasArgs && !isObject(args) {
		return c.refuse(mcp.CodeInvalidParams, "params.arguments must be an object")
	}
	tool, found := findTool(c.servedTools(), name)
	if modern && found {
		if why := c.checkParamHeaders(tool, args); why != "" {
			return c.fail(mcp.CodeHeaderMismatch, "Header mismatch: "+why, nil).because(why)
		}
	}
	errReply := c.fail
	if !modern {
		errReply = c.inband
	}
	result := json.RawMessage(`{"content":[]}`)
	if c.opts.CallTool != nil {
		res, rpcErr := c.opts.CallTool(name, args)
		if rpcErr != nil {
			return errReply(rpcErr.Code, rpcErr.Message, rpcErr.Data)
		}
		result = res
	} else if !found {
		return errReply(mcp.CodeInvalidParams, "Unknown tool: "+name, nil)
	}
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var obj map[string]any
	if !modern || dec.Decode(&obj) != nil || obj == nil {
		// Not an object (or legacy): pass the handler's result through untouched.
		return rpcResult(c.id(), result)
	}
	return c.result(obj, false)
}

func findTool(tools []json.RawMessage, name string) (json.RawMessage, bool) {
	for _, t := range tools {
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &head) == nil && head.Name == name {
			return t, true
		}
	}
	return nil, false
}

// cursorFor returns the opaque cursor for a page offset, minting it once.
func (h *Handler) cursorFor(offset int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.offsets[offset]; ok {
		return cur
	}
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	cur := base64.RawURLEncoding.EncodeToString(b)
	h.offsets[offset], h.cursors[cur] = cur, offset
	return cur
}

func (h *Handler) cursorOffset(cur string) (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	off, ok := h.cursors[cur]
	return off, ok
}
