package schema

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/driftd/driftd/internal/jsonscan"
)

// tree is one schema document as the diff reads it: a jsonscan.Index, the
// document as encoding/json's decoder read it token by token, with every
// value's bytes. Equal subtrees are recognised by their bytes, so an
// unchanged property costs one memory comparison instead of a walk.
type tree struct {
	ix jsonscan.Index
	// refs are the member nodes whose key is "$ref", in document order: a
	// subtree holds a $ref when one of them falls inside it.
	refs []int32
	// sortedAt holds, for each object node whose members have been sorted
	// by key (the last of duplicates kept, as encoding/json keeps it), where in arena they start, plus one; the
	// count sits just before them.
	sortedAt []int32
	arena    []int32
	// byKey and elems index large objects and arrays, so a $ref into them
	// is not a scan.
	byKey map[int32]map[string]int32
	elems map[int32][]int32
}

// Objects and arrays up to this size are searched by a scan.
const scanLimit = 16

// Trees are reused between diffs: a tree's storage is the size of the
// largest document it held, and one that held a huge one is dropped.
var trees = sync.Pool{New: func() any { return new(tree) }}

const maxPooledNodes = 1 << 16

// newTree indexes b.
func newTree(b []byte) (*tree, error) {
	t := trees.Get().(*tree)
	if err := t.ix.Reset(b, maxDiffDepth); err != nil {
		t.release()
		return nil, err
	}
	for i := range t.ix.Nodes {
		if n := &t.ix.Nodes[i]; n.KeyEnd-n.KeyStart == 4 && string(t.ix.Key(i)) == "$ref" {
			t.refs = append(t.refs, int32(i))
		}
	}
	return t, nil
}

func (t *tree) release() {
	if cap(t.ix.Nodes) > maxPooledNodes {
		return
	}
	t.ix.Src, t.refs, t.arena, t.sortedAt = nil, t.refs[:0], t.arena[:0], t.sortedAt[:0]
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
	return v.t.ix.Nodes[v.i].Kind
}

// raw returns the value's bytes; equal bytes are equal values.
func (v val) raw() []byte {
	switch v.i {
	case absent:
		return []byte("null")
	case yes:
		return []byte("true")
	}
	return v.t.ix.Raw(int(v.i))
}

func (v val) isObject() bool { return v.kind() == jsonscan.Object }

func (v val) isArray() bool { return v.kind() == jsonscan.Array }

// str returns a string value's text.
func (v val) str() (string, bool) {
	if v.kind() != jsonscan.String {
		return "", false
	}
	return string(v.t.ix.String(int(v.i))), true
}

// text returns a string value's text without copying it.
func (v val) text() []byte { return v.t.ix.String(int(v.i)) }

func (v val) boolean() bool { return v.kind() == jsonscan.True }

func (v val) isFalse() bool { return v.kind() == jsonscan.False }

// key returns member node j's key.
func (t *tree) key(j int32) []byte { return t.ix.Key(int(j)) }

// get returns the member k of an object, the last of duplicates; absent
// when v is no object or has no such member.
func (v val) get(k string) (val, bool) {
	if !v.isObject() {
		return val{v.t, absent}, false
	}
	t, n := v.t, &v.t.ix.Nodes[v.i]
	if n.Len > scanLimit {
		if j, ok := t.index(v.i)[k]; ok {
			return val{t, j}, true
		}
		return val{t, absent}, false
	}
	found := absent
	for j := v.i + 1; j < n.Next; j = t.ix.Nodes[j].Next {
		if m := &t.ix.Nodes[j]; int(m.KeyEnd-m.KeyStart) == len(k) && string(t.key(j)) == k {
			found = j
		}
	}
	return val{t, found}, found != absent
}

func (v val) has(k string) bool { _, ok := v.get(k); return ok }

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
	n := &t.ix.Nodes[i]
	m := make(map[string]int32, n.Len)
	for j := i + 1; j < n.Next; j = t.ix.Nodes[j].Next {
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
	return v.i + 1, v.t.ix.Nodes[v.i].Next
}

func (t *tree) next(j int32) int32 { return t.ix.Nodes[j].Next }

