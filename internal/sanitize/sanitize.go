// Package sanitize is the one way a server-controlled string reaches an
// artifact — a report, human output, a log line, a metric label, a status
// page, a state file, SARIF, JUnit or Markdown. A server chooses these
// bytes, so they are bounded (a hostile server must not grow an artifact
// without limit), made visible (control and bidirectional-override
// characters could forge lines in a CI log or reorder text on a page;
// zero-width, tag and surplus variation-selector characters could hide
// text from the person reading it while a model still reads it) and,
// where the caller holds configured secrets, searched for those secrets
// (a server that echoes a request header must not get the credential
// into an artifact).
//
// An invisible character is never dropped: it is written as its Go
// escape (\x1b, \u200b, \U000e0041), so whoever reads the artifact sees
// that it was there — the evidence of an attack, not a silent repair.
package sanitize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"
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

// Clip returns s as valid UTF-8 with every invisible character (see
// invisible) written as a visible escape — \x1b below U+0080, \u200b in
// the Basic Multilingual Plane, \U000e0041 beyond it — cut to at most n
// bytes on a rune boundary. A cut string ends in
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
	cut, base := -1, false
	for i, r := range s {
		var piece string
		switch {
		case r == utf8.RuneError && !validAt(s, i):
			piece, base = "\uFFFD", true // a replacement character is a base
		case !invisible(r, base):
			piece, base = s[i:i+utf8.RuneLen(r)], carriesSelector(r)
		default:
			piece, base = escape(r), false
		}
		if b.Len()+len(piece) > n {
			cut = i
			break
		}
		b.WriteString(piece)
	}
	if cut >= 0 {
		// K counts the input's bytes left out, not the output's: an
		// escape or a U+FFFD for an invalid byte is longer than its input.
		sum := sha256.Sum256([]byte(s))
		fmt.Fprintf(&b, cutMark+"%d bytes sha256:%s]", len(s)-cut, hex.EncodeToString(sum[:4]))
	}
	return b.String()
}

// escape is the visible form of an invisible rune: Go's escape syntax.
func escape(r rune) string {
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
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
	base := false
	for i, r := range s {
		if (r == utf8.RuneError && !validAt(s, i)) || invisible(r, base) {
			return false
		}
		base = carriesSelector(r)
	}
	return true
}

// carriesSelector reports whether a variation selector may follow r,
// which appeared as itself: r is not ASCII (the bases of emoji,
// ideograph, math-symbol and Mongolian variants are not) and not a
// selector. An ASCII base is refused so that the text an escaper wrote —
// this one's "\u2069", strconv.Quote's "\U000e007f" — never lends its
// last letter or digit to a raw selector after it; a keycap "1️⃣" shows
// its selector escaped.
func carriesSelector(r rune) bool {
	return r >= utf8.RuneSelf && !unicode.Is(unicode.Variation_Selector, r)
}

func validAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError || size == 3 // an encoded U+FFFD is valid
}

// invisible reports whether r must not appear as itself in an artifact;
// afterBase is whether the rune before it appeared as itself and can carry
// a variation selector (carriesSelector). Invisible are
//
//   - controls (Cc): C0, DEL, C1;
//   - format characters (Cf): zero-width space, joiners and marks
//     (U+200B–U+200F), bidirectional embeddings, overrides and isolates
//     (U+202A–U+202E, U+2066–U+2069), word joiner and invisible operators
//     (U+2060–U+2064), the byte order mark (U+FEFF), the soft hyphen,
//     U+180E, the tag characters (U+E0001, U+E0020–U+E007F) and the rest
//     of the category;
//   - line and paragraph separators (U+2028, U+2029);
//   - the other default-ignorable code points: the combining grapheme
//     joiner, Hangul fillers, the unassigned rest of the tag block and of
//     U+E0000–U+E0FFF;
//   - noncharacters (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF);
//   - a variation selector (U+FE00–U+FE0F, U+E0100–U+E01EF, the
//     Mongolian ones) unless it follows a non-ASCII base character: one
//     selector is what an emoji or an ideograph variant needs ("⚠️" is
//     U+26A0 U+FE0F); a second in a row, or one at the start or after
//     ASCII, carries nothing a reader sees and is how bytes are smuggled
//     past one.
//
// The categories are the standard library's Unicode tables, so they
// follow the Unicode version Go ships.
func invisible(r rune, afterBase bool) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0xa0:
		return r >= 0x80
	case unicode.Is(unicode.Variation_Selector, r):
		return !afterBase
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point)
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

// With returns a Secrets holding s's values and values (s is unchanged).
func (s *Secrets) With(values ...string) *Secrets {
	out := NewSecrets(values...)
	if s != nil {
		out.values = append(slices.Clone(s.values), out.values...)
	}
	return out
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
