package poison

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// confusables maps the look-alike runes driftd folds to the ASCII letter
// they imitate: the Cyrillic and Greek letters that render like Latin
// ones. Fullwidth forms, digits, case and invisible characters are folded
// in fold. A small table, not Unicode's full confusables list: it covers
// what a name in A-Za-z0-9_-. can be imitated with.
var confusables = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o',
	'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y', 'һ': 'h',
	'А': 'a', 'В': 'b', 'Е': 'e', 'Ѕ': 's', 'І': 'l', 'Ј': 'j', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o',
	'Р': 'p', 'С': 'c', 'Т': 't', 'У': 'y', 'Х': 'x', 'Ԁ': 'd', 'Ԛ': 'q', 'Ԝ': 'w', 'Ӏ': 'l',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'κ': 'k', 'ι': 'i', 'τ': 't', 'υ': 'u', 'χ': 'x', 'γ': 'y',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'l', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'Ο': 'o',
	'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x',
}

// fold returns name as it reads: look-alikes and fullwidth forms to ASCII,
// 0 to o, 1 and | and a capital I to l, - to _, ASCII to lower case, and
// invisible and tag characters dropped. A name already in its folded form
// is returned as is.
func fold(name string) string {
	plain := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 || c >= 'A' && c <= 'Z' || c == '0' || c == '1' || c == '|' || c == '-' {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		if r >= 0xFF01 && r <= 0xFF5E { // fullwidth ASCII
			r -= 0xFEE0
		}
		if c, ok := confusables[r]; ok {
			r = rune(c)
		}
		switch {
		case isInvisible(r), isTag(r):
			continue
		case r == 'I', r == '1', r == '|':
			r = 'l'
		case r == '0':
			r = 'o'
		case r == '-':
			r = '_'
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Names returns the MCP-SEC-CONFUSABLE-NAME findings of a served tool
// list: a served tool whose name folds to the folded name of an earlier
// served tool with another name, or of a declared tool (declared may be
// nil) it is not. Equal names are MCP-CONF-DUPLICATE-TOOL, not this.
func Names(served, declared []mcp.Tool) []catalogue.Finding {
	exact := make(map[string]bool, len(declared))
	decl := make(map[string]string, len(declared))
	for _, d := range declared {
		exact[d.Name] = true
		if f := fold(d.Name); decl[f] == "" {
			decl[f] = d.Name
		}
	}
	first := make(map[string]string, len(served))
	var out []catalogue.Finding
	for _, t := range served {
		f := fold(t.Name)
		if other, ok := first[f]; ok && other != t.Name {
			out = append(out, confusable(t.Name, other, "an earlier served tool"))
		} else if !ok {
			first[f] = t.Name
		}
		if other, ok := decl[f]; ok && !exact[t.Name] {
			out = append(out, confusable(t.Name, other, "the declared tool"))
		}
	}
	return out
}

// confusable reports name, which reads as other: where the two first
// differ, by byte offset and the length of the differing rune.
func confusable(name, other, whose string) catalogue.Finding {
	off := 0
	for off < len(name) && off < len(other) && name[off] == other[off] {
		off++
	}
	for off > 0 && off < len(name) && !utf8.RuneStart(name[off]) {
		off--
	}
	n := 0
	if off < len(name) {
		_, n = utf8.DecodeRuneInString(name[off:])
	}
	f := catalogue.New(catalogue.SecConfusableName, name, fmt.Sprintf(
		"the name reads as %s %q after confusable folding; it first differs at byte %d (%s)",
		whose, sanitize.Name(other), off, plural(n, "byte")))
	f.Pointer = "/name"
	return f
}
