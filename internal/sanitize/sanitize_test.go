package sanitize

import (
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
