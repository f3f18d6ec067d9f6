package schema

import (
	"encoding/json"
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
func Diff(declared, served []byte) []Change {
	dv, err1 := parseCached(declared)
	sv, err2 := parse(served)
	if err1 != nil || err2 != nil {
		why := "not valid JSON"
		if errors.Is(err1, jsonscan.ErrTooDeep) || errors.Is(err2, jsonscan.ErrTooDeep) {
			why = fmt.Sprintf("nested deeper than %d levels", maxDiffDepth)
		}
		return []Change{{ID: ChgUncomparable, Declared: "schema", Served: why}}
	}
	budget := maxRefExpansions
	d := &differ{
		decl:    &doc{root: dv},
		serv:    &doc{root: sv},
		budget:  &budget,
		visited: map[string]bool{},
	}
	d.walk(node{dv, ""}, node{sv, ""}, 0)
	slices.SortStableFunc(d.changes, func(a, b Change) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return d.changes
}

type differ struct {
	decl, serv   *doc
	budget       *int
	visited      map[string]bool
	changes      []Change
	uncomparable bool
}

func (d *differ) add(id, ptr, declared, served string) {
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
func (d *differ) resolve(side *doc, n node) (node, bool) {
	for range maxDiffDepth {
		m, ok := n.v.(map[string]any)
		if !ok {
			return n, true
		}
		ref, ok := m["$ref"].(string)
		if !ok || !onlyAnnotationsBeside(m) {
			return n, true
		}
		*d.budget--
		if *d.budget < 0 || !strings.HasPrefix(ref, "#") {
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
	if !ok1 && !ok2 && canonValue(dn.v) == canonValue(sn.v) {
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
		d.visited[key] = true
	}
	if depth > maxDiffDepth || *d.budget < 0 {
		d.giveUp(sn.loc, "beyond driftd's depth or $ref bound")
		return
	}
	if refFreeEqual(dn.v, sn.v, 0) {
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
	d.types(dm, sm, sn.loc)
	d.enums(dm, sm, sn.loc)
	d.bounds(dm, sm, sn.loc)
	d.strings(dm, sm, sn.loc)
	d.object(dm, sm, dn, sn, depth)
	d.array(dm, sm, dn, sn, depth)
	d.others(dm, sm, sn.loc)
}

// asSchema returns a schema object; true is {}, and false reports false.
func asSchema(v any) (map[string]any, bool) {
	switch s := v.(type) {
	case map[string]any:
		return s, false
	case bool:
		if !s {
			return nil, true
		}
	}
	return map[string]any{}, false
}

func (d *differ) child(n node, parts ...string) node {
	loc := n.loc
	v := n.v
	for _, p := range parts {
		loc += "/" + escapeToken(p)
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		default:
			v = nil
		}
	}
	return node{v, loc}
}

func ptr(loc string, parts ...string) string {
	for _, p := range parts {
		loc += "/" + escapeToken(p)
	}
	return loc
}

// refFreeEqual reports whether a and b are the same JSON value and contain
// no $ref, cheaply and without allocating. A $ref makes it answer false:
// identical references can still point at definitions that differ.
func refFreeEqual(a, b any, depth int) bool {
	if depth > maxDiffDepth {
		return false
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if _, ref := x["$ref"]; ref {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !refFreeEqual(xv, yv, depth+1) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !refFreeEqual(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}
