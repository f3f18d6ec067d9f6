package format

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// File is a manifest file findings are located in: its path as the
// command was given it, and its bytes.
type File struct {
	Path  string
	Bytes []byte
}

// maxLocateDepth bounds the nesting the locator indexes; a deeper file
// is located at line 1 rather than walked.
const maxLocateDepth = 512

// value is a located JSON or YAML value: its line, and a way down.
type value interface {
	line() int
	member(key string) (value, bool)
	elements() []value
	text() (string, bool)
}

// Locator finds the line of a declared tool, prompt, resource or resource
// template, and of a JSON pointer inside a tool's schema, in a manifest
// file. It reads the file's shapes as internal/manifest does: a list
// result, a bare array of tools, or a JSON-RPC response carrying one.
type Locator struct {
	lists map[mcp.Kind]value
	items map[mcp.Kind]map[string]value // by identity, built on first use
}

// Locate indexes f. A file that does not parse yields a Locator that
// places everything at line 1.
func Locate(f File) *Locator {
	l := &Locator{lists: map[mcp.Kind]value{}, items: map[mcp.Kind]map[string]value{}}
	root := parseLocated(f.Bytes, filepath.Ext(f.Path))
	if root == nil {
		return l
	}
	if root.elements() != nil {
		l.lists[mcp.KindTool] = root
		return l
	}
	top := root
	if res, ok := root.member("result"); ok && !hasList(root) {
		top = res
	}
	for _, k := range mcp.Kinds {
		if v, ok := top.member(k.Key()); ok {
			l.lists[k] = v
		}
	}
	return l
}

func hasList(v value) bool {
	for _, k := range mcp.Kinds {
		if _, ok := v.member(k.Key()); ok {
			return true
		}
	}
	return false
}

// Line returns the line of the most specific place the file has for a
// finding: the deepest part of its pointer the file has (inside the
// tool's schema of its direction, or the item itself), else the item's
// name, else the item's list, else 1.
func (l *Locator) Line(kind mcp.Kind, name, direction, pointer string) int {
	list, ok := l.lists[kind]
	if !ok {
		return 1
	}
	item, ok := l.item(kind, list, name)
	if !ok {
		return list.line()
	}
	at, base := item, item
	if v, ok := item.member(identityKey(kind)); ok {
		at = v // the line a person reads as the item's: its name
	}
	if key, ok := map[string]string{"input": "inputSchema", "output": "outputSchema"}[direction]; ok {
		// A schema finding's pointer is into the schema of its direction.
		s, ok := item.member(key)
		if !ok {
			return at.line()
		}
		at, base = s, s
	}
	for _, tok := range pointerTokens(pointer) {
		next, ok := step(base, tok)
		if !ok {
			break
		}
		at, base = next, next
	}
	return at.line()
}

// item returns the element of list whose identity is name; the first of
// repeated names, which the manifest reader refuses anyway.
func (l *Locator) item(kind mcp.Kind, list value, name string) (value, bool) {
	byName, ok := l.items[kind]
	if !ok {
		byName = map[string]value{}
		for _, e := range list.elements() {
			if v, ok := e.member(identityKey(kind)); ok {
				if s, ok := v.text(); ok {
					// Findings name items as the one sanitiser writes them.
					s = sanitize.Name(s)
					if _, dup := byName[s]; !dup {
						byName[s] = e
					}
				}
			}
		}
		l.items[kind] = byName
	}
	v, ok := byName[name]
	return v, ok
}

// identityKey is the member that names an item: a resource's uri,
// everything else's name.
func identityKey(kind mcp.Kind) string {
	if kind == mcp.KindResource {
		return "uri"
	}
	return "name"
}

func step(v value, tok string) (value, bool) {
	if m, ok := v.member(tok); ok {
		return m, true
	}
	if es := v.elements(); es != nil {
		if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(es) {
			return es[i], true
		}
	}
	return nil, false
}

// pointerTokens splits an RFC 6901 pointer into its unescaped tokens.
func pointerTokens(p string) []string {
	if !strings.HasPrefix(p, "/") {
		return nil
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = jsonscan.UnescapeToken(t)
	}
	return toks
}

