package sanitize

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"search_orders", "search_orders"},
		{"héllo wörld", "héllo wörld"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"0 ERROR\r\n0 WARN", `0 ERROR\x0d\x0a0 WARN`},
		{"nul\x00", `nul\x00`},
		{"evil\u202eexe.txt", `evil\u202eexe.txt`},
		{"c1\u0085", `c1\u0085`},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"ok\uFFFD", "ok\uFFFD"},
	} {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestClipBoundsAndDigest(t *testing.T) {
	long := strings.Repeat("é", 1<<20)
	got := Name(long)
	if !utf8.ValidString(got) || len(got) > MaxName {
		t.Fatalf("len %d, valid %v: %q", len(got), utf8.ValidString(got), got)
	}
	if !strings.Contains(got, "…[+") || !strings.Contains(got, "sha256:") {
		t.Errorf("no size and digest marker: %q", got)
	}
	other := Name(long + "x")
	if other == got {
		t.Error("two long names with one prefix clip to the same string")
	}
	if esc := Name(strings.Repeat("\x1b", 1000)); len(esc) > MaxName {
		t.Errorf("escapes are not bounded: %d bytes", len(esc))
	} else if !strings.Contains(esc, "…[+968 bytes ") {
		t.Errorf("the marker counts the input's bytes left out (1000 - 32 escaped): %q", esc[NameBytes:])
	}
}

func TestSecrets(t *testing.T) {
	s := NewSecrets("Bearer-MARKER-5ecr3t", "", "ab")
	if got := s.Redact("tool echo Bearer-MARKER-5ecr3t twice Bearer-MARKER-5ecr3t"); strings.Contains(got, "MARKER") || strings.Count(got, Redacted) != 2 {
		t.Errorf("Redact: %q", got)
	}
	if got := s.Redact("about ab"); got != "about ab" {
		t.Errorf("a short value was treated as a secret: %q", got)
	}
	raw := []byte(`{"name":"x","description":"Bearer-MARKER-5ecr3t"}`)
	if got := s.RedactBytes(raw); strings.Contains(string(got), "MARKER") || !strings.Contains(string(raw), "MARKER") {
		t.Errorf("RedactBytes: %s (input %s)", got, raw)
	}
	var none *Secrets
	if !s.Contains("a Bearer-MARKER-5ecr3t here") || s.Contains("nothing secret") {
		t.Error("Contains does not tell a secret from ordinary text")
	}
	if none.Redact("x") != "x" || !none.Empty() || none.Contains("x") {
		t.Error("nil Secrets")
	}
}

func BenchmarkNamePlain(b *testing.B) {
	for b.Loop() {
		_ = Name("search_orders_by_customer")
	}
}

// TestClipIsIdempotent: a string that passes two borders (the report, then
// a metric label) is cut once; a look-alike marker in a short, plain
// string is just text.
func TestClipIsIdempotent(t *testing.T) {
	for _, in := range []string{strings.Repeat("n", 1<<20), strings.Repeat("é\x1b", 1000), "evil\u202e", "plain_name"} {
		once := Name(in)
		if twice := Name(once); twice != once {
			t.Errorf("Name(Name(%.20q…)) = %q, want %q", in, twice, once)
		}
		if text := Text(Text(in)); text != Text(in) {
			t.Errorf("Text is not idempotent on %.20q…", in)
		}
	}
}

// span is a class of code points by its first and last.
type span struct{ lo, hi rune }

// TestInvisibleClasses: every code point of each invisible class, between
// two letters, comes out as its escape — never as itself, never dropped —
// and the result is what a second pass leaves alone.
func TestInvisibleClasses(t *testing.T) {
	for _, c := range []struct {
		class string
		spans []span
	}{
		{"C0, DEL and C1 controls", []span{{0x00, 0x1f}, {0x7f, 0x9f}}},
		{"zero-width space, joiners, direction marks", []span{{0x200b, 0x200f}}},
		{"word joiner and invisible operators", []span{{0x2060, 0x2064}}},
		{"byte order mark", []span{{0xfeff, 0xfeff}}},
		{"bidi embeddings, overrides and isolates", []span{{0x202a, 0x202e}, {0x2066, 0x2069}, {0x061c, 0x061c}}},
		{"line and paragraph separators", []span{{0x2028, 0x2029}}},
		{"Unicode tag block", []span{{0xe0000, 0xe007f}}},
		{"other format characters", []span{{0x00ad, 0x00ad}, {0x180e, 0x180e}, {0xfff9, 0xfffb}, {0x110bd, 0x110bd}, {0x1d173, 0x1d17a}}},
		{"other default-ignorables", []span{{0x034f, 0x034f}, {0x115f, 0x1160}, {0x3164, 0x3164}, {0xffa0, 0xffa0}, {0xe0080, 0xe00ff}, {0xe01f0, 0xe0fff}}},
		{"noncharacters", []span{{0xfdd0, 0xfdef}, {0xfffe, 0xffff}, {0x1fffe, 0x1ffff}, {0x10fffe, 0x10ffff}}},
	} {
		t.Run(c.class, func(t *testing.T) {
			for _, sp := range c.spans {
				for r := sp.lo; r <= sp.hi; r++ {
					in := "a" + string(r) + "b"
					want := "a" + goEscape(r) + "b"
					if got := Name(in); got != want {
						t.Errorf("Name(%U between letters) = %q, want %q", r, got, want)
					}
					if got := Name(want); got != want {
						t.Errorf("the escape of %U is changed by a second pass: %q", r, got)
					}
				}
			}
		})
	}
}

// goEscape is Go's escape of r as the docs promise it: \xHH below
// U+0080, \uHHHH in the BMP, \UHHHHHHHH beyond, lower-case hex.
func goEscape(r rune) string {
	switch {
	case r < 0x80:
		return `\x` + strconvHex(uint64(r), 2)
	case r <= 0xffff:
		return `\u` + strconvHex(uint64(r), 4)
	}
	return `\U` + strconvHex(uint64(r), 8)
}

func strconvHex(v uint64, width int) string {
	s := strconv.FormatUint(v, 16)
	return strings.Repeat("0", width-len(s)) + s
}

// TestVariationSelectors: one selector after a base character is what an
// emoji or an ideograph variant needs and stays; one at the start, after
// another selector or after an escaped character carries nothing visible
// and is escaped — the "emoji smuggling" run of selectors after one emoji
// shows every smuggled byte.
func TestVariationSelectors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"⚠\ufe0f warning", "⚠\ufe0f warning"},
		{"1\ufe0f\u20e3", `1\ufe0f` + "\u20e3"},
		{"\u00a9\ufe0f", "\u00a9\ufe0f"},
		{"é\u200b\ufe0f", `é\u200b\ufe0f`},
		{strconv.Quote("\U000e007f\ufe00"), `"\U000e007f\ufe00"`},
		{strconv.Quote("\u2069\ufe00"), `"\u2069\ufe00"`},
		{"\u845b\U000e0100", "\u845b\U000e0100"},
		{"\ufe0fx", `\ufe0fx`},
		{"✌\ufe0f\ufe0e", "✌\ufe0f" + `\ufe0e`},
		{"x\ufe0f", `x\ufe0f`},
		{"😀\U000e0148\U000e0145\U000e014c", "😀\U000e0148" + `\U000e0145\U000e014c`},
		{"a\u200b\ufe0f", `a\u200b\ufe0f`},
		{"\u180b\u1820\u180b", `\u180b` + "\u1820\u180b"},
	} {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%+q) = %+q, want %+q", tc.in, got, tc.want)
		}
		if got := Name(tc.want); got != tc.want {
			t.Errorf("Name(Name(%+q)) = %+q: not idempotent", tc.in, got)
		}
	}
	for r := rune(0xfe00); r <= 0xfe0f; r++ {
		if got := Name(string(r) + string(r)); strings.ContainsRune(got, r) {
			t.Errorf("a lone %U at the start stays raw: %+q", r, got)
		}
	}
	for r := rune(0xe0100); r <= 0xe01ef; r++ {
		if got := Name("\u845b" + string(r) + string(r)); strings.Count(got, string(r)) != 1 {
			t.Errorf("\u845b%U%U: want the first kept and the second escaped, got %+q", r, r, got)
		}
	}
}

