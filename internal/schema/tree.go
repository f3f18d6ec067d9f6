package schema

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/driftd/driftd/internal/jsonscan"
)

// tree is one schema document as the diff reads it: the value
// encoding/json decoded (jsonscan.Decode), laid out flat in document
// order with each object's members sorted by key (the last of duplicates
// kept, as encoding/json keeps it), so a subtree is a range of nodes and a
// walk allocates nothing. Every node carries a hash of its value, so two
// subtrees that differ are told apart with one comparison.
type tree struct {
	nodes []tnode
	// text holds the keys, strings and numbers' text the nodes point into.
	text []byte
	// refs are the member nodes whose key is "$ref", in document order: a
	// subtree holds a $ref when one of them falls inside it.
	refs []int32
	// byKey and elems index large objects and arrays, so a $ref into them
	// is not a scan.
	byKey map[int32]map[string]int32
	elems map[int32][]int32
}

// tnode is one value of a tree. A container is followed by its members or
// elements, so its subtree is the nodes from its index up to its next.
type tnode struct {
	next int32
	// len is the number of an object's members or an array's elements.
	len int32
	// key is a member's key, text a string's text or a number as written,
	// both in tree.text.
	keyStart, keyEnd   int32
	textStart, textEnd int32
	// hash is a digest of the value as equal reads it: equal values have
	// equal hashes, so unequal hashes are unequal values.
	hash uint64
	kind jsonscan.Kind
}

// Objects and arrays up to this size are searched by a scan.
const scanLimit = 16

// Trees are reused between diffs: a tree's storage is the size of the
// largest document it held, and one that held a huge one is dropped.
var trees = sync.Pool{New: func() any { return new(tree) }}

const maxPooledNodes = 1 << 16

// hashSeed seeds the nodes' hashes. They only ever tell values apart
// (equal hashes are compared in full), so a collision costs a comparison,
// never a wrong answer.
var hashSeed = maphash.MakeSeed()

// newTree decodes b with encoding/json and lays it out.
func newTree(b []byte) (*tree, error) {
	v, err := jsonscan.Decode(b, maxDiffDepth)
	if err != nil {
		return nil, err
	}
	t := trees.Get().(*tree)
	t.add(v, "", false)
	return t, nil
}