// parseLocated parses b in the syntax internal/manifest reads it in.
func parseLocated(b []byte, ext string) value {
	if manifest.IsYAML(b, ext) {
		var n yaml.Node
		if yaml.Unmarshal(b, &n) != nil || n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
			return nil
		}
		return yamlValue{n.Content[0]}
	}
	ix := &jsonscan.Index{}
	if ix.Reset(b, maxLocateDepth) != nil || len(ix.Nodes) == 0 {
		return nil
	}
	return jsonValue{&jsonDoc{ix: ix, lines: lineStarts(b)}, 0}
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

type jsonDoc struct {
	ix    *jsonscan.Index
	lines []int
}

type jsonValue struct {
	doc *jsonDoc
	i   int
}

func (v jsonValue) line() int {
	off := int(v.doc.ix.Nodes[v.i].Start)
	i, found := slices.BinarySearch(v.doc.lines, off)
	if found {
		return i + 1
	}
	return i
}

// children returns the indexes of the members or elements of v.
func (v jsonValue) children() []int {
	nodes := v.doc.ix.Nodes
	var out []int
	for j := v.i + 1; j < int(nodes[v.i].Next); j = int(nodes[j].Next) {
		out = append(out, j)
	}
	return out
}

// member returns the last member named key, as encoding/json keeps the
// last of repeated keys.
func (v jsonValue) member(key string) (value, bool) {
	if v.doc.ix.Nodes[v.i].Kind != jsonscan.Object {
		return nil, false
	}
	found := -1
	for _, j := range v.children() {
		if string(v.doc.ix.Key(j)) == key {
			found = j
		}
	}
	if found < 0 {
		return nil, false
	}
	return jsonValue{v.doc, found}, true
}

func (v jsonValue) elements() []value {
	if v.doc.ix.Nodes[v.i].Kind != jsonscan.Array {
		return nil
	}
	out := []value{}
	for _, j := range v.children() {
		out = append(out, jsonValue{v.doc, j})
	}
	return out
}

func (v jsonValue) text() (string, bool) {
	if v.doc.ix.Nodes[v.i].Kind != jsonscan.String {
		return "", false
	}
	return string(v.doc.ix.String(v.i)), true
}

type yamlValue struct{ n *yaml.Node }

func (v yamlValue) line() int { return max(v.n.Line, 1) }

func (v yamlValue) member(key string) (value, bool) {
	if v.n.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(v.n.Content); i += 2 {
		if v.n.Content[i].Value == key {
			return yamlValue{v.n.Content[i+1]}, true
		}
	}
	return nil, false
}

func (v yamlValue) elements() []value {
	if v.n.Kind != yaml.SequenceNode {
		return nil
	}
	out := []value{}
	for _, c := range v.n.Content {
		out = append(out, yamlValue{c})
	}
	return out
}

func (v yamlValue) text() (string, bool) {
	if v.n.Kind != yaml.ScalarNode || v.n.Tag != "!!str" {
		return "", false
	}
	return v.n.Value, true
}

// Has reports whether the file declares the item of kind named name.
func (l *Locator) Has(kind mcp.Kind, name string) bool {
	list, ok := l.lists[kind]
	if !ok {
		return false
	}
	_, ok = l.item(kind, list, name)
	return ok
}

// fileLocator is a file with its index.
type fileLocator struct {
	file File
	loc  *Locator
}

func newLocators(files []File) []*fileLocator {
	out := make([]*fileLocator, len(files))
	for i, f := range files {
		out[i] = &fileLocator{f, Locate(f)}
	}
	return out
}

// locate picks the file and line of f: the first file that declares its
// item, else the first file.
func locate(locs []*fileLocator, f catalogue.Finding) (*fileLocator, int) {
	k := kindOf(f)
	at := locs[0]
	for _, l := range locs {
		if f.Tool != "" && l.loc.Has(k, f.Tool) {
			at = l
			break
		}
	}
	if f.Tool == "" && f.Kind == "" {
		return at, 1 // about the target, not a list
	}
	return at, at.loc.Line(k, f.Tool, f.Direction, f.Pointer)
}
