package jsonscan

import "strings"

// The reference tokens of a JSON Pointer (RFC 6901): "~" is written "~0"
// and "/" is written "~1" inside a token.
var (
	tokenEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	tokenUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// EscapeToken escapes one JSON Pointer reference token.
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return tokenEscaper.Replace(s)
}

// UnescapeToken is the reference token a pointer spells as s.
func UnescapeToken(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return tokenUnescaper.Replace(s)
}
