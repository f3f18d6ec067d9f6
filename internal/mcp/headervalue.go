package mcp

import (
	"encoding/base64"
	"errors"
	"strings"
)

// The sentinel markers of the 2026-07-28 header value encoding. They are
// case-sensitive.
const (
	encodedPrefix = "=?base64?"
	encodedSuffix = "?="
)

// EncodeHeaderValue returns v as it must travel in an MCP header such as
// Mcp-Name: plain when it is safe visible ASCII, otherwise
// =?base64?{standard padded Base64 of the UTF-8 bytes}?=. A plain value that
// already looks like the sentinel is encoded too, so it cannot be misread.
func EncodeHeaderValue(v string) string {
	if isPlainSafe(v) && !looksEncoded(v) {
		return v
	}
	return encodedPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + encodedSuffix
}

// DecodeHeaderValue reverses EncodeHeaderValue. It rejects values that could
// not have been sent legally: raw non-ASCII or control bytes, and a sentinel
// whose payload is not valid padded Base64.
func DecodeHeaderValue(h string) (string, error) {
	if looksEncoded(h) {
		payload := h[len(encodedPrefix) : len(h)-len(encodedSuffix)]
		b, err := base64.StdEncoding.Strict().DecodeString(payload)
		if err != nil {
			return "", errors.New("header value: invalid base64 payload")
		}
		return string(b), nil
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", errors.New("header value: byte outside visible ASCII must be base64-encoded")
		}
	}
	if h != strings.TrimSpace(h) {
		return "", errors.New("header value: leading or trailing whitespace must be base64-encoded")
	}
	return h, nil
}

func looksEncoded(v string) bool {
	return len(v) >= len(encodedPrefix)+len(encodedSuffix) &&
		strings.HasPrefix(v, encodedPrefix) && strings.HasSuffix(v, encodedSuffix)
}

// isPlainSafe reports whether v may travel as-is: visible ASCII, inner
// spaces and tabs, no leading or trailing whitespace, not empty.
func isPlainSafe(v string) bool {
	if v == "" || v != strings.Trim(v, " \t") {
		return v == ""
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != ' ' && c != '\t' && (c < 0x21 || c > 0x7e) {
			return false
		}
	}
	return true
}
