package poison

import (
	"regexp"
	"sync"
	"unicode/utf8"
)

// byteClass is a set of classes of bytes the one-pass scan looks for.
type byteClass uint8

const (
	cLetter byteClass = 1 << iota // A-Z a-z: words
	cBlob                         // the base64 and hex alphabets: A-Z a-z 0-9 + / = - _
	cHigh                         // a byte of a non-ASCII rune
	cEsc                          // ESC, 0x1b
	cAngle                        // < and [: tags and chat-template tokens
	cColon                        // : of scheme://
	cAt                           // @ of an e-mail address
	// cLongRun is no byte's class: the scan sets it when a run of cBlob
	// bytes is long enough to be an encoded blob.
	cLongRun
)

var classes = func() (t [256]byteClass) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c+'a'-'A'] = cLetter|cBlob, cLetter|cBlob
	}
	for _, c := range "0123456789+/=-_" {
		t[c] = cBlob
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = cHigh
	}
	t[0x1b], t['<'], t['['], t[':'], t['@'] = cEsc, cAngle, cAngle, cColon, cAt
	return t
}()

// The words the prefilter knows are hashed as they are read; a word whose
// hash is in the bloom bits is looked up in wordRows, which holds the
// table rows (by index) it triggers. A hash collision only runs a matcher
// that then finds nothing.
const (
	minWord, maxWord = 3, 16
	bloomBits        = 4096
)

type wordIndex struct {
	bloom [bloomBits / 64]uint64
	rows  map[uint32]uint32
}

var words = sync.OnceValue(func() *wordIndex {
	w := &wordIndex{rows: map[uint32]uint32{}}
	for i, d := range table {
		for _, word := range d.words {
			var h uint32
			for j := 0; j < len(word); j++ {
				h = h*31 + uint32(word[j]|0x20)
			}
			w.bloom[h%bloomBits/64] |= 1 << (h % 64)
			w.rows[h] |= 1 << i
		}
	}
	return w
})

// blob thresholds: a base64 run mixing upper case, lower case and digits,
// or a hex run. A SHA-256 in hex is 64 digits and stays under the hex bar.
const (
	minBase64Run = 48
	minHexRun    = 80
)

// scanContext is what a text's matchers may read besides the text: the
// served tools' identifier-like names, for shadowing, and the name of the
// definition being scanned.
type scanContext struct {
	names map[string]struct{}
	self  string
}

// scan reads text once, classifying bytes and hashing words, and runs the
// matchers of the table rows that read fields and whose prefilter the
// text met. hit is called for each row that matched, in table order.
func (c *scanContext) scan(text []byte, fields fieldMask, hit func(d *detector, off, n, count int)) {
	var seen byteClass
	var rows, h uint32
	wl, run := 0, 0
	w := words()
	endWord := func() {
		if wl >= minWord && wl <= maxWord && w.bloom[h%bloomBits/64]&(1<<(h%64)) != 0 {
			rows |= w.rows[h]
		}
	}
	for _, b := range text {
		k := classes[b]
		seen |= k
		if k&cLetter != 0 {
			h = h*31 + uint32(b|0x20)
			wl++
		} else if wl != 0 {
			endWord()
			h, wl = 0, 0
		}
		if k&cBlob != 0 {
			run++
		} else {
			if run >= minBase64Run {
				seen |= cLongRun
			}
			run = 0
		}
	}
	endWord()
	if run >= minBase64Run {
		seen |= cLongRun
	}
	if seen&^(cLetter|cBlob) == 0 && rows == 0 {
		return // the common case: plain text
	}
	for i, d := range table {
		if d.fields&fields == 0 || (seen&d.classes == 0 && rows&(1<<i) == 0) {
			continue
		}
		if off, n, count := d.match(text, c); count > 0 {
			hit(d, off, n, count)
		}
	}
}

// runes returns a matcher for the runes is holds for: the first run of
// them (offset and byte length) and how many there are.
func runes(is func(r rune) bool) matcher {
	return func(text []byte, _ *scanContext) (off, n, count int) {
		inRun := false
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRune(text[i:])
			switch {
			case is(r):
				if count == 0 {
					off, inRun = i, true
				}
				if inRun {
					n += size
				}
				count++
			default:
				inRun = false
			}
			i += size
		}
		return off, n, min(count, maxCount)
	}
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

