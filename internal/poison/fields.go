package poison

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
)

// maxDepth bounds the nesting the scanner indexes: a schema may nest
// schema.MaxDepth (64) levels, under a definition's two. A deeper
// definition is scanned by its top-level texts only (and its schema is
// MCP-CONF-SCHEMA-INVALID for exceeding driftd's bounds).
const maxDepth = 128

// A Scanner runs the text detectors over served definitions. It holds the
// served tools' names, for shadowing, and reuses one index between
// definitions; it is not safe for concurrent use.
type Scanner struct {
	ctx  scanContext
	ix   jsonscan.Index
	path []seg
	// kind and subject name the definition being scanned in its findings.
	kind, subject string
	out           []catalogue.Finding
	// words and at are wordsOf's buffers, plain and plainAt plainOf's,
	// reused.
	words, plain []byte
	at, plainAt  []int
}

// seg is one step of the current path: a member's key, or an element's
// position when key is nil.
type seg struct {
	key  []byte
	idx  int
	elem bool
}

// field names a text in messages: its key, under a root (inputSchema,
// outputSchema, argument) when it has one.
type field struct{ root, leaf string }

func (f field) String() string {
	if f.root == "" {
		return f.leaf
	}
	return f.root + " " + f.leaf
}

// NewScanner returns a scanner for one served surface whose tools are
// served: their names, and the names of other servers' tools in others
// (a target's shadow_tools), are what shadowing looks for.
func NewScanner(served []mcp.Tool, others []string) *Scanner {
	s := &Scanner{}
	add := func(name string, other bool) {
		if nameLike(name) {
			if s.ctx.names == nil {
				s.ctx.names = map[string]bool{}
			}
			s.ctx.names[name] = s.ctx.names[name] || other
		}
	}
	for _, t := range served {
		add(t.Name, false)
	}
	for _, name := range others {
		add(name, true)
	}
	return s
}

// Tool returns the MCP-SEC text findings of one served tool: its name,
// title, description, annotations, the strings under _meta, and the
// descriptions, titles, defaults and examples of its input and output
// schemas; and whether its annotations claim a read-only tool that its
// name or description says destroys (annotationClaim).
func (s *Scanner) Tool(t mcp.Tool) []catalogue.Finding {
	out := s.definition("", t.Name, t.Raw, [3]string{t.Name, t.Title, t.Description}, func(j int, key string) {
		switch key {
		case "inputSchema", "outputSchema":
			s.schema(j, key)
		case "icons":
			// Addresses of images, not text for a model.
		default:
			// A member MCP does not define (x-agent-notes): a client
			// that hands the whole definition to the model hands it
			// this too.
			s.extraKey(j, []byte(key), "", fText|fWords)
		}
	})
	return append(out, annotationClaim(t)...)
}

// Item returns the MCP-SEC text findings of one served prompt, resource or
// resource template: its name, title, description and annotations, and a
// prompt's argument names, titles, descriptions and other keys. A uri is an address,
// not text for a model, and is not read.
func (s *Scanner) Item(it mcp.Item) []catalogue.Finding {
	return s.definition(string(it.Kind), it.Key, it.Raw, [3]string{it.Name, it.Title, it.Description}, func(j int, key string) {
		if key != "arguments" {
			return
		}
		s.elements(j, func(a int) {
			s.members(a, func(m int, key []byte) {
				switch string(key) {
				case "name":
					s.stringAt(m, fName|fWords, field{"argument", "name"})
				case "title":
					s.stringAt(m, fProse, field{"argument", "title"})
				case "description":
					s.stringAt(m, fProse, field{"argument", "description"})
				default:
					s.text(key, fName|fWords, field{"argument", "key's name"}, "")
					s.strings(m, fValue, field{"argument", "extra key"})
				}
			})
		})
	})
}

