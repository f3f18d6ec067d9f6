package mcp

import "strings"

// parseAuthParams parses the auth-param list of a challenge
// (RFC 9110 §11.2): comma-separated name=value pairs, values as tokens or
// quoted strings. Unparseable parts are skipped; names are lower-cased.
func parseAuthParams(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t,")
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		name = strings.ToLower(strings.TrimSpace(name))
		rest = strings.TrimLeft(rest, " \t")
		var value string
		if strings.HasPrefix(rest, `"`) {
			value, rest = readQuoted(rest[1:])
		} else {
			end := strings.IndexAny(rest, ", \t")
			if end < 0 {
				end = len(rest)
			}
			value, rest = rest[:end], rest[end:]
		}
		if _, seen := out[name]; !seen && name != "" {
			out[name] = value
		}
		s = rest
	}
	return out
}

// readQuoted reads a quoted-string body up to its closing quote, undoing
// backslash escapes, and returns the value and what follows.
func readQuoted(s string) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}