func isTerminal(r rune) bool { return r == 0x1b || r >= 0x80 && r <= 0x9f }

// isInvisible reports the zero-width, bidi-control and other invisible
// format characters of MCP-SEC-INVISIBLE-CHARACTERS.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r == 0x180E:
		return true
	}
	return false
}

// joinerOK holds the invisible characters that are ordinary after a
// non-ASCII rune: a joiner inside an emoji sequence or an Indic or Persian
// word, a direction mark inside Hebrew or Arabic text.
func joinerOK(r rune) bool { return r == 0x200C || r == 0x200D || r == 0x200E || r == 0x200F }

// invisibles is runes(isInvisible), except that a joiner or direction
// mark right after a non-ASCII, non-invisible rune is not counted.
func invisibles(text []byte, _ *scanContext) (off, n, count int) {
	inRun := false
	prev := rune(0)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if isInvisible(r) && !(joinerOK(r) && prev >= 0x300 && !isInvisible(prev)) {
			if count == 0 {
				off, inRun = i, true
			}
			if inRun {
				n += size
			}
			count++
		} else {
			inRun = false
		}
		prev = r
		i += size
	}
	return off, n, min(count, maxCount)
}

// blobs finds runs of the base64 alphabet at least minBase64Run long that
// mix upper case, lower case and digits, and runs of hex digits at least
// minHexRun long.
func blobs(text []byte, _ *scanContext) (off, n, count int) {
	for i := 0; i < len(text); {
		if classes[text[i]]&cBlob == 0 {
			i++
			continue
		}
		j, upper, lower, digit, hex := i, false, false, false, true
		for ; j < len(text) && classes[text[j]]&cBlob != 0; j++ {
			c := text[j]
			upper = upper || c >= 'A' && c <= 'Z'
			lower = lower || c >= 'a' && c <= 'z'
			digit = digit || c >= '0' && c <= '9'
			hex = hex && (c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f')
		}
		if l := j - i; l >= minHexRun && hex || l >= minBase64Run && upper && lower && digit {
			if count == 0 {
				off, n = i, l
			}
			if count++; count == maxCount {
				break
			}
		}
		i = j
	}
	return off, n, count
}

// directiveWords trigger the shadowing matcher; directive is what it then
// requires near another tool's name.
var (
	directiveWords = []string{"must", "always", "never", "instead", "rather", "whenever", "important", "don", "not"}
	directive      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:must|always|never|instead\s+of|rather\s+than|whenever|important|(?:do\s+not|don'?t)\s+(?:use|call|invoke|run))\b`)
	})
)

// shadowWindow is how near, in bytes, a directive must be to another
// tool's name.
const shadowWindow = 120

// shadowing finds names of other served tools that stand within
// shadowWindow bytes of directive phrasing.
func shadowing(text []byte, c *scanContext) (off, n, count int) {
	if len(c.names) == 0 {
		return 0, 0, 0
	}
	var dirs [][]int
	for i := 0; i < len(text); {
		if !isNameByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		tok := text[i:j]
		for len(tok) > 0 && (tok[len(tok)-1] == '.' || tok[len(tok)-1] == '-') {
			tok = tok[:len(tok)-1]
		}
		if _, ok := c.names[string(tok)]; ok && string(tok) != c.self {
			if dirs == nil {
				if dirs = directive().FindAllIndex(text, maxCount); dirs == nil {
					return 0, 0, 0
				}
			}
			if near(dirs, i, i+len(tok)) {
				if count == 0 {
					off, n = i, len(tok)
				}
				if count++; count == maxCount {
					break
				}
			}
		}
		i = j
	}
	return off, n, count
}

func near(spans [][]int, start, end int) bool {
	for _, s := range spans {
		if s[0] <= end+shadowWindow && s[1] >= start-shadowWindow {
			return true
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return classes[c]&cLetter != 0 || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// nameLike reports whether a tool name is distinctive enough that its
// appearance in another tool's text names that tool: at least 4 bytes,
// with an underscore, hyphen, dot, digit or an inner capital. A name that
// is a plain word ("search", "fetch") is also just a word.
func nameLike(name string) bool {
	if len(name) < 4 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameByte(c) {
			return false
		}
		if c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || i > 0 && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}