// definition scans one served definition's JSON: its name, title,
// description, annotations and _meta, and each other member through more. A
// definition that is not a JSON object within maxDepth has its decoded
// name, title and description scanned instead.
func (s *Scanner) definition(kind, subject string, raw []byte, decoded [3]string, more func(j int, key string)) []catalogue.Finding {
	s.begin(kind, subject)
	if clean(raw) {
		return nil
	}
	if !s.index(raw) {
		s.text([]byte(decoded[0]), fName|fWords, field{leaf: "name"}, "/name")
		s.text([]byte(decoded[1]), fProse, field{leaf: "title"}, "/title")
		s.text([]byte(decoded[2]), fProse, field{leaf: "description"}, "/description")
		return s.out
	}
	s.members(0, func(j int, key []byte) {
		switch string(key) {
		case "name":
			s.stringAt(j, fName|fWords, field{leaf: "name"})
		case "title":
			s.stringAt(j, fProse, field{leaf: "title"})
		case "description":
			s.stringAt(j, fProse, field{leaf: "description"})
		case "annotations":
			s.strings(j, fProse, field{leaf: "annotations"})
		case "_meta":
			// Clients may hand _meta to the model too (a UI template's
			// description, a vendor's hints): read like annotations.
			s.strings(j, fProse, field{leaf: "_meta"})
		default:
			more(j, string(key))
		}
	})
	return s.out
}

func (s *Scanner) begin(kind, subject string) {
	s.kind, s.subject, s.ctx.self, s.out, s.path = kind, subject, subject, nil, s.path[:0]
}

// index indexes raw; false when it is not a JSON object within maxDepth.
func (s *Scanner) index(raw []byte) bool {
	return len(raw) > 0 && s.ix.Reset(raw, maxDepth) == nil && s.ix.Nodes[0].Kind == jsonscan.Object
}

// clean reports a definition whose JSON text holds nothing any detector
// looks for: one pass, no walk.
func clean(raw []byte) bool { return len(raw) > 0 && !mayMatch(raw) }

// Clean reports whether a definition's JSON text holds nothing any
// detector looks for, whatever the other tools are: Tool and Item of it
// find nothing.
func Clean(raw []byte) bool { return clean(raw) }

// members calls f with each member of object node i and its key, with
// the key on the path.
func (s *Scanner) members(i int, f func(j int, key []byte)) {
	n := &s.ix.Nodes[i]
	if n.Kind != jsonscan.Object {
		return
	}
	for j := i + 1; j < int(n.Next); j = int(s.ix.Nodes[j].Next) {
		key := s.ix.Key(j)
		s.path = append(s.path, seg{key: key})
		f(j, key)
		s.path = s.path[:len(s.path)-1]
	}
}

// elements calls f with each element of array node i, its position on
// the path.
func (s *Scanner) elements(i int, f func(j int)) {
	n := &s.ix.Nodes[i]
	if n.Kind != jsonscan.Array {
		return
	}
	k := 0
	for j := i + 1; j < int(n.Next); j = int(s.ix.Nodes[j].Next) {
		s.path = append(s.path, seg{idx: k, elem: true})
		f(j)
		s.path = s.path[:len(s.path)-1]
		k++
	}
}

// schema scans a JSON Schema: each node's description, title and
// $comment, every string inside default, examples, enum and const, the
// entries of required, and the subschemas. The members of properties,
// $defs and the like are named schemas: their names are read as names
// (a parameter can be named like an instruction), their schemas as
// schemas. A key that is no JSON Schema keyword is read too, its name as
// a name and every string inside it as text: a model reads the whole
// schema, not only the keywords a validator knows.
func (s *Scanner) schema(i int, root string) {
	switch s.ix.Nodes[i].Kind {
	case jsonscan.Array:
		s.elements(i, func(j int) { s.schema(j, root) })
	case jsonscan.Object:
		s.members(i, func(j int, key []byte) {
			switch k := string(key); k {
			case "description", "title", "$comment":
				s.stringAt(j, fProse, field{root, k})
			case "default", "const":
				// A preset address is a recipient's, not a sender's
				// (from, sender, author): the tool's own identity.
				preset := fPreset
				if n := len(s.path); n >= 2 && !s.path[n-2].elem && sender(s.path[n-2].key) {
					preset = 0
				}
				s.strings(j, fValue|fWords|preset, field{root, k})
			case "examples", "enum":
				// A value may be an identifier (an enum's
				// bodies_plus_saved_passwords): read as words too.
				s.strings(j, fValue|fWords, field{root, k})
			case "required":
				// Names, but a name with spaces is a sentence: read as
				// text too.
				s.strings(j, fName|fValue|fWords, field{root, "required entry"})
			case "type":
				// A type is one of seven names; anything else is text.
				if s.ix.Nodes[j].Kind == jsonscan.String && !jsonTypes[string(s.ix.String(j))] {
					s.stringAt(j, fValue, field{root, "type"})
				}
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				leaf := "property name"
				if k != "properties" && k != "patternProperties" {
					leaf = "definition name"
				}
				param := fieldMask(0)
				if k == "properties" && root == "inputSchema" {
					param = fParam
				}
				s.members(j, func(m int, name []byte) {
					s.text(name, fName|fWords|param, field{root, leaf}, "")
					s.schema(m, root)
				})
			default:
				if _, ok := keywords[k]; ok {
					s.schema(j, root)
					return
				}
				s.extraKey(j, key, root, fText)
			}
		})
	}
}