// TestVisibleTextStays: ordinary text of many scripts, emoji and spaces
// passes unchanged (and without allocating a copy).
func TestVisibleTextStays(t *testing.T) {
	for _, s := range []string{
		"search_orders", "héllo wörld", "日本語のツール", "поиск", "بحث", "חיפוש", "खोज",
		"👍 thumbs", "non\u00a0breaking", "narrow\u202fspace", "ideographic\u3000space", "private\ue000use",
		"a\\u200b literal backslash-u",
	} {
		if got := Name(s); got != s {
			t.Errorf("Name(%+q) = %+q, want it unchanged", s, got)
		}
	}
}

// FuzzClip: whatever the input, the output is valid UTF-8, bounded, a
// fixed point, and holds no invisible rune except one variation selector
// after a base character.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "plain", "a\u200bb", "\ufeff", "x\ufe0f\ufe0f", "\U000e0041\U000e0042", "bad\xff", strings.Repeat("é\u202e", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Name(s)
		if !utf8.ValidString(got) || len(got) > MaxName {
			t.Fatalf("Name(%+q) = %+q: invalid or %d bytes", s, got, len(got))
		}
		if Name(got) != got {
			t.Fatalf("Name(%+q) = %+q is not a fixed point", s, got)
		}
		base := false
		for _, r := range got {
			if invisible(r, base) {
				t.Fatalf("Name(%+q) = %+q keeps %U raw", s, got, r)
			}
			base = carriesSelector(r)
		}
	})
}
