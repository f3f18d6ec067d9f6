// Package manifest reads declared manifests and writes canonical ones. A
// manifest is a saved tools/list result, optionally with the results of
// prompts/list, resources/list and resources/templates/list beside it
// (one object with tools, prompts, resources and resourceTemplates): what
// consumers were built against. A list that is absent is not declared and
// not compared.
package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sync/errgroup"
	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/yamlsyntax"
)

// Manifest is a declared surface: tools and, optionally, prompts,
// resources and resource templates.
type Manifest struct {
	Path  string
	Tools []mcp.Tool
	// Items are the declared lists of the other kinds; a kind without an
	// entry is not declared (an empty list is: it declares none).
	Items map[mcp.Kind][]mcp.Item
	// NoTools is set when the manifest declares lists but no "tools":
	// then tools are not compared. The zero value declares tools.
	NoTools bool

	// quiet: which declared tools a listing's checks find nothing in.
	quiet atomic.Pointer[[]bool]
	// compared: what Compared remembers.
	compared atomic.Pointer[memo]
}

// memo is what Compared remembers of a manifest: per declared tool, its
// last comparison worth keeping, and the bytes they weigh together, at
// most budget.
type memo struct {
	slots  []atomic.Pointer[comparison]
	used   atomic.Int64
	budget int64
}

// comparison is what Compared remembers of a declared tool: the Sum of
// the served definition it was last compared with and, once that
// definition was served twice in a row, the answer and its weight in
// bytes (nil and 0 before).
type comparison struct {
	served jsonscan.Sum
	answer any
	weight int64
}

// Compared returns compare(), the comparison of m's declared tool i with
// a served definition whose mcp.Tool.Sum is served, remembered on m: a
// later call for tool i with the same served Sum returns the remembered
// answer without comparing again. That is a daemon's usual run: its
// targets share their manifests, and a tool that drifted is served the
// same way run after run, its findings built anew each time until now.
//
// An answer is kept the second time in a row tool i is served the same
// definition, not the first: a manifest's first run (and a run served a
// definition once, as by targets that share m but not their servers)
// keeps no answers, only the Sum, and so retains nothing it would only
// let go. weigh gives an answer's weight in bytes, 0 for one not worth
// keeping (a tool that did not drift costs little to compare again); tool
// i's slot then empties, so what m holds is the drifted tools' answers,
// not one per tool. m holds at most as many bytes of answers as its tools
// take as JSON (newMemo): a hostile server can make a tool's answer large,
// never m's memo larger than m. A zero served Sum (a definition built by
// hand) is never remembered. Targets served different definitions of one
// tool take turns in its slot: each answer is still right, only computed
// again. An answer is shared by every caller: none may modify it.
//
// The memo lives on m, not in the program's probe.Caches: it is m's
// answers, bounded by m's size and freed with m, whose owner (the
// daemon's manifest cache, a one-shot command) bounds how many manifests
// are held; a slot per tool needs no eviction policy.
func Compared[V any](m *Manifest, i int, served jsonscan.Sum, compare func() V, weigh func(V) int) V {
	if served == (jsonscan.Sum{}) || i < 0 || i >= len(m.Tools) {
		return compare()
	}
	mm := m.compared.Load()
	if mm == nil {
		m.compared.CompareAndSwap(nil, newMemo(m.Tools))
		mm = m.compared.Load()
	}
	slot := &mm.slots[i]
	old := slot.Load()
	again := old != nil && old.served == served
	if again && old.answer != nil {
		return old.answer.(V)
	}
	v := compare()
	var next *comparison
	switch w := int64(weigh(v)); {
	case w == 0:
	case !again:
		next = &comparison{served: served} // seen once: the Sum alone
	case mm.used.Add(w) <= mm.budget:
		next = &comparison{served, v, w}
	default:
		mm.used.Add(-w)
		next = old // over budget: stays seen, unkept
	}
	switch {
	case next == old:
		// An unchanged slot stays unwritten: targets sharing m share its
		// cache lines.
	case slot.CompareAndSwap(old, next):
		if old != nil {
			mm.used.Add(-old.weight)
		}
	case next != nil: // another run replaced old meanwhile; its record stays
		mm.used.Add(-next.weight)
	}
	return v
}

// newMemo is an empty memo for tools, whose budget is as many bytes as
// the tools take as JSON, and at least minRememberBudget.
func newMemo(tools []mcp.Tool) *memo {
	var raw int64
	for _, t := range tools {
		raw += int64(len(t.Raw))
	}
	return &memo{slots: make([]atomic.Pointer[comparison], len(tools)), budget: max(minRememberBudget, raw)}
}

