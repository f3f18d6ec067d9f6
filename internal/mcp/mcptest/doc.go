// Package mcptest is a strict in-process MCP Streamable HTTP server for
// tests and the demo, in the spirit of net/http/httptest.
//
// By default it enforces every header and envelope rule of the 2026-07-28
// revision and rejects violations with the status and JSON-RPC code the
// spec prescribes, because a mock that accepts anything proves nothing.
// Options switch on drift (tools, paging, per-connection variance), legacy
// (initialize-based) behaviour and hostile faults. Every request is logged
// so tests can assert that a client broke no rule (Handler.Violations,
// Handler.CheckNoViolations).
//
// Where the spec leaves the answer open, the mock chooses:
//   - Accept not naming both media types: 406, -32600.
//   - Content-Type other than application/json: 415, -32600.
//   - body over 1 MiB: 413, -32600.
//   - foreign Origin header: 403, -32600.
//   - non-POST (modern): 405 with Allow: POST, -32600.
//   - modern handler errors: -32602 (unknown tool, bad cursor) 400, -32603
//     500, other codes 200; -32601 is always 404 as the spec requires.
//   - legacy (initialize-era) handler errors: in-band with HTTP 200;
//     legacy rule violations: 400 with -32600 (-32602 for bad params), 404
//     for an unknown session.
//
// A modern server (the default) is dual-era like go-sdk's stateless mode:
// a request without _meta protocolVersion that is initialize,
// notifications/initialized or carries a legacy MCP-Protocol-Version is
// served under the 2025-11-25 rules, without sessions, when a legacy
// version is in SupportedVersions.
package mcptest
