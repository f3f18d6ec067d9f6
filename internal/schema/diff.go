package schema

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Diff compares a declared schema with a served one. Both must be
// present (callers report a schema added or removed as a whole). Local
// $refs are followed, cycle-safe and bounded; a remote $ref is never
// fetched. The result is sorted by pointer, then change id.
//
// Both schemas are decoded by encoding/json, laid out flat (tree) and
// walked together from the top; subtrees whose hashes differ are told
// apart with one comparison, equal ones without a $ref are skipped, so
// the cost is the decoding and the changed paths. Results
// are cached in c under a digest of both schemas (pairKey): a pair seen before,
// as on every run of a target that has not changed since, costs a hash.
// The result is the cached value itself, shared by every caller: read it,
// never write to it.
func (c *Cache) Diff(declared, served []byte) []Change {
	return c.DiffFrom(jsonscan.Sum{}, jsonscan.Sum{}, declared, served)
}

// DiffFrom is Diff with the schemas' jsonscan.SumOf already known (a
// manifest's, summed when it was loaded, and a listing's, summed as it was
// decoded: mcp.Tool's InputSum and OutputSum); a zero Sum is computed
// here.
func (c *Cache) DiffFrom(declaredSum, servedSum jsonscan.Sum, declared, served []byte) []Change {
	if c == nil {
		return packed(diff(declared, served))
	}
	if declaredSum == (jsonscan.Sum{}) {
		declaredSum = jsonscan.SumOf(declared)
	}
	if servedSum == (jsonscan.Sum{}) {
		servedSum = jsonscan.SumOf(served)
	}
	return remember(c, kindDiff, pairKey(declaredSum, servedSum), func() []Change { return packed(diff(declared, served)) }, changesWeight)
}

// packed copies changes into one allocation for their texts and one for
// the slice, so a cached diff read again is two blocks of memory, not a
// string scattered over the heap for every field.
func packed(cs []Change) []Change {
	if len(cs) == 0 {
		return cs
	}
	n := 0
	for _, c := range cs {
		n += len(c.Pointer) + len(c.Declared) + len(c.Served)
	}
	var b strings.Builder
	b.Grow(n)
	for _, c := range cs {
		b.WriteString(c.Pointer)
		b.WriteString(c.Declared)
		b.WriteString(c.Served)
	}
	texts, at := b.String(), 0
	take := func(n int) string { s := texts[at : at+n]; at += n; return s }
	out := make([]Change, len(cs))
	for i, c := range cs {
		out[i] = c
		out[i].Pointer, out[i].Declared, out[i].Served = take(len(c.Pointer)), take(len(c.Declared)), take(len(c.Served))
	}
	return out
}