// extraKey scans member j, a key no schema or MCP defines, under root:
// its name as a name, every string inside it as values (text).
func (s *Scanner) extraKey(j int, key []byte, root string, values fieldMask) {
	s.text(key, fName|fWords, field{root, "extra key's name"}, "")
	s.strings(j, values, field{root, "extra key"})
}

// senderWords are the words of a property that names who sends or
// acts, not who receives.
var senderWords = map[string]bool{"from": true, "sender": true, "author": true, "login": true, "user": true, "username": true, "owner": true, "account": true}

// sender reports whether a property's name, read as words, names a
// sender (from_email, senderAddress, author).
func sender(name []byte) bool {
	w, _ := wordsOf(name, nil, nil)
	if w == nil {
		w = name
	}
	for _, word := range strings.Fields(strings.ToLower(string(w))) {
		if senderWords[word] {
			return true
		}
	}
	return false
}

// keywords are the JSON Schema keywords (2020-12 and draft-07, with the
// OpenAPI nullable) other than those schema reads itself: their values
// are subschemas, or numbers, booleans and strings (type, format,
// pattern, $ref…) that are syntax, not text for a model.
var keywords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, k := range strings.Fields(`$schema $id $ref $anchor $dynamicRef $dynamicAnchor $vocabulary $recursiveRef $recursiveAnchor
		type format pattern items prefixItems additionalItems unevaluatedItems contains minContains maxContains
		additionalProperties unevaluatedProperties propertyNames dependentRequired dependencies
		allOf anyOf oneOf not if then else minimum maximum exclusiveMinimum exclusiveMaximum multipleOf
		minLength maxLength minItems maxItems uniqueItems minProperties maxProperties
		contentEncoding contentMediaType contentSchema readOnly writeOnly deprecated nullable`) {
		m[k] = struct{}{}
	}
	return m
}()

// jsonTypes are the values of type.
var jsonTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

// strings scans every string value inside node i as field, and the keys
// of the objects inside it as names.
func (s *Scanner) strings(i int, fields fieldMask, f field) {
	switch s.ix.Nodes[i].Kind {
	case jsonscan.String:
		s.stringAt(i, fields, f)
	case jsonscan.Array:
		s.elements(i, func(j int) { s.strings(j, fields, f) })
	case jsonscan.Object:
		s.members(i, func(j int, key []byte) {
			s.text(key, fName|fWords, field{f.root, f.leaf + " key"}, "")
			s.strings(j, fields, f)
		})
	}
}

// stringAt scans string node i, at the current path, as field.
func (s *Scanner) stringAt(i int, fields fieldMask, f field) {
	if s.ix.Nodes[i].Kind == jsonscan.String {
		s.text(s.ix.String(i), fields, f, "")
	}
}

