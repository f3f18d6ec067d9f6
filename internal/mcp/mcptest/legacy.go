package mcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/mcp"
)

// legacySupported is the legacy part of the version list. A Legacy server
// without an explicit list, or whose list names no legacy version, serves
// every legacy version driftd knows.
func (c *call) legacySupported() []string {
	if c.opts.Legacy && c.opts.SupportedVersions == nil {
		return mcp.LegacyVersions
	}
	var out []string
	for _, v := range c.supported() {
		if mcp.IsLegacyVersion(v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 && c.opts.Legacy {
		return mcp.LegacyVersions
	}
	return out
}

// badRequest answers a legacy-rule violation with 400 -32600.
func (c *call) badRequest(why string) reply {
	return rpcError(http.StatusBadRequest, c.id(), mcp.CodeInvalidRequest, "Bad Request: "+why, nil).because(why)
}

// legacy judges a request to a legacy-only (2025-11-25) server.
func (c *call) legacy() reply {
	switch m := c.r.Method; {
	case m == http.MethodGet, m == http.MethodDelete && !c.opts.Sessions:
		// Legitimate in 2025-11-25 (GET stream, session close); the server
		// just does not offer it.
		rep := plainReply(http.StatusMethodNotAllowed, "Method Not Allowed\n")
		rep.header = http.Header{"Allow": {c.allow()}}
		return rep
	case m != http.MethodPost && m != http.MethodDelete:
		rep := plainReply(http.StatusMethodNotAllowed, "Method Not Allowed\n").because("HTTP method " + m + " not allowed")
		rep.header = http.Header{"Allow": {c.allow()}}
		return rep
	}
	if rep, bad := c.gate(); bad {
		return rep
	}
	if c.r.Method == http.MethodDelete {
		return c.endSession()
	}
	if rep, bad := c.media(); bad {
		return rep
	}
	env, rej := parseEnvelope(c.body, c.tooBig)
	if rej != nil {
		return *rej
	}
	c.env = env
	supported := c.legacySupported()
	hv, hasHeader := c.singleHeader(mcp.HeaderProtocolVersion)
	sid := c.r.Header.Get(mcp.HeaderSessionID)
	sess := c.session(sid)
	if sess != nil && env.method != "initialize" {
		if !hasHeader {
			return c.badRequest(mcp.HeaderProtocolVersion + " missing")
		}
		if hv != sess.version {
			return c.badRequest(fmt.Sprintf("%s %q differs from the negotiated %q", mcp.HeaderProtocolVersion, hv, sess.version))
		}
	} else if hasHeader && !slices.Contains(supported, hv) {
		return c.legacyRefuse(hv, supported)
	}
	switch env.method {
	case "server/discover":
		if c.opts.LegacyDiscover == "discover-legacy-only" {
			return c.legacyOnlyDiscover(supported)
		}
		return c.inband(mcp.CodeMethodNotFound, "Method not found", nil)
	case "initialize":
		return c.initialize(supported)
	}
	if c.opts.Sessions {
		switch {
		case sid == "":
			return c.badRequest(mcp.HeaderSessionID + " missing")
		case sess == nil:
			rep := c.badRequest("unknown " + mcp.HeaderSessionID)
			rep.status = http.StatusNotFound
			return rep
		}
	} else if !hasHeader {
		return c.badRequest(mcp.HeaderProtocolVersion + " missing")
	}
	if env.isNotification() {
		if env.method == "notifications/initialized" && sess != nil {
			c.h.mu.Lock()
			sess.initialized = true
			c.h.mu.Unlock()
		}
		return reply{status: http.StatusAccepted}
	}
	if sess != nil && env.method != "ping" && !c.initialized(sess) {
		return c.badRequest(env.method + " before notifications/initialized")
	}
	return c.legacyDispatch()
}

func (c *call) allow() string {
	if c.opts.Sessions {
		return "POST, DELETE"
	}
	return "POST"
}

// singleHeader returns a header that must appear at most once; a repeated
// one counts as present with an impossible value.
func (c *call) singleHeader(name string) (string, bool) {
	vals := c.r.Header.Values(name)
	if len(vals) == 0 {
		return "", false
	}
	return strings.Join(vals, ", "), true
}

func (c *call) session(sid string) *session {
	if !c.opts.Sessions || sid == "" {
		return nil
	}
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.h.sessions[sid]
}

func (c *call) initialized(s *session) bool {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return s.initialized
}

func (c *call) endSession() reply {
	sid := c.r.Header.Get(mcp.HeaderSessionID)
	if sid == "" {
		return c.badRequest(mcp.HeaderSessionID + " missing")
	}
	c.h.mu.Lock()
	_, ok := c.h.sessions[sid]
	delete(c.h.sessions, sid)
	c.h.mu.Unlock()
	if !ok {
		rep := c.badRequest("unknown " + mcp.HeaderSessionID)
		rep.status = http.StatusNotFound
		return rep
	}
	return reply{status: http.StatusOK}
}

// legacyRefuse answers a request whose MCP-Protocol-Version the legacy
// server does not support (typically driftd's modern server/discover).
func (c *call) legacyRefuse(requested string, supported []string) reply {
	switch c.opts.LegacyDiscover {
	case "method-not-found":
		return c.inband(mcp.CodeMethodNotFound, "Method not found", nil)
	case "discover-legacy-only":
		if c.env.method == "server/discover" {
			return c.legacyOnlyDiscover(supported)
		}
		data := map[string]any{"supported": supported, "requested": requested}
		return c.fail(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version", data)
	}
	return plainReply(http.StatusBadRequest,
		"Bad Request: Unsupported protocol version (supported versions: "+strings.Join(supported, ",")+")\n")
}

// legacyOnlyDiscover is go-sdk 1.8 stateful behaviour: server/discover is
// checked and answered like a modern request, but lists legacy versions.
func (c *call) legacyOnlyDiscover(supported []string) reply {
	if c.env.isNotification() {
		return c.badRequest("server/discover sent as a notification")
	}
	params, _, rep, bad := c.validateModern()
	if bad {
		return rep
	}
	if rep, bad := c.checkMethodHeaders(params); bad {
		return rep
	}
	return c.result(c.discoverResult(supported), true)
}

// initialize performs the 2025-11-25 handshake.
func (c *call) initialize(supported []string) reply {
	if c.env.isNotification() {
		return c.badRequest("initialize sent as a notification")
	}
	p, _ := objectOf(c.env.params)
	requested, ok := stringOf(p["protocolVersion"])
	why := ""
	switch {
	case p == nil:
		why = "initialize params must be an object"
	case !ok:
		why = "initialize params.protocolVersion must be a string"
	case !isObject(p["capabilities"]):
		why = "initialize params.capabilities must be an object"
	default:
		if w := checkImplementation(p["clientInfo"]); w != "" {
			why = "initialize params.clientInfo " + w
		}
	}
	if why != "" {
		return c.refuse(mcp.CodeInvalidParams, why)
	}
	if len(supported) == 0 {
		// A modern-only server: list what it speaks in the error.
		return c.fail(mcp.CodeMethodNotFound, "Method not found: initialize", map[string]any{"supported": c.supported()})
	}
	version := requested
	if !slices.Contains(supported, requested) {
		version = slices.Max(supported)
	}
	rep := rpcResult(c.id(), map[string]any{
		"protocolVersion": version,
		"capabilities":    c.capabilities(),
		"serverInfo":      c.serverInfo(),
	})
	if c.opts.Legacy && c.opts.Sessions {
		sid := randomID()
		c.h.mu.Lock()
		c.h.sessions[sid] = &session{version: version}
		c.h.mu.Unlock()
		rep.header = http.Header{mcp.HeaderSessionID: {sid}}
	}
	return rep
}

// legacyInModern serves initialize-era traffic on a modern server, which
// like go-sdk's stateless mode handles it per request, without sessions.
func (c *call) legacyInModern() reply {
	supported := c.legacySupported()
	hv, hasHeader := c.singleHeader(mcp.HeaderProtocolVersion)
	if hasHeader && !slices.Contains(supported, hv) {
		data := map[string]any{"supported": c.supported(), "requested": hv}
		return c.fail(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version", data)
	}
	if c.env.method == "initialize" {
		return c.initialize(supported)
	}
	if !hasHeader {
		return c.badRequest(mcp.HeaderProtocolVersion + " missing")
	}
	if c.env.isNotification() {
		return reply{status: http.StatusAccepted}
	}
	return c.legacyDispatch()
}

func (c *call) legacyDispatch() reply {
	var params map[string]json.RawMessage
	if c.env.params != nil {
		var ok bool
		if params, ok = objectOf(c.env.params); !ok {
			return c.refuse(mcp.CodeInvalidParams, "params must be an object")
		}
	}
	switch c.env.method {
	case "ping":
		return rpcResult(c.id(), map[string]any{})
	case "tools/list":
		return c.toolsList(params, false)
	case "tools/call":
		return c.toolsCall(params, false)
	case "prompts/get", "resources/read":
		return c.getRead(params, false)
	case "prompts/list", "resources/list", "resources/templates/list":
		if rep, ok := c.itemsList(c.env.method, params, false); ok {
			return rep
		}
	}
	return c.inband(mcp.CodeMethodNotFound, "Method not found: "+c.env.method, nil)
}
