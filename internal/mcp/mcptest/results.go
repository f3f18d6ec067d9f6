package mcptest

import (
	"encoding/json"
	"net/http"

	"github.com/driftd/driftd/internal/mcp"
)

// fail builds a modern JSON-RPC error reply for the request.
func (c *call) fail(code int, msg string, data any) reply {
	return rpcError(modernStatus(code), c.id(), code, msg, data)
}

// inband builds an initialize-era JSON-RPC error reply: HTTP 200, as
// legacy servers answer handler errors.
func (c *call) inband(code int, msg string, data any) reply {
	return rpcError(http.StatusOK, c.id(), code, msg, data)
}

// id is the request's id for an error reply: from the parsed envelope, or
// read from the raw body when rejection came before parsing; nil if neither.
func (c *call) id() json.RawMessage {
	if c.env != nil {
		return c.env.id
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(c.body, &m) == nil && m.ID != nil && validID(m.ID) {
		return m.ID
	}
	return nil
}

func (c *call) discoverResult(versions []string) map[string]any {
	return map[string]any{
		"supportedVersions": versions,
		"capabilities":      c.capabilities(),
	}
}

// capabilities advertises tools, and prompts and resources when served.
func (c *call) capabilities() map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": false}}
	if c.opts.HideCapabilities {
		return caps
	}
	if c.opts.Prompts != nil {
		caps["prompts"] = map[string]any{"listChanged": false}
	}
	if c.opts.Resources != nil || c.opts.ResourceTemplates != nil {
		caps["resources"] = map[string]any{"listChanged": false, "subscribe": false}
	}
	return caps
}

// result decorates a modern result with resultType, cache hints and
// serverInfo, as the knobs allow, and wraps it in a response. A resultType
// the CallTool handler chose (input_required) is kept unless the
// ResultType knob overrides it.
func (c *call) result(res map[string]any, cacheable bool) reply {
	if _, chosen := res["resultType"]; !c.opts.OmitResultType && (!chosen || c.opts.ResultType != "") {
		rt := "complete"
		if c.opts.ResultType != "" {
			rt = c.opts.ResultType
		}
		res["resultType"] = rt
	}
	if cacheable && !c.opts.OmitCacheHints {
		ttl, scope := 0, "public"
		if c.opts.TTLMs != nil {
			ttl = *c.opts.TTLMs
		}
		if c.opts.CacheScope != "" {
			scope = c.opts.CacheScope
		}
		res["ttlMs"], res["cacheScope"] = ttl, scope
	}
	if !c.opts.OmitServerInfo {
		meta, _ := res["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[mcp.MetaServerInfo] = c.serverInfo()
		res["_meta"] = meta
	}
	return rpcResult(c.env.id, res)
}

func (c *call) serverInfo() map[string]string {
	name, version := c.opts.ServerName, c.opts.ServerVersion
	if name == "" {
		name = "mcptest"
	}
	if version == "" {
		version = "0.0.0"
	}
	return map[string]string{"name": name, "version": version}
}