// text scans one text; pointer is its pointer when it is not the
// current path. A name (fWords) is scanned twice: as it is by the rows
// that read names, and read as words (wordsOf) by the rows that read
// phrases, its offsets mapped back to the name's bytes.
func (s *Scanner) text(b []byte, fields fieldMask, f field, pointer string) {
	if len(b) == 0 {
		return
	}
	report := func(at func(int) int) func(d *detector, m match) {
		return func(d *detector, m match) {
			if pointer == "" {
				pointer = s.pointer()
			}
			what := d.what
			if d.kind != "" {
				what += " (" + d.kind + ")"
			}
			for _, o := range s.out {
				if o.Rule == d.rule && o.Pointer == pointer {
					return // one finding per rule per field
				}
			}
			off, end := at(m.off), at(m.off+m.n)
			s.out = append(s.out, finding(d.rule, s.kind, s.subject, pointer, fmt.Sprintf(
				"%s in the %s at byte %d (%s; %s in this field)", what, f, off, plural(end-off, "byte"), occurrences(m.count))))
		}
	}
	same := func(i int) int { return i }
	s.ctx.scan(b, fields&^fWords, report(same))
	// A text with invisible or tag characters inside its words is read
	// again without them: "Ig\u00adnore pre\u00advi\u00adous in\u00adstruc\u00adtions" is
	// the phrase a model reads.
	if p, at := plainOf(b, s.plain[:0], s.plainAt[:0]); p != nil {
		s.plain, s.plainAt = p, at
		s.ctx.scan(p, fields&^fWords, report(func(i int) int { return at[i] }))
	}
	if fields&fWords == 0 {
		return
	}
	if w, at := wordsOf(b, s.words[:0], s.at[:0]); w != nil {
		s.words, s.at = w, at
		s.ctx.scan(w, fields&(fWords|fParam), report(func(i int) int { return at[i] }))
	}
}

// wordsOf returns name read as words — '_', '-', '.', '/' and ':' as
// spaces, a space before an inner capital (readFile, ignoreAllRules) —
// and, for each byte of the words and one past the end, the offset in
// name it comes from; nil when name reads as it is, with no separator.
func wordsOf(name, w []byte, at []int) ([]byte, []int) {
	changed := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/' || c == ':':
			w, at, changed = append(w, ' '), append(at, i), true
			continue
		case c >= 'A' && c <= 'Z' && i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z':
			w, at, changed = append(w, ' '), append(at, i), true
		}
		w, at = append(w, c), append(at, i)
	}
	if !changed {
		return nil, nil
	}
	return w, append(at, len(name))
}

// plainOf returns text without its invisible and tag characters and, for
// each byte and one past the end, the offset in text it comes from; nil
// when text has none (the common case: one pass over its bytes when it
// has non-ASCII ones, none when it has not).
func plainOf(text, p []byte, at []int) ([]byte, []int) {
	if !hasHigh(text) {
		return nil, nil
	}
	changed := false
	mixed := mixedWords(text)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		latin := byte(0)
		if len(mixed) > 0 && inSpans(mixed, i) {
			latin = latinOf(r)
		}
		switch {
		case isInvisible(r) || isTag(r):
			changed = true
		case latin != 0:
			p, at, changed = append(p, latin), append(at, i), true
		default:
			for k := 0; k < size; k++ {
				p, at = append(p, text[i+k]), append(at, i+k)
			}
		}
		i += size
	}
	if !changed {
		return nil, nil
	}
	return p, append(at, len(text))
}

// inSpans reports whether offset i is inside one of spans, [start, end)
// pairs in order.
func inSpans(spans [][2]int, i int) bool {
	for _, sp := range spans {
		if i >= sp[0] && i < sp[1] {
			return true
		}
	}
	return false
}

func hasHigh(text []byte) bool {
	for _, c := range text {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// pointer is the RFC 6901 pointer of the current path.
func (s *Scanner) pointer() string {
	var b strings.Builder
	for _, p := range s.path {
		b.WriteByte('/')
		if p.elem {
			b.WriteString(strconv.Itoa(p.idx))
			continue
		}
		b.WriteString(jsonscan.EscapeToken(string(p.key)))
	}
	return b.String()
}

func occurrences(n int) string {
	if n >= maxCount {
		return fmt.Sprintf("%d or more occurrences", maxCount)
	}
	return plural(n, "occurrence")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// finding builds one MCP-SEC finding about subject (a tool, or an item of
// kind) at pointer.
func finding(rule, kind, subject, pointer, msg string) catalogue.Finding {
	f := catalogue.New(rule, subject, msg)
	f.Kind, f.Pointer = kind, pointer
	return f
}
