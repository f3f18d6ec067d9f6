package poison

import (
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
)

// A word spelt in two scripts — Latin letters with a Cyrillic or Greek
// look-alike among them ("іgnore", "раssword") — reads as one word to a
// model and as another to a filter. Honest text keeps a word in one
// script; the exceptions are the Greek letters written as symbols
// (10μs, 5Ω, Δt, λ-calculus), which do not count.

// symbolGreek are the Greek letters used as symbols beside Latin ones.
var symbolGreek = map[rune]bool{'μ': true, 'µ': true, 'Ω': true, 'ω': true, 'π': true, 'Δ': true, 'δ': true, 'λ': true, 'σ': true, 'Σ': true, 'θ': true, 'φ': true}

// script is a word's scripts of interest, as bits.
const (
	sLatin = 1 << iota
	sCyrillic
	sGreek
)

// mixedWords returns the byte spans of text's words that mix Latin with
// Cyrillic or Greek letters.
func mixedWords(text []byte) [][2]int {
	var out [][2]int
	start, seen := -1, 0
	flush := func(end int) {
		if start >= 0 && seen&sLatin != 0 && seen&(sCyrillic|sGreek) != 0 {
			out = append(out, [2]int{start, end})
		}
		start, seen = -1, 0
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		switch {
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			if start < 0 {
				start = i
			}
			switch {
			case r < 0x80 || unicode.Is(unicode.Latin, r):
				seen |= sLatin
			case unicode.Is(unicode.Cyrillic, r):
				seen |= sCyrillic
			case unicode.Is(unicode.Greek, r) && !symbolGreek[r]:
				seen |= sGreek
			}
		default:
			flush(i)
		}
		i += size
	}
	flush(len(text))
	return out
}

// mixed is the matcher of mixed-script words.
func mixed(text []byte, _ *scanContext) match {
	spans := mixedWords(text)
	if len(spans) == 0 {
		return match{}
	}
	return match{off: spans[0][0], n: spans[0][1] - spans[0][0], count: min(len(spans), maxCount)}
}

// latinOf returns the ASCII letter a Cyrillic or Greek letter reads as
// (UTS #39's skeleton, through the confusables data), or 0.
func latinOf(r rune) byte {
	if r < 0x80 || !unicode.Is(unicode.Cyrillic, r) && !unicode.Is(unicode.Greek, r) {
		return 0
	}
	s := confusables.Skeleton(string(r))
	if len(s) != 1 || s[0] >= 0x80 || (s[0]|0x20) < 'a' || (s[0]|0x20) > 'z' {
		return 0
	}
	// The skeleton reads capital I as l (they are confusable); a
	// capital look-alike of I is read as I.
	if s[0] == 'l' && unicode.IsUpper(r) {
		return 'I'
	}
	return s[0]
}