func diff(declared, served []byte) []Change {
	dt, err1 := newTree(declared)
	if dt != nil {
		defer dt.release()
	}
	st, err2 := newTree(served)
	if st != nil {
		defer st.release()
	}
	if err1 != nil || err2 != nil {
		why := "not valid JSON"
		if errors.Is(err1, jsonscan.ErrTooDeep) || errors.Is(err2, jsonscan.ErrTooDeep) {
			why = fmt.Sprintf("nested deeper than %d levels", maxDiffDepth)
		}
		return []Change{{ID: ChgUncomparable, Declared: "schema", Served: why}}
	}
	d := &differ{decl: dt, serv: st, budget: maxRefExpansions}
	d.walk(node{dt.root(), ""}, node{st.root(), ""}, 0)
	slices.SortStableFunc(d.changes, func(a, b Change) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return d.changes
}

type differ struct {
	decl, serv   *tree
	budget       int // $ref expansions left, shared with canonicalizers
	visited      map[string]bool
	changes      []Change
	uncomparable bool
}

func (d *differ) add(id, ptr, declared, served string) {
	if d.changes == nil {
		d.changes = make([]Change, 0, 8)
	}
	d.changes = append(d.changes, Change{ID: id, Pointer: ptr, Declared: clipText(declared), Served: clipText(served)})
}

func (d *differ) giveUp(ptr, why string) {
	if !d.uncomparable {
		d.uncomparable = true
		d.add(ChgUncomparable, ptr, "schema", why)
	}
}

// resolve follows local $refs that stand alone; it reports false when a
// $ref cannot be followed.
func (d *differ) resolve(side *tree, n node) (node, bool) {
	for range maxDiffDepth {
		if !n.v.isObject() {
			return n, true
		}
		r, _ := n.v.get("$ref")
		ref, ok := r.str()
		if !ok || !onlyAnnotationsBeside(n.v) {
			return n, true
		}
		d.budget--
		if d.budget < 0 || !strings.HasPrefix(ref, "#") {
			return n, false
		}
		target, ok := side.lookup(ref[1:])
		if !ok {
			return n, false
		}
		n = node{target, ref[1:]}
	}
	return n, false
}

// walk compares two schema nodes, emitting changes at served pointers.
func (d *differ) walk(dn, sn node, depth int) {
	if d.uncomparable {
		return
	}
	dLoc, sLoc := dn.loc, sn.loc
	var ok1, ok2 bool
	dn, ok1 = d.resolve(d.decl, dn)
	sn, ok2 = d.resolve(d.serv, sn)
	if !ok1 && !ok2 && sameValue(dn.v, sn.v) {
		return // the same unresolvable $ref on both sides
	}
	if !ok1 || !ok2 {
		d.giveUp(sn.loc, "a $ref that is remote, broken, or beyond the expansion bound")
		return
	}
	// Only a $ref can lead back to a node already on the way: pairs reached
	// through one are compared once, which ends cycles.
	if dn.loc != dLoc || sn.loc != sLoc {
		key := dn.loc + "\x00" + sn.loc
		if d.visited[key] {
			return
		}
		if d.visited == nil {
			d.visited = map[string]bool{}
		}
		d.visited[key] = true
	}
	if depth > maxDiffDepth || d.budget < 0 {
		d.giveUp(sn.loc, "beyond driftd's depth or $ref bound")
		return
	}
	if refFreeEqual(dn.v, sn.v) {
		return // identical, and no $ref inside that could lead elsewhere
	}
	dm, dFalse := asSchema(dn.v)
	sm, sFalse := asSchema(sn.v)
	switch {
	case dFalse && sFalse:
		return
	case sFalse:
		d.add(ChgTypeNarrowed, sn.loc, "any value", "false (no value)")
		return
	case dFalse:
		d.add(ChgTypeWidened, sn.loc, "false (no value)", "any value")
		return
	}
	do, so := newObj(dm), newObj(sm)
	d.types(&do, &so, sn.loc)
	d.enums(&do, &so, sn.loc)
	d.bounds(&do, &so, sn.loc)
	d.strings(&do, &so, sn.loc)
	d.object(&do, &so, dn, sn, depth)
	d.array(&do, &so, dn, sn, depth)
	d.others(dm, sm, sn.loc)
}

// asSchema returns a schema object; true (and any other non-object) is
// {}, which reads as absent, and false reports false.
func asSchema(v val) (val, bool) {
	switch v.kind() {
	case jsonscan.Object:
		return v, false
	case jsonscan.False:
		return v, true
	}
	return val{v.t, absent}, false
}

// child returns member m of n's object under key (properties), with its
// location.
func child(n node, key string, m int32) node {
	name := n.v.t.key(m)
	if bytes.ContainsAny(name, "~/") {
		return node{val{n.v.t, m}, ptr(n.loc, key, string(name))}
	}
	return node{val{n.v.t, m}, n.loc + "/" + key + "/" + string(name)}
}

// ptr extends the pointer loc by tokens, escaped.
func ptr(loc string, tokens ...string) string {
	switch len(tokens) {
	case 1:
		return loc + "/" + jsonscan.EscapeToken(tokens[0])
	case 2:
		return loc + "/" + jsonscan.EscapeToken(tokens[0]) + "/" + jsonscan.EscapeToken(tokens[1])
	}
	for _, t := range tokens {
		loc += "/" + jsonscan.EscapeToken(t)
	}
	return loc
}