// add appends the nodes of v, a member under key when member is set.
func (t *tree) add(v any, key string, member bool) {
	i := int32(len(t.nodes))
	n := tnode{}
	if member {
		n.keyStart, n.keyEnd = t.appendText(key)
		if key == "$ref" {
			t.refs = append(t.refs, i)
		}
	}
	t.nodes = append(t.nodes, n)
	var h uint64
	switch v := v.(type) {
	case map[string]any:
		n.kind, n.len = jsonscan.Object, int32(len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		h = mix(uint64(jsonscan.Object), uint64(len(keys)))
		for _, k := range keys {
			j := len(t.nodes)
			t.add(v[k], k, true)
			h = mix(mix(h, maphash.String(hashSeed, k)), t.nodes[j].hash)
		}
	case []any:
		n.kind, n.len = jsonscan.Array, int32(len(v))
		h = mix(uint64(jsonscan.Array), uint64(len(v)))
		for _, e := range v {
			j := len(t.nodes)
			t.add(e, "", false)
			h = mix(h, t.nodes[j].hash)
		}
	case string:
		n.kind = jsonscan.String
		n.textStart, n.textEnd = t.appendText(v)
	case json.Number:
		n.kind = jsonscan.Number
		n.textStart, n.textEnd = t.appendText(string(v))
	case bool:
		n.kind = jsonscan.False
		if v {
			n.kind = jsonscan.True
		}
	default:
		n.kind = jsonscan.Null
	}
	if n.kind < jsonscan.Array {
		h = scalarHash(n.kind, t.text[n.textStart:n.textEnd])
	}
	n.next, n.hash = int32(len(t.nodes)), h
	t.nodes[i] = n
}

func (t *tree) appendText(s string) (start, end int32) {
	start = int32(len(t.text))
	t.text = append(t.text, s...)
	return start, int32(len(t.text))
}

func scalarHash(k jsonscan.Kind, text []byte) uint64 {
	return mix(uint64(k), maphash.Bytes(hashSeed, text))
}

// mix folds x into h.
func mix(h, x uint64) uint64 {
	h ^= x + 0x9e3779b97f4a7c15 + h<<6 + h>>2
	return h * 0xff51afd7ed558ccd
}

func (t *tree) release() {
	if cap(t.nodes) > maxPooledNodes {
		return
	}
	t.nodes, t.text, t.refs = t.nodes[:0], t.text[:0], t.refs[:0]
	clear(t.byKey)
	clear(t.elems)
	trees.Put(t)
}

// val is a value of a tree. Two values exist in no document: absent, what
// a missing member reads as (like a nil any, it equals null), and yes, the
// true schema an absent items or additionalProperties stands for.
type val struct {
	t *tree
	i int32
}

const (
	absent int32 = -1
	yes    int32 = -2
)

func (t *tree) root() val { return val{t, 0} }

func (v val) kind() jsonscan.Kind {
	switch v.i {
	case absent:
		return jsonscan.Null
	case yes:
		return jsonscan.True
	}
	return v.t.nodes[v.i].kind
}

// hash is the value's tnode.hash; absent hashes as null, yes as true.
func (v val) hash() uint64 {
	if v.i < 0 {
		return scalarHash(v.kind(), nil)
	}
	return v.t.nodes[v.i].hash
}

// number returns a number's text as written.
func (v val) number() []byte { return v.text() }

func (v val) isObject() bool { return v.kind() == jsonscan.Object }

func (v val) isArray() bool { return v.kind() == jsonscan.Array }

// str returns a string value's text.
func (v val) str() (string, bool) {
	if v.kind() != jsonscan.String {
		return "", false
	}
	return string(v.text()), true
}

// text returns a string's text, or a number's, without copying it.
func (v val) text() []byte {
	if v.i < 0 {
		return nil
	}
	n := &v.t.nodes[v.i]
	return v.t.text[n.textStart:n.textEnd]
}

func (v val) boolean() bool { return v.kind() == jsonscan.True }

func (v val) isFalse() bool { return v.kind() == jsonscan.False }

// key returns member node j's key.
func (t *tree) key(j int32) []byte {
	n := &t.nodes[j]
	return t.text[n.keyStart:n.keyEnd]
}

// get returns the member k of an object; absent when v is no object or
// has no such member.
func (v val) get(k string) (val, bool) {
	if !v.isObject() {
		return val{v.t, absent}, false
	}
	t, n := v.t, &v.t.nodes[v.i]
	if n.len > scanLimit {
		if j, ok := t.index(v.i)[k]; ok {
			return val{t, j}, true
		}
		return val{t, absent}, false
	}
	for j := v.i + 1; j < n.next; j = t.nodes[j].next {
		if m := &t.nodes[j]; int(m.keyEnd-m.keyStart) == len(k) && string(t.key(j)) == k {
			return val{t, j}, true
		}
	}
	return val{t, absent}, false
}

// schemaObj is a schema object with the keywords the diff compares
// structurally located in one pass over its members (the last of
// duplicates), so each is found without another scan.
type schemaObj struct {
	val
	at [len(objKeywords)]int32
}

// keyword numbers objKeywords.
type keyword int

const (
	kwType keyword = iota
	kwEnum
	kwConst
	kwPattern
	kwFormat
	kwProperties
	kwRequired
	kwAdditionalProperties
	kwItems
	kwPrefixItems
	kwBounds      // boundKeys follow in their order
	kwMultipleOf  = kwBounds + 12
	kwUniqueItems = kwBounds + 13
)

var objKeywords = [...]string{"type", "enum", "const", "pattern", "format", "properties", "required",
	"additionalProperties", "items", "prefixItems",
	"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains",
	"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains", "multipleOf", "uniqueItems"}

// keywordOf returns k's keyword, or -1; a switch, not a map, since it runs
// for every member of every object the diff walks.
func keywordOf(k []byte) keyword {
	switch string(k) {
	case "type":
		return kwType
	case "enum":
		return kwEnum
	case "const":
		return kwConst
	case "pattern":
		return kwPattern
	case "format":
		return kwFormat
	case "properties":
		return kwProperties
	case "required":
		return kwRequired
	case "additionalProperties":
		return kwAdditionalProperties
	case "items":
		return kwItems
	case "prefixItems":
		return kwPrefixItems
	case "minimum":
		return kwBounds
	case "exclusiveMinimum":
		return kwBounds + 1
	case "minLength":
		return kwBounds + 2
	case "minItems":
		return kwBounds + 3
	case "minProperties":
		return kwBounds + 4
	case "minContains":
		return kwBounds + 5
	case "maximum":
		return kwBounds + 6
	case "exclusiveMaximum":
		return kwBounds + 7
	case "maxLength":
		return kwBounds + 8
	case "maxItems":
		return kwBounds + 9
	case "maxProperties":
		return kwBounds + 10
	case "maxContains":
		return kwBounds + 11
	case "multipleOf":
		return kwMultipleOf
	case "uniqueItems":
		return kwUniqueItems
	}
	return -1
}

func newObj(v val) schemaObj {
	o := schemaObj{val: v}
	for i := range o.at {
		o.at[i] = absent
	}
	for j, end := v.span(); j < end; j = v.t.next(j) {
		if k := keywordOf(v.t.key(j)); k >= 0 {
			o.at[k] = j
		}
	}
	return o
}

// get returns keyword k's value, as val.get does.
func (o *schemaObj) get(k keyword) (val, bool) { return val{o.t, o.at[k]}, o.at[k] != absent }

func (o *schemaObj) has(k keyword) bool { return o.at[k] != absent }

func (t *tree) index(i int32) map[string]int32 {
	if m, ok := t.byKey[i]; ok {
		return m
	}
	n := &t.nodes[i]
	m := make(map[string]int32, n.len)
	for j := i + 1; j < n.next; j = t.nodes[j].next {
		m[string(t.key(j))] = j
	}
	if t.byKey == nil {
		t.byKey = map[int32]map[string]int32{}
	}
	t.byKey[i] = m
	return m
}

// span returns the first and past-the-last node of a container's members
// or elements, stepped through with next: for j, end := v.span(); j < end;
// j = v.t.next(j).
func (v val) span() (first, end int32) {
	if v.i < 0 {
		return 0, 0
	}
	return v.i + 1, v.t.nodes[v.i].next
}

func (t *tree) next(j int32) int32 { return t.nodes[j].next }

// len returns the number of an array's elements.
func (v val) len() int {
	if !v.isArray() {
		return 0
	}
	return int(v.t.nodes[v.i].len)
}

// elem returns an array's element i.
func (v val) elem(i int) (val, bool) {
	if i < 0 || i >= v.len() {
		return val{v.t, absent}, false
	}
	t, n := v.t, &v.t.nodes[v.i]
	if n.len > scanLimit {
		es, ok := t.elems[v.i]
		if !ok {
			es = make([]int32, 0, n.len)
			for j, end := v.span(); j < end; j = t.next(j) {
				es = append(es, j)
			}
			if t.elems == nil {
				t.elems = map[int32][]int32{}
			}
			t.elems[v.i] = es
		}
		return val{t, es[i]}, true
	}
	j, _ := v.span()
	for range i {
		j = t.next(j)
	}
	return val{t, j}, true
}

// members returns an object's members, sorted by key, without
// duplicates: the keys a map decoded from it has, in order.
func (v val) members() []int32 {
	if !v.isObject() {
		return nil
	}
	out := make([]int32, 0, v.t.nodes[v.i].len)
	for j, end := v.span(); j < end; j = v.t.next(j) {
		out = append(out, j)
	}
	return out
}

// hasRef reports whether an object anywhere in v has a "$ref" member.
func (v val) hasRef() bool {
	if v.i < 0 || len(v.t.refs) == 0 {
		return false
	}
	next := v.t.nodes[v.i].next
	k, _ := slices.BinarySearch(v.t.refs, v.i)
	return k < len(v.t.refs) && v.t.refs[k] < next
}

// refFreeEqual reports whether a and b are the same JSON value and contain
// no $ref: identical references can still point at definitions that
// differ.
func refFreeEqual(a, b val) bool { return !a.hasRef() && equal(a, b, 0) }

// equal reports whether a and b are the same JSON value: the same
// members (in whatever order they were written), elements in the same
// order, the same text of strings and numbers.
func equal(a, b val, depth int) bool {
	if depth > maxDiffDepth || a.hash() != b.hash() || a.kind() != b.kind() {
		return false
	}
	switch a.kind() {
	case jsonscan.Object, jsonscan.Array: // members sorted by key
		if a.t.nodes[a.i].len != b.t.nodes[b.i].len {
			return false
		}
		i, aEnd := a.span()
		j, _ := b.span()
		for ; i < aEnd; i, j = a.t.next(i), b.t.next(j) {
			if !bytes.Equal(a.t.key(i), b.t.key(j)) || !equal(val{a.t, i}, val{b.t, j}, depth+1) {
				return false
			}
		}
		return true
	case jsonscan.String:
		return bytes.Equal(a.text(), b.text())
	case jsonscan.Number:
		return bytes.Equal(a.number(), b.number()) // as written: 1 is not 1.0
	}
	return true // null, true, false
}

// lookup resolves a local JSON pointer ("" is the root).
func (t *tree) lookup(ptr string) (val, bool) {
	v := t.root()
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return val{t, absent}, false
	}
	for rest, more := ptr[1:], true; more; {
		var tok string
		tok, rest, more = strings.Cut(rest, "/")
		if strings.Contains(tok, "~") {
			tok = jsonscan.UnescapeToken(tok)
		}
		var ok bool
		switch v.kind() {
		case jsonscan.Object:
			v, ok = v.get(tok)
		case jsonscan.Array:
			i, err := strconv.Atoi(tok)
			v, ok = v.elem(i)
			ok = ok && err == nil
		}
		if !ok {
			return val{t, absent}, false
		}
	}
	return v, true
}
