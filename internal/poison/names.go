package poison

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// fold returns name as it reads: invisible and tag characters dropped,
// compatibility forms (fullwidth letters) folded by NFKC, then the
// skeleton of Unicode's confusables data (UTS #39, through
// github.com/mtibben/confusables: Cyrillic а and Latin a, 0 and O, 1, I
// and l, rn and m read alike), in lower case, with - read as _. Two
// names with the same fold read alike.
func fold(name string) string {
	if folded(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		if !isInvisible(r) && !isTag(r) {
			b.WriteRune(r)
		}
	}
	// The skeleton before and after lower case: capital I reads as l
	// (which lower case would lose), a Cyrillic М as M and so as m.
	s := confusables.Skeleton(norm.NFKC.String(b.String()))
	s = confusables.Skeleton(strings.ToLower(s))
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// folded reports whether name is its own fold: only bytes that every step
// of fold leaves alone (lower-case ASCII letters but m, which the skeleton
// reads as rn; digits 2-9; _ and .). Most served names are, and fold runs
// on every served name of every run.
func folded(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' && c != 'm' || c >= '2' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Names returns the MCP-SEC-CONFUSABLE-NAME findings of a served tool
// list: a served name that reads like, but is not, another served name, a
// declared name (declared may be nil), or a tool of another server the
// same agents use (shadow, the target's shadow_tools). Equal names are
// MCP-CONF-DUPLICATE-TOOL, not this. The finding lands on the look-alike:
// of two served names that read alike, the one the manifest does not
// declare, else the one with characters outside printable ASCII, else the
// later one.
func Names(served, declared []mcp.Tool, shadow []string) []catalogue.Finding {
	exact := make(map[string]bool, len(declared))
	decl := make(map[string]string, len(declared))
	for _, d := range declared {
		exact[d.Name] = true
		if f := fold(d.Name); decl[f] == "" {
			decl[f] = d.Name
		}
	}
	others := make(map[string]string, len(shadow))
	shadowSet := make(map[string]bool, len(shadow))
	for _, name := range shadow {
		shadowSet[name] = true
		if f := fold(name); others[f] == "" {
			others[f] = name
		}
	}
	// A typo-squat of a declared name or another server's tool: the
	// same name with a letter doubled (git_commmit) or a separator added
	// at an end (create_issue_). Not looked for between served names:
	// one server's own tools may differ so (list_all, list_al).
	squatDecl := squats(declared, nil)
	squatOthers := squats(nil, shadow)
	first := make(map[string]string, len(served))
	reported := map[string]bool{}
	var out []catalogue.Finding
	report := func(name, other, whose string, how likeness) {
		if !reported[name] {
			reported[name] = true
			out = append(out, confusable(name, other, whose, how))
		}
	}
	const shadowWhose = "the other server's tool (shadow_tools)"
	for _, t := range served {
		f := fold(t.Name)
		if other, ok := first[f]; ok && other != t.Name {
			if imposter(other, t.Name, exact) {
				report(other, t.Name, "another served tool", readsAs)
			} else {
				report(t.Name, other, "another served tool", readsAs)
			}
		} else if !ok {
			first[f] = t.Name
		}
		if other, ok := decl[f]; ok && !exact[t.Name] {
			report(t.Name, other, "the declared tool", readsAs)
		}
		if other, ok := others[f]; ok && other != t.Name {
			report(t.Name, other, shadowWhose, readsAs)
		}
		// Another server's tool served under its own name, or under its
		// name with a word of salesmanship added (email_sender_service,
		// secure_read_file): whichever the client keeps, an agent that
		// meant the other server's tool may call this one.
		if shadowSet[t.Name] {
			report(t.Name, t.Name, shadowWhose, sameName)
		} else if other, ok := extends(t.Name, shadowSet); ok {
			report(t.Name, other, shadowWhose, extended)
		}
		if len(squatDecl) == 0 && len(squatOthers) == 0 || reported[t.Name] {
			continue
		}
		q := squat(t.Name)
		if other, ok := squatDecl[q]; ok && !exact[t.Name] && other != t.Name {
			report(t.Name, other, "the declared tool", squatted)
		} else if other, ok := squatOthers[q]; ok && other != t.Name {
			report(t.Name, other, shadowWhose, squatted)
		} else if other, ok := swapped(t.Name, exact); ok {
			report(t.Name, other, "the declared tool", transposed)
		} else if other, ok := swapped(t.Name, shadowSet); ok {
			report(t.Name, other, shadowWhose, transposed)
		} else if other, ok := oneOff(t.Name, exact); ok {
			report(t.Name, other, "the declared tool", misspelt)
		} else if other, ok := oneOff(t.Name, shadowSet); ok {
			report(t.Name, other, shadowWhose, misspelt)
		}
	}
	return out
}

// minOneOff is the shortest name a one-letter misspelling is looked for
// in: get_user and set_user are two tools, database_connector and
// databse_connector one and its squatter.
const minOneOff = 10

// oneOff returns the name in names that name is with one letter dropped,
// added or changed inside it (databse_connector, read_flles): not at its
// last byte, where list_issue and list_issues are singular and plural,
// and only when both names are at least minOneOff long.
func oneOff(name string, names map[string]bool) (string, bool) {
	if len(name) < minOneOff || len(names) == 0 || names[name] {
		return "", false
	}
	best := ""
	for other := range names {
		if len(other) >= minOneOff && editedInside(name, other) && (best == "" || other < best) {
			best = other
		}
	}
	return best, best != ""
}

// editedInside reports whether a and b differ by one ASCII letter
// dropped, added or changed before the last byte of the longer.
func editedInside(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	switch len(b) - len(a) {
	case 0:
		return i < len(a)-1 && a[i+1:] == b[i+1:] && letter(a[i]) && letter(b[i])
	case 1:
		return i < len(a) && a[i:] == b[i+1:] && letter(b[i])
	}
	return false
}

func letter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// minSwapped is the shortest name a transposition is looked for in: in a
// short name, two letters swapped may be another honest word.
const minSwapped = 6

// swapped returns the name in names that name is with two adjacent
// letters swapped (create_paymnet_intent, create_payment_intent): the
// typo a squatter registers.
func swapped(name string, names map[string]bool) (string, bool) {
	if len(name) < minSwapped || len(names) == 0 || names[name] {
		return "", false
	}
	b := []byte(name)
	for i := 0; i+1 < len(b); i++ {
		if b[i] == b[i+1] || b[i] >= 0x80 || b[i+1] >= 0x80 {
			continue
		}
		b[i], b[i+1] = b[i+1], b[i]
		if names[string(b)] {
			return string(b), true
		}
		b[i], b[i+1] = b[i+1], b[i]
	}
	return "", false
}

// squats maps the squat of each name of tools and names to the first
// name with it.
func squats(tools []mcp.Tool, names []string) map[string]string {
	if len(tools)+len(names) == 0 {
		return nil
	}
	m := make(map[string]string, len(tools)+len(names))
	add := func(name string) {
		if q := squat(name); m[q] == "" {
			m[q] = name
		}
	}
	for _, t := range tools {
		add(t.Name)
	}
	for _, name := range names {
		add(name)
	}
	return m
}

// squat returns name as a typo-squat reads: separators (_ - . and
// space) trimmed from both ends, every run of one character written
// once (commmit, commit and comit read alike), then folded (fold).
func squat(name string) string {
	name = strings.Trim(name, "_-. ")
	var b strings.Builder
	b.Grow(len(name))
	prev := rune(-1)
	for _, r := range strings.ToLower(name) {
		if r != prev {
			b.WriteRune(r)
		}
		prev = r
	}
	return fold(b.String())
}

// imposter reports whether a, served before b with a name that reads the
// same, is the look-alike: b is declared and a is not, or a has
// characters outside printable ASCII and b has none, or, both ASCII,
// where they first differ a has the stand-in and b the letter it stands
// for (1 or I for l, 0 for O, rn for m).
func imposter(a, b string, declared map[string]bool) bool {
	if declared[a] != declared[b] {
		return declared[b]
	}
	if pa, pb := printableASCII(a), printableASCII(b); pa != pb {
		return pb
	} else if !pa {
		return false
	}
	return standIn(a, b) && !standIn(b, a)
}

// standIn reports whether, where a and b first differ, a holds a
// character that stands in for b's: a digit or a capital for a lower-case
// letter, or rn for m.
func standIn(a, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return false
	}
	x, y := a[i], b[i]
	switch {
	case y >= 'a' && y <= 'z' && (x >= '0' && x <= '9' || x >= 'A' && x <= 'Z'):
		return true
	case y == 'm' && strings.HasPrefix(a[i:], "rn"):
		return true
	}
	return false
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// likeness is how a look-alike is like the name it imitates.
type likeness uint8

const (
	readsAs    likeness = iota // the same after confusable folding
	squatted                   // a character repeated, a separator added
	sameName                   // another server's tool's very name
	extended                   // another server's tool's name and a generic word
	transposed                 // two adjacent letters swapped
	misspelt                   // one letter inside the name dropped, added or changed
)

// salesWords are the words an imposter adds to the name it imitates.
var salesWords = map[string]bool{"service": true, "tool": true, "tools": true, "v2": true, "v3": true, "pro": true, "new": true, "official": true,
	"secure": true, "safe": true, "better": true, "plus": true, "api": true, "helper": true, "my": true, "real": true, "fixed": true, "updated": true,
	"enhanced": true, "advanced": true, "fast": true, "latest": true, "verified": true, "trusted": true, "premium": true, "ultra": true, "super": true, "smart": true}

// extends returns the name in others that name is, with one word of
// salesWords added at either end (separated by _, - or .).
func extends(name string, others map[string]bool) (string, bool) {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c != '_' && c != '-' && c != '.' {
			continue
		}
		head, tail := name[:i], name[i+1:]
		if salesWords[strings.ToLower(tail)] && others[head] && nameLike(head) {
			return head, true
		}
		if salesWords[strings.ToLower(head)] && others[tail] && nameLike(tail) {
			return tail, true
		}
	}
	return "", false
}

// confusable reports name, which reads as other (or, squat, is a
// typo-squat of other): where the two first differ, by byte offset and
// the length of the differing rune.
func confusable(name, other, whose string, like likeness) catalogue.Finding {
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
	how := "reads as %s %q after confusable folding"
	switch like {
	case squatted:
		how = "is %s %q with a character repeated or a separator added at an end"
	case sameName:
		how = "is the name of %s %q"
	case extended:
		how = "is %s %q with a generic word added"
	case transposed:
		how = "is %s %q with two adjacent letters swapped"
	case misspelt:
		how = "is %s %q with one letter inside it dropped, added or changed"
	}
	f := catalogue.New(catalogue.SecConfusableName, name, fmt.Sprintf(
		"the name "+how+"; it first differs at byte %d (%s)",
		whose, sanitize.Name(other), off, plural(n, "byte")))
	f.Pointer = "/name"
	return f
}