// minRememberBudget lets a small manifest remember a few hundred drifted
// tools' findings.
const minRememberBudget = 256 << 10

// Quiet reports whether a listing's checks find nothing in declared tool
// i, by quiet (probe.QuietTool, the same function every call: the answers
// are kept). A served tool byte-identical to it need not be checked
// again: its checks would find nothing. It is worked out once per
// manifest, for every tool at once over the machine's processors, not
// once a run: the checks compile each schema, and a daemon's targets are
// mostly served what they declare. The predicate is passed in so that
// this package stays below the checks (docs/architecture.md).
func (m *Manifest) Quiet(i int, quiet func(mcp.Tool) bool) bool {
	p := m.quiet.Load()
	if p == nil {
		flags := make([]bool, len(m.Tools))
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for k, t := range m.Tools {
			g.Go(func() error { flags[k] = quiet(t); return nil })
		}
		_ = g.Wait() // no call returns an error
		m.quiet.CompareAndSwap(nil, &flags)
		p = m.quiet.Load()
	}
	return i < len(*p) && (*p)[i]
}

// Weight is an estimate of the bytes m keeps alive as parsed, for a
// cache weighted by bytes: each definition's JSON, the strings read from
// it (name, title, description, a few of an item's), and the structs
// holding them. It does not count what runs remember on m (Compared,
// Quiet), which its owner adds. A parsed manifest holds no slice
// of the file it was read from (FromBytes), so this is the whole of it.
func (m *Manifest) Weight() int {
	const toolSize, itemSize = int(unsafe.Sizeof(mcp.Tool{})), int(unsafe.Sizeof(mcp.Item{}))
	w := int(unsafe.Sizeof(*m)) + len(m.Path)
	for _, t := range m.Tools {
		w += toolSize + len(t.Raw) + len(t.Name) + len(t.Title) + len(t.Description)
	}
	for _, items := range m.Items {
		w += 64 // the map slot and the slice
		for _, it := range items {
			w += itemSize + len(it.Raw) + len(it.Key) + len(it.Name) + len(it.Title) + len(it.Description) + len(it.URI) + len(it.MimeType)
			for _, a := range it.Arguments {
				w += int(unsafe.Sizeof(a)) + len(a.Name)
			}
		}
	}
	return w
}

// ToolsDigest is the SHA-256 of tools' names and Sums (mcp.Tool.Sum), in
// order: two lists of one digest are the same tools in the same order,
// equal in all a comparison reads. ok is false when a tool has no Sum (a
// definition built by hand), which no digest can stand for. A daemon
// keeps a declared manifest's digest instead of the manifest
// (docs/scaling.md): a listing of the same digest compares with it as
// with itself (Served).
func ToolsDigest(tools []mcp.Tool) (digest [sha256.Size]byte, ok bool) {
	h := sha256.New()
	var n [8]byte
	for _, t := range tools {
		if t.Sum == (jsonscan.Sum{}) {
			return digest, false
		}
		binary.LittleEndian.PutUint64(n[:], uint64(len(t.Name)))
		h.Write(n[:])
		h.Write([]byte(t.Name))
		h.Write(t.Sum[:])
	}
	h.Sum(digest[:0])
	return digest, true
}

// RawDigest is the SHA-256 of the jsonscan.Sum of each tool's definition
// as written (mcp.Tool.Raw), in order: two lists of one RawDigest are
// byte for byte the same definitions, so what was worked out from one's
// bytes (Quiet) holds for the other's.
func RawDigest(tools []mcp.Tool) (digest [sha256.Size]byte) {
	h := sha256.New()
	for _, t := range tools {
		sum := jsonscan.SumOf(t.Raw)
		h.Write(sum[:])
	}
	h.Sum(digest[:0])
	return digest
}

// Served is a manifest at path that declares exactly tools (a copy of the
// list, sharing the definitions). For a listing whose ToolsDigest is a
// tools-only manifest's, it is that manifest as every run's check reads
// it — the same names in the same order, each tool equal in all a
// comparison reads — without reading the file. quiet, if not nil, is
// Quiet's answer for each of tools, known already (for a listing of the
// manifest's RawDigest: the manifest's answers); else it is worked out
// from tools' bytes when a run asks.
func Served(path string, tools []mcp.Tool, quiet []bool) *Manifest {
	m := &Manifest{Path: path, Tools: slices.Clone(tools)}
	if quiet != nil && len(quiet) == len(tools) {
		flags := slices.Clone(quiet)
		m.quiet.Store(&flags)
	}
	return m
}

// ToolsOnly reports whether m declares tools and no other list: the
// manifests a ToolsDigest stands for.
func (m *Manifest) ToolsOnly() bool { return !m.NoTools && len(m.Items) == 0 }

