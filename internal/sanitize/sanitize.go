// Package sanitize is the one way a server-controlled string reaches an
// artifact — a report, human output, a log line, a metric label, a status
// page, a state file. A server chooses these bytes, so they are bounded
// (a hostile server must not grow an artifact without limit), made visible
// (control and bidirectional-override characters could forge lines in a CI
// log or reorder text on a page) and, where the caller holds configured
// secrets, searched for those secrets (a server that echoes a request
// header must not get the credential into an artifact).
package sanitize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The bounds, in bytes of the sanitised string before the cut marker.
const (
	// NameBytes bounds names: tools, servers, versions, metric label values.
	NameBytes = 128
	// TextBytes bounds text quoted in messages: header values, error text,
	// schema fragments.
	TextBytes = 512

	// markerMax is the longest cut marker: "…[+" 20 digits " bytes
	// sha256:" 8 hex digits "]".
	markerMax = 48
	// MaxName is the longest string Name returns.
	MaxName = NameBytes + markerMax
	// MaxText is the longest string Text returns.
	MaxText = TextBytes + markerMax
)

// Name is Clip(s, NameBytes).
func Name(s string) string { return Clip(s, NameBytes) }

// Text is Clip(s, TextBytes).
func Text(s string) string { return Clip(s, TextBytes) }

// Clip returns s as valid UTF-8 with every control and bidirectional
// formatting character written as a visible escape (\x1b, \u202e), cut to
// at most n bytes on a rune boundary. A cut string ends in
// "…[+K bytes sha256:XXXXXXXX]", the size and digest of the whole input,
// so two long names that share a prefix stay distinct. A string that
// needs nothing — Clip's own output included, so that a string passed
// through two borders is cut once — is returned as is, without allocating.
func Clip(s string, n int) string {
	if (len(s) <= n || clipped(s, n)) && plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(min(len(s), n) + 48)
	cut := false
	for i, r := range s {
		var piece string
		switch {
		case r == utf8.RuneError && !validAt(s, i):
			piece = "\uFFFD"
		case visible(r):
			piece = s[i : i+utf8.RuneLen(r)]
		case r < 0x80:
			piece = fmt.Sprintf(`\x%02x`, r)
		default:
			piece = fmt.Sprintf(`\u%04x`, r)
		}
		if b.Len()+len(piece) > n {
			cut = true
			break
		}
		b.WriteString(piece)
	}
	if cut {
		sum := sha256.Sum256([]byte(s))
		fmt.Fprintf(&b, cutMark+"%d bytes sha256:%s]", len(s)-b.Len(), hex.EncodeToString(sum[:4]))
	}
	return b.String()
}

// clipped reports whether s is what Clip(…, n) returns for a longer
// string: at most n bytes, then the cut marker.
func clipped(s string, n int) bool {
	i := strings.LastIndex(s, cutMark)
	if i < 0 || i > n || len(s)-i > markerMax {
		return false
	}
	size, rest, ok := strings.Cut(s[i+len(cutMark):], " bytes sha256:")
	digest, ok2 := strings.CutSuffix(rest, "]")
	return ok && ok2 && size != "" && strings.Trim(size, "0123456789") == "" &&
		len(digest) == 8 && strings.Trim(digest, "0123456789abcdef") == ""
}

// cutMark starts the marker of a cut string.
const cutMark = "…[+"

// plain reports whether s is printable ASCII only: the common case.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return plainUnicode(s[i:])
		}
	}
	return true
}

func plainUnicode(s string) bool {
	for i, r := range s {
		if (r == utf8.RuneError && !validAt(s, i)) || !visible(r) {
			return false
		}
	}
	return true
}

func validAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError || size == 3 // an encoded U+FFFD is valid
}

// visible reports whether r may appear as itself: not a C0 or C1 control,
// DEL, a line or paragraph separator, or a bidirectional formatting
// character (which can reorder the text around it).
func visible(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return false
	case r == 0x061c || r == 0x200e || r == 0x200f || r == 0x2028 || r == 0x2029:
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return false
	}
	return true
}

// Redacted stands where a configured secret was found.
const Redacted = "<redacted>"

// Secrets replaces configured secret values inside server-controlled
// strings. The zero value (and nil) replaces nothing.
type Secrets struct{ values []string }

// minSecret is the shortest value treated as a secret: shorter ones
// (a one-letter header value) would redact ordinary text everywhere.
const minSecret = 4

// NewSecrets holds the given values, ignoring empty and very short ones.
func NewSecrets(values ...string) *Secrets {
	s := &Secrets{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= minSecret {
			s.values = append(s.values, v)
		}
	}
	return s
}

// Redact replaces every occurrence of a secret in str with Redacted.
func (s *Secrets) Redact(str string) string {
	if s == nil {
		return str
	}
	for _, v := range s.values {
		if strings.Contains(str, v) {
			str = strings.ReplaceAll(str, v, Redacted)
		}
	}
	return str
}

// RedactBytes is Redact for raw bytes, such as a tool definition kept in a
// snapshot; b itself is not modified.
func (s *Secrets) RedactBytes(b []byte) []byte {
	if s == nil {
		return b
	}
	for _, v := range s.values {
		if bytes.Contains(b, []byte(v)) {
			b = bytes.ReplaceAll(b, []byte(v), []byte(Redacted))
		}
	}
	return b
}

// Contains reports whether str carries any of the secrets.
func (s *Secrets) Contains(str string) bool {
	if s == nil {
		return false
	}
	for _, v := range s.values {
		if strings.Contains(str, v) {
			return true
		}
	}
	return false
}

// Empty reports whether s holds no secret.
func (s *Secrets) Empty() bool { return s == nil || len(s.values) == 0 }