// len returns the number of an array's elements.
func (v val) len() int {
	if !v.isArray() {
		return 0
	}
	return int(v.t.ix.Nodes[v.i].Len)
}

// elem returns an array's element i.
func (v val) elem(i int) (val, bool) {
	if i < 0 || i >= v.len() {
		return val{v.t, absent}, false
	}
	t, n := v.t, &v.t.ix.Nodes[v.i]
	if n.Len > scanLimit {
		es, ok := t.elems[v.i]
		if !ok {
			es = make([]int32, 0, n.Len)
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

// members returns an object's members sorted by key, the last of
// duplicates kept: the keys a map decoded from it would have, in order.
func (v val) members() []int32 {
	if !v.isObject() {
		return nil
	}
	t := v.t
	if len(t.sortedAt) == 0 {
		t.sortedAt = slices.Grow(t.sortedAt, len(t.ix.Nodes))[:len(t.ix.Nodes)]
		clear(t.sortedAt)
	}
	if at := t.sortedAt[v.i]; at > 0 {
		return t.arena[at : at+t.arena[at-1] : at+t.arena[at-1]]
	}
	n := &t.ix.Nodes[v.i]
	t.arena = append(t.arena, 0) // the count, set below
	start := len(t.arena)
	for j := v.i + 1; j < n.Next; j = t.ix.Nodes[j].Next {
		t.arena = append(t.arena, j)
	}
	ms := t.arena[start:]
	inOrder := true
	for i := 1; i < len(ms) && inOrder; i++ {
		inOrder = bytes.Compare(t.key(ms[i-1]), t.key(ms[i])) < 0
	}
	if !inOrder {
		slices.SortStableFunc(ms, func(a, b int32) int { return bytes.Compare(t.key(a), t.key(b)) })
		w := 0
		for i := range ms {
			if i+1 < len(ms) && bytes.Equal(t.key(ms[i]), t.key(ms[i+1])) {
				continue // a later duplicate follows and wins
			}
			ms[w] = ms[i]
			w++
		}
		t.arena = t.arena[:start+w]
	}
	end := len(t.arena)
	t.arena[start-1] = int32(end - start)
	t.sortedAt[v.i] = int32(start)
	return t.arena[start:end:end]
}

// hasRef reports whether an object anywhere in v has a "$ref" member.
func (v val) hasRef() bool {
	if v.i < 0 || len(v.t.refs) == 0 {
		return false
	}
	next := v.t.ix.Nodes[v.i].Next
	k, _ := slices.BinarySearch(v.t.refs, v.i)
	return k < len(v.t.refs) && v.t.refs[k] < next
}

// refFreeEqual reports whether a and b are the same JSON value and contain
// no $ref: identical references can still point at definitions that
// differ.
func refFreeEqual(a, b val) bool { return !a.hasRef() && equal(a, b, 0) }

// equal reports whether a and b are the same JSON value: equal bytes, or
// the same members in another order, the same escapes decoded.
func equal(a, b val, depth int) bool {
	if depth > maxDiffDepth {
		return false
	}
	if bytes.Equal(a.raw(), b.raw()) {
		return true
	}
	switch a.kind() {
	case jsonscan.Object:
		if !b.isObject() {
			return false
		}
		am, bm := a.members(), b.members()
		if len(am) != len(bm) {
			return false
		}
		for i := range am {
			if !bytes.Equal(a.t.key(am[i]), b.t.key(bm[i])) || !equal(val{a.t, am[i]}, val{b.t, bm[i]}, depth+1) {
				return false
			}
		}
		return true
	case jsonscan.Array:
		if !b.isArray() || a.len() != b.len() {
			return false
		}
		i, aEnd := a.span()
		j, _ := b.span()
		for ; i < aEnd; i, j = a.t.next(i), b.t.next(j) {
			if !equal(val{a.t, i}, val{b.t, j}, depth+1) {
				return false
			}
		}
		return true
	case jsonscan.String:
		return b.kind() == jsonscan.String && bytes.Equal(a.text(), b.text())
	}
	return false // numbers and literals are equal only as equal bytes
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
