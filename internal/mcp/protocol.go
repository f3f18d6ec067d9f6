// Package mcp is driftd's MCP Streamable HTTP client. It speaks the wire
// itself, because what driftd reports is the wire: status codes, headers,
// content types and bodies, with no silent fallback or retry.
package mcp

import "slices"

// ModernVersion is the stateless revision driftd speaks natively.
const ModernVersion = "2026-07-28"

// DefaultLegacyVersion is used for the fallback initialize when the server
// named no legacy version driftd speaks.
const DefaultLegacyVersion = "2025-11-25"

// LegacyVersions are the initialize-based revisions driftd can fall back to,
// newest first.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Reserved _meta keys of the 2026-07-28 revision.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// HTTP headers of the Streamable HTTP transport.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderSessionID       = "Mcp-Session-Id"
)

// JSON-RPC error codes driftd recognises.
const (
	CodeParseError                 = -32700
	CodeInvalidRequest             = -32600
	CodeMethodNotFound             = -32601
	CodeInvalidParams              = -32602
	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// IsModernError reports whether code is one of the errors only a modern
// (2026-07-28) server emits; such a server must not be treated as legacy.
func IsModernError(code int) bool {
	return code == CodeHeaderMismatch || code == CodeMissingClientCapability || code == CodeUnsupportedProtocolVersion
}

// IsLegacyVersion reports whether v is an initialize-based revision driftd speaks.
func IsLegacyVersion(v string) bool { return slices.Contains(LegacyVersions, v) }

// NewestLegacy returns the newest legacy revision driftd speaks among
// offered, or "" if none is shared.
func NewestLegacy(offered []string) string {
	for _, v := range LegacyVersions {
		if slices.Contains(offered, v) {
			return v
		}
	}
	return ""
}

// NameHeaderMethods are the methods whose params carry a name or uri that
// must be mirrored into Mcp-Name, with the params key to mirror.
var NameHeaderMethods = map[string]string{
	"tools/call":     "name",
	"prompts/get":    "name",
	"resources/read": "uri",
}