// Declares reports whether the manifest declares the list of k.
func (m *Manifest) Declares(k mcp.Kind) bool {
	if k == mcp.KindTool {
		return !m.NoTools
	}
	_, ok := m.Items[k]
	return ok
}

// Names returns the declared tool names in manifest order.
func (m *Manifest) Names() []string {
	names := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		names[i] = t.Name
	}
	return names
}

// Load reads a manifest file, JSON or YAML, in any of the accepted shapes.
func Load(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return FromBytes(path, b)
}

// FromBytes parses b as the manifest file at path, for callers that have
// read (and hashed) the file themselves. The manifest holds no slice of
// b (the tools are compacted into a buffer of their own, the other
// items' definitions copied as they are read), so a caller that keeps
// the manifest need not keep the file: TestFromBytesKeepsNoFileBytes.
func FromBytes(path string, b []byte) (*Manifest, error) {
	m, err := parse(b, filepath.Ext(path))
	if err != nil {
		err.Path = path
		return nil, err
	}
	m.Path = path
	return m, nil
}

// Parse reads manifest bytes. ext (".json", ".yaml", ".yml" or "") picks the
// syntax; without one, text that does not start with { or [ is YAML.
// Every error is an *Error, with the line and column of a syntax error.
// The manifest holds no slice of b (FromBytes).
func Parse(b []byte, ext string) (*Manifest, error) {
	m, err := parse(b, ext)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func parse(b []byte, ext string) (*Manifest, *Error) {
	if IsYAML(b, ext) {
		j, err := yamlToJSON(b)
		if err != nil {
			return nil, err
		}
		b = j
	} else if err := syntaxCheck(b); err != nil {
		return nil, err
	}
	items, hasTools, err := itemArrays(b)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	var raws []json.RawMessage
	if hasTools || len(items) == 0 {
		if raws, err = toolArray(b); err != nil {
			return nil, &Error{Msg: err.Error()}
		}
	}
	m, err := fromRaw(raws)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	m.NoTools = !hasTools && len(items) > 0
	if m.Items, err = itemsFromRaw(items); err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	return m, nil
}

// IsYAML reports whether a manifest file is read as YAML: by its
// extension (ext, with the dot), or, without .json, by text that does not
// start with { or [.
func IsYAML(b []byte, ext string) bool {
	trimmed := bytes.TrimSpace(b)
	return ext == ".yaml" || ext == ".yml" ||
		(ext != ".json" && len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '[')
}

// toolArray finds the tools in a tools/list result, a bare array, or a
// JSON-RPC response carrying a result.
func toolArray(b []byte) ([]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var raws []json.RawMessage
		err := json.Unmarshal(b, &raws)
		return raws, err
	}
	var doc struct {
		JSONRPC string             `json:"jsonrpc"`
		Result  *json.RawMessage   `json:"result"`
		Tools   *[]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, errors.New(`expected a tools/list result {"tools": [...]}, a bare array of tools, or a JSON-RPC response`)
	}
	if doc.Tools != nil {
		return *doc.Tools, nil
	}
	if doc.Result != nil {
		var res struct {
			Tools *[]json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(*doc.Result, &res); err == nil && res.Tools != nil {
			return *res.Tools, nil
		}
		return nil, errors.New(`JSON-RPC response: "result" has no "tools" array`)
	}
	return nil, errors.New(`no "tools" array: expected a tools/list result, a bare array of tools, or a JSON-RPC response`)
}

func fromRaw(raws []json.RawMessage) (*Manifest, error) {
	m := &Manifest{Tools: make([]mcp.Tool, 0, len(raws))}
	seen := map[string]int{}
	// Compact, so that a declared schema a server serves in the same key
	// order is byte-identical to what it serves, and compared as equal at
	// no cost (catalogue.compareSchema); whitespace is all that changes,
	// and the canonical form and hash ignore it anyway. All of them go
	// into one buffer (json.Compact), sliced once it is complete.
	size := 0
	for _, raw := range raws {
		size += len(raw)
	}
	var compact bytes.Buffer
	compact.Grow(size)
	ends := make([]int, len(raws))
	for i, raw := range raws {
		if err := json.Compact(&compact, raw); err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		ends[i] = compact.Len()
	}
	start := 0
	for i, end := range ends {
		raws[i] = compact.Bytes()[start:end]
		start = end
	}
	for i, raw := range raws {
		t, err := mcp.ParseTool(raw[:len(raw):len(raw)])
		if err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("tools[%d]: tool %q is already declared at tools[%d]", i, t.Name, j)
		}
		seen[t.Name] = i
		m.Tools = append(m.Tools, t)
	}
	return m, nil
}

