package mcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/driftd/driftd/internal/mcp"
)

var defaultVersions = []string{mcp.ModernVersion, "2025-11-25"}

// supported is the configured version list.
func (c *call) supported() []string {
	if c.opts.SupportedVersions != nil {
		return c.opts.SupportedVersions
	}
	return defaultVersions
}

// modern judges a request to a modern (dual-era) server.
func (c *call) modern() reply {
	if c.r.Method != http.MethodPost {
		why := "HTTP method " + c.r.Method + " not allowed"
		rep := rpcError(http.StatusMethodNotAllowed, c.id(), mcp.CodeInvalidRequest, "Method Not Allowed: "+why, nil).because(why)
		rep.header = http.Header{"Allow": {http.MethodPost}}
		return rep
	}
	if rep, bad := c.gate(); bad {
		return rep
	}
	if rep, bad := c.media(); bad {
		return rep
	}
	env, rej := parseEnvelope(c.body, c.tooBig)
	if rej != nil {
		return *rej
	}
	c.env = env
	if c.legacyShaped() {
		return c.legacyInModern()
	}
	if env.isNotification() {
		why := fmt.Sprintf("notification %q: this revision defines no client-to-server notifications over HTTP", env.method)
		return rpcError(http.StatusBadRequest, nil, mcp.CodeInvalidRequest, "Invalid Request: "+why, nil).because(why)
	}
	params, version, rep, bad := c.validateModern()
	if bad {
		return rep
	}
	if rep, bad := c.checkVersion(version); bad {
		return rep
	}
	if rep, bad := c.checkMethodHeaders(params); bad {
		return rep
	}
	if rep, bad := c.rejectFirst(version); bad {
		return rep
	}
	switch env.method {
	case "server/discover":
		return c.result(c.discoverResult(c.supported()), true)
	case "tools/list":
		return c.toolsList(params, true)
	case "tools/call":
		return c.toolsCall(params, true)
	case "prompts/get", "resources/read":
		return c.getRead(params, true)
	case "prompts/list", "resources/list", "resources/templates/list":
		if rep, ok := c.itemsList(env.method, params, true); ok {
			return rep
		}
	}
	var data any
	if env.method == "initialize" {
		// Modern servers SHOULD list their versions in any error to initialize.
		data = map[string]any{"supported": c.supported()}
	}
	return c.fail(mcp.CodeMethodNotFound, "Method not found: "+env.method, data)
}

// legacyShaped reports whether a modern server should treat the request as
// initialize-era traffic: no per-request _meta version, and either a
// lifecycle method or a legacy MCP-Protocol-Version header.
func (c *call) legacyShaped() bool {
	if p, ok := objectOf(c.env.params); ok {
		if m, ok := objectOf(p["_meta"]); ok {
			if _, has := m[mcp.MetaProtocolVersion]; has {
				return false
			}
		}
	}
	switch c.env.method {
	case "initialize", "notifications/initialized":
		return true
	}
	return mcp.IsLegacyVersion(c.r.Header.Get(mcp.HeaderProtocolVersion))
}

// validateModern applies the _meta and MCP-Protocol-Version rules.
func (c *call) validateModern() (params map[string]json.RawMessage, version string, rep reply, bad bool) {
	invalid := func(why string) (map[string]json.RawMessage, string, reply, bool) {
		return nil, "", c.fail(mcp.CodeInvalidParams, "Invalid params: "+why, nil).because(why), true
	}
	mismatch := func(why string) (map[string]json.RawMessage, string, reply, bool) {
		return nil, "", c.fail(mcp.CodeHeaderMismatch, "Header mismatch: "+why, nil).because(why), true
	}
	if c.env.params == nil {
		return invalid("params missing (params._meta is required)")
	}
	params, ok := objectOf(c.env.params)
	if !ok {
		return invalid("params must be an object")
	}
	rawMeta, ok := params["_meta"]
	if !ok {
		return invalid("params._meta missing")
	}
	meta, ok := objectOf(rawMeta)
	if !ok {
		return invalid("params._meta must be an object")
	}
	rawVersion, ok := meta[mcp.MetaProtocolVersion]
	if !ok {
		return invalid("_meta protocolVersion missing")
	}
	if version, ok = stringOf(rawVersion); !ok {
		return invalid("_meta protocolVersion must be a string")
	}
	caps, ok := meta[mcp.MetaClientCapabilities]
	if !ok {
		return invalid("_meta clientCapabilities missing")
	}
	if !isObject(caps) {
		return invalid("_meta clientCapabilities must be an object")
	}
	if info, ok := meta[mcp.MetaClientInfo]; ok {
		if why := checkImplementation(info); why != "" {
			return invalid("_meta clientInfo " + why)
		}
	}
	if why := checkOptionalMeta(meta); why != "" {
		return invalid(why)
	}
	if why := c.headerEquals(mcp.HeaderProtocolVersion, version, "_meta protocolVersion", false); why != "" {
		return mismatch(why)
	}
	return params, version, reply{}, false
}

