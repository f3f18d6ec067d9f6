package jsonscan

import "testing"

func TestPointerTokens(t *testing.T) {
	for _, c := range []struct{ token, escaped string }{
		{"a", "a"}, {"a/b", "a~1b"}, {"m~n", "m~0n"}, {"~1", "~01"}, {"/~", "~1~0"}, {"", ""},
	} {
		if got := EscapeToken(c.token); got != c.escaped {
			t.Errorf("EscapeToken(%q) = %q, want %q", c.token, got, c.escaped)
		}
		if got := UnescapeToken(c.escaped); got != c.token {
			t.Errorf("UnescapeToken(%q) = %q, want %q", c.escaped, got, c.token)
		}
	}
}