// Hash is the SHA-256 of the canonical form: equal hashes, equal
// manifests. It is computed on demand: rendering the canonical form costs
// more than the rest of a load, and a check needs none of it.
func (m *Manifest) Hash() (string, error) {
	canon, err := m.Canonical()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical renders tools as a tools/list result sorted by name, with keys
// in a stable order, numbers kept exactly, and no HTML escaping.
func Canonical(tools []mcp.Tool) ([]byte, error) {
	return (&Manifest{Tools: tools}).Canonical()
}

// Canonical renders every list the manifest declares, each sorted by its
// identity (a tool's, prompt's or template's name, a resource's uri), with
// keys in a stable order, numbers kept exactly and no HTML escaping. A
// tools-only manifest renders as the tools/list result it always was.
//
// Each item is one compact line; only the document's two outer levels are
// indented. Indenting every level would make the output grow with the
// square of a schema's depth (a deeply nested 36 KB answer became hundreds
// of megabytes), and a capture, a download and a stored baseline are all
// this form.
func (m *Manifest) Canonical() ([]byte, error) {
	lists := map[string][]json.RawMessage{}
	if m.Declares(mcp.KindTool) {
		sorted := slices.Clone(m.Tools)
		slices.SortStableFunc(sorted, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
		out := make([]json.RawMessage, len(sorted))
		for i, t := range sorted {
			b, err := canonicalItem(t.Raw)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %w", t.Name, err)
			}
			out[i] = b
		}
		lists[mcp.KindTool.Key()] = out
	}
	for _, k := range mcp.ItemKinds {
		items, ok := m.Items[k]
		if !ok {
			continue
		}
		sorted := slices.Clone(items)
		slices.SortStableFunc(sorted, func(a, b mcp.Item) int { return strings.Compare(a.Key, b.Key) })
		out := make([]json.RawMessage, len(sorted))
		for i, it := range sorted {
			b, err := canonicalItem(it.Raw)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", k.Noun(), it.Key, err)
			}
			out[i] = b
		}
		lists[k.Key()] = out
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, key := range slices.Sorted(maps.Keys(lists)) {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, "\n  %q: [", key) // the keys are plain ASCII
		for j, item := range lists[key] {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("\n    ")
			buf.Write(item)
		}
		if len(lists[key]) > 0 {
			buf.WriteString("\n  ")
		}
		buf.WriteByte(']')
	}
	buf.WriteString("\n}\n")
	return buf.Bytes(), nil
}

// canonicalItem is raw with its keys sorted, its numbers as written, and
// no white space or HTML escaping.
func canonicalItem(raw json.RawMessage) ([]byte, error) {
	var v any
	if err := decodeExact(raw, &v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeExact decodes raw keeping numbers as written.
func decodeExact(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// syntaxCheck reports a JSON syntax error with its line and column.
func syntaxCheck(b []byte) *Error {
	if json.Valid(b) { // only an error needs its position
		return nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return jsonError(b, se)
	case err != nil:
		return &Error{Msg: "not valid JSON: " + err.Error()}
	}
	return nil
}

// yamlToJSON converts a YAML document to JSON, its errors placed in the
// file. Mapping keys must be strings, as in JSON.
func yamlToJSON(b []byte) ([]byte, *Error) {
	var node yaml.Node
	if err := yaml.Unmarshal(b, &node); err != nil {
		line, msg := yamlsyntax.Locate(b, err)
		return nil, &Error{Line: line, Msg: "not valid YAML: " + msg}
	}
	v, err := nodeValue(&node)
	if err != nil {
		return nil, err
	}
	j, jerr := json.Marshal(v)
	if jerr != nil {
		return nil, &Error{Msg: jerr.Error()}
	}
	return j, nil
}

// nodeError is a problem at n.
func nodeError(n *yaml.Node, format string, args ...any) *Error {
	return &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func nodeValue(n *yaml.Node) (any, *Error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, &Error{Msg: "empty YAML document"}
		}
		return nodeValue(n.Content[0])
	case yaml.AliasNode:
		return nil, nodeError(n, "YAML aliases are not allowed in manifests")
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := nodeValue(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool") {
				return nil, nodeError(k, "mapping keys must be strings")
			}
			if _, dup := out[k.Value]; dup {
				return nil, nodeError(k, "key %q repeated", k.Value)
			}
			v, err := nodeValue(vn)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, nodeError(n, "%v", err)
	}
	if f, ok := v.(float64); ok && (f != f || f > 1.7e308 || f < -1.7e308) {
		return nil, nodeError(n, "%v is not a JSON number", f)
	}
	return v, nil
}