// checkMethodHeaders applies the Mcp-Method and Mcp-Name rules.
func (c *call) checkMethodHeaders(params map[string]json.RawMessage) (reply, bool) {
	if why := c.headerEquals(mcp.HeaderMethod, c.env.method, "method", false); why != "" {
		return c.fail(mcp.CodeHeaderMismatch, "Header mismatch: "+why, nil).because(why), true
	}
	if key, ok := nameHeaderMethods[c.env.method]; ok {
		name, ok := stringOf(params[key])
		if !ok {
			why := "params." + key + " must be a string"
			return c.fail(mcp.CodeInvalidParams, "Invalid params: "+why, nil).because(why), true
		}
		if why := c.headerEquals(mcp.HeaderName, name, "params."+key, true); why != "" {
			return c.fail(mcp.CodeHeaderMismatch, "Header mismatch: "+why, nil).because(why), true
		}
	}
	return reply{}, false
}

// nameHeaderMethods mirrors the spec's Mcp-Name table; kept local so the
// mock does not inherit a client-side mistake.
var nameHeaderMethods = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// headerEquals checks that header appears exactly once and equals want
// (after value decoding when encoded is set); it returns the violation.
func (c *call) headerEquals(header, want, what string, encoded bool) string {
	vals := c.r.Header.Values(header)
	switch {
	case len(vals) == 0:
		return header + " missing"
	case len(vals) > 1:
		return header + " repeated"
	}
	got := vals[0]
	if encoded {
		dec, err := mcp.DecodeHeaderValue(got)
		if err != nil {
			return fmt.Sprintf("%s %q invalid: %v", header, got, err)
		}
		got = dec
	}
	if got != want {
		return fmt.Sprintf("%s %q does not match %s %q", header, vals[0], what, want)
	}
	return ""
}

// checkImplementation validates an Implementation object (clientInfo).
func checkImplementation(raw json.RawMessage) string {
	m, ok := objectOf(raw)
	if !ok {
		return "must be an object"
	}
	for _, k := range []string{"name", "version"} {
		if _, ok := stringOf(m[k]); !ok {
			return k + " must be a string"
		}
	}
	return ""
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func checkOptionalMeta(meta map[string]json.RawMessage) string {
	if raw, ok := meta["io.modelcontextprotocol/logLevel"]; ok {
		if s, _ := stringOf(raw); !slices.Contains(logLevels, s) {
			return "_meta logLevel must be a LoggingLevel"
		}
	}
	if raw, ok := meta["progressToken"]; ok {
		var n json.Number
		if _, isStr := stringOf(raw); !isStr && json.Unmarshal(raw, &n) != nil {
			return "_meta progressToken must be a string or a number"
		}
	}
	return ""
}

// checkVersion applies the version-support rule: the modern path serves
// the non-legacy members of the version list.
func (c *call) checkVersion(version string) (reply, bool) {
	if mcp.IsLegacyVersion(version) || !slices.Contains(c.supported(), version) {
		return c.unsupported(version), true
	}
	return reply{}, false
}

// rejectFirst is the RejectFirstModern knob: it refuses the first modern
// request that passed every rule.
func (c *call) rejectFirst(version string) (reply, bool) {
	if !c.opts.RejectFirstModern {
		return reply{}, false
	}
	c.h.mu.Lock()
	first := !c.h.rejected
	c.h.rejected = true
	c.h.mu.Unlock()
	return c.unsupported(version), first
}

func (c *call) unsupported(version string) reply {
	data := map[string]any{"supported": c.supported(), "requested": version}
	return c.fail(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version", data)
}
