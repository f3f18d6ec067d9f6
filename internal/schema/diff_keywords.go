package schema

import (
	"bytes"
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
)

// types compares "type", treating null on its own and integer as a subset
// of number. An absent type allows every type.
func (d *differ) types(dm, sm *schemaObj, loc string) {
	dtv, dHas := dm.get(kwType)
	stv, sHas := sm.get(kwType)
	if !dHas && !sHas {
		return
	}
	var dBuf, sBuf [8]string
	dt, st := typeOf(dtv, dBuf[:0]), typeOf(stv, sBuf[:0])
	at := func() string {
		if !sHas {
			return loc
		}
		return ptr(loc, "type")
	}
	if dHas && sHas {
		dNull, sNull := slices.Contains(dt, "null"), slices.Contains(st, "null")
		switch {
		case sNull && !dNull:
			d.add(ChgNullAdded, at(), typeText(dt), typeText(st))
		case dNull && !sNull:
			d.add(ChgNullRemoved, at(), typeText(dt), typeText(st))
		}
		dt, st = without(dt, "null"), without(st, "null")
		if len(dt) == 0 || len(st) == 0 {
			if len(dt) != len(st) {
				d.add(ChgTypeChanged, at(), typeText(dt), typeText(st))
			}
			return
		}
	}
	sub := typeSubset(st, dt, sHas, dHas) // served within declared
	sup := typeSubset(dt, st, dHas, sHas) // declared within served
	switch {
	case sub && sup:
	case sub:
		d.add(ChgTypeNarrowed, at(), typeText(dt), typeText(st))
	case sup:
		d.add(ChgTypeWidened, at(), typeText(dt), typeText(st))
	default:
		d.add(ChgTypeChanged, at(), typeText(dt), typeText(st))
	}
}

// typeSubset reports whether every type in a is allowed by b. An absent
// type (has false) is every type.
func typeSubset(a, b []string, aHas, bHas bool) bool {
	if !bHas {
		return true
	}
	if !aHas {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) && !(t == "integer" && slices.Contains(b, "number")) {
			return false
		}
	}
	return true
}

// without removes drop from ts in place; nil stays nil (any type), and a
// list stays a list, if empty.
func without(ts []string, drop string) []string {
	return slices.DeleteFunc(ts, func(t string) bool { return t == drop })
}

func typeText(ts []string) string {
	if ts == nil {
		return "any type"
	}
	return "type " + strings.Join(ts, "|")
}

// enums compares enum and const as sets of allowed values.
func (d *differ) enums(dm, sm *schemaObj, loc string) {
	dc, dConst := dm.get(kwConst)
	sc, sConst := sm.get(kwConst)
	dEnum, sEnum := dm.has(kwEnum), sm.has(kwEnum)
	if dConst && sConst && !dEnum && !sEnum {
		if !sameValue(dc, sc) {
			d.add(ChgConstChanged, ptr(loc, "const"), "const "+canon(dc), "const "+canon(sc))
		}
		return
	}
	if !dConst && !sConst && !dEnum && !sEnum {
		return
	}
	if !dConst && !sConst { // enums alone: sets of canonical values
		de, _ := dm.get(kwEnum)
		se, _ := sm.get(kwEnum)
		if equal(de, se, 0) {
			return // the same values
		}
		dv, dHas := enumValues(de)
		sv, sHas := enumValues(se)
		d.enumChanges(loc, sm, len(dv), len(sv), dHas, sHas,
			func() []string { return sortedMinus(dv, sv) }, func() []string { return sortedMinus(sv, dv) })
		return
	}
	dv, dHas := allowedValues(dm)
	sv, sHas := allowedValues(sm)
	d.enumChanges(loc, sm, len(dv), len(sv), dHas, sHas,
		func() []string { return setDiff(dv, sv) }, func() []string { return setDiff(sv, dv) })
}

// enumChanges reports the changes between two sets of allowed values of
// sizes dn and sn (has false: no enum or const, any value).
func (d *differ) enumChanges(loc string, sm *schemaObj, dn, sn int, dHas, sHas bool, removedValues, addedValues func() []string) {
	switch {
	case !dHas && !sHas:
	case !dHas:
		d.add(ChgEnumAdded, ptr(loc, enumKey(sm)), "any value", strconv.Itoa(sn)+" allowed values")
	case !sHas:
		d.add(ChgEnumRemoved, loc, strconv.Itoa(dn)+" allowed values", "any value")
	default:
		removed, added := removedValues(), addedValues()
		p := ptr(loc, enumKey(sm))
		if len(removed) > 0 {
			d.add(ChgEnumValueRemoved, p, "values "+listText(removed), "no longer allowed")
		}
		if len(added) > 0 {
			d.add(ChgEnumValueAdded, p, "not allowed", "values "+listText(added)+" allowed")
		}
	}
}

// enumValues returns the distinct canonical values of an enum array,
// sorted: allowedValues's keys when there is no const.
func enumValues(e val) ([]string, bool) {
	if !e.isArray() {
		return nil, false
	}
	out := make([]string, 0, e.len())
	for j, end := e.span(); j < end; j = e.t.next(j) {
		out = append(out, canon(val{e.t, j}))
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// sortedMinus returns the values of sorted a that sorted b lacks: setDiff
// for sorted sets.
func sortedMinus(a, b []string) []string {
	var out []string
	for _, v := range a {
		if _, found := slices.BinarySearch(b, v); !found {
			out = append(out, v)
		}
	}
	return out
}

func enumKey(m *schemaObj) string {
	if m.has(kwEnum) {
		return "enum"
	}
	return "const"
}

// allowedValues returns the canonical values enum (or const) allows.
func allowedValues(m *schemaObj) (map[string]bool, bool) {
	if arr, _ := m.get(kwEnum); arr.isArray() {
		out := make(map[string]bool, arr.len())
		for j, end := arr.span(); j < end; j = m.t.next(j) {
			out[canon(val{m.t, j})] = true
		}
		if c, ok := m.get(kwConst); ok {
			cv := canon(c)
			return map[string]bool{cv: out[cv]}, true
		}
		return out, true
	}
	if c, ok := m.get(kwConst); ok {
		return map[string]bool{canon(c): true}, true
	}
	return nil, false
}

func setDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func listText(vs []string) string {
	const show = 5
	if len(vs) <= show {
		return strings.Join(vs, ", ")
	}
	return strings.Join(vs[:show], ", ") + fmt.Sprintf(" and %d more", len(vs)-show)
}

// The bound keywords, with +1 for lower bounds (a larger served value
// tightens) and -1 for upper bounds.
var (
	boundKeys = [...]string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains",
		"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains", "multipleOf", "uniqueItems"}
	boundSign = [...]int{+1, +1, +1, +1, +1, +1, -1, -1, -1, -1, -1, -1, 0, 0}
)

// bounds compares numeric bounds, multipleOf and uniqueItems.
func (d *differ) bounds(dm, sm *schemaObj, loc string) {
	var present [len(boundSign)]bool
	found := false
	for i := range boundKeys {
		present[i] = dm.has(kwBounds+keyword(i)) || sm.has(kwBounds+keyword(i))
		found = found || present[i]
	}
	if !found {
		return
	}
	for i, k := range boundKeys[:12] {
		if present[i] {
			d.bound(k, kwBounds+keyword(i), dm, sm, loc, boundSign[i])
		}
	}
	d.multipleOf(dm, sm, loc)
	du, _ := dm.get(kwUniqueItems)
	su, _ := sm.get(kwUniqueItems)
	switch {
	case su.boolean() && !du.boolean():
		d.add(ChgBoundTightened, ptr(loc, "uniqueItems"), "uniqueItems false", "uniqueItems true")
	case du.boolean() && !su.boolean():
		d.add(ChgBoundLoosened, loc, "uniqueItems true", "uniqueItems false")
	}
}

// bound compares keyword k; sign +1 for lower bounds (a larger served
// value tightens), -1 for upper bounds.
func (d *differ) bound(k string, kw keyword, dm, sm *schemaObj, loc string, sign int) {
	dv, dPresent := dm.get(kw)
	sv, sPresent := sm.get(kw)
	if dv.kind() == jsonscan.Number && sv.kind() == jsonscan.Number && bytes.Equal(dv.number(), sv.number()) {
		return
	}
	dr, dHas := boundOf(dv)
	sr, sHas := boundOf(sv)
	if (dPresent && !dHas) || (sPresent && !sHas) {
		return // draft-04 boolean exclusive*: compared by others()
	}
	switch {
	case !dHas && !sHas:
	case !dHas:
		d.add(ChgBoundTightened, ptr(loc, k), k+" absent", k+" "+sr.String())
	case !sHas:
		d.add(ChgBoundLoosened, loc, k+" "+dr.String(), k+" absent")
	default:
		switch c := sr.cmp(dr) * sign; {
		case c > 0:
			d.add(ChgBoundTightened, ptr(loc, k), k+" "+dr.String(), k+" "+sr.String())
		case c < 0:
			d.add(ChgBoundLoosened, ptr(loc, k), k+" "+dr.String(), k+" "+sr.String())
		}
	}
}

// bound is a bound's number: an integer of up to 18 digits (nearly every
// bound) as an int64, anything else as a big.Rat, compared and printed as
// the big.Rat of either would be.
type bound struct {
	n int64
	r *big.Rat // nil for an int64
}

func boundOf(v val) (bound, bool) {
	if v.kind() != jsonscan.Number {
		return bound{}, false
	}
	raw := v.number()
	digits := raw
	if raw[0] == '-' {
		digits = raw[1:]
	}
	if len(digits) <= 18 && bytes.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) < 0 {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return bound{n: n}, err == nil
	}
	r, ok := numberOf(v)
	return bound{r: r}, ok
}

func (b bound) rat() *big.Rat {
	if b.r == nil {
		return new(big.Rat).SetInt64(b.n)
	}
	return b.r
}

func (b bound) cmp(o bound) int {
	if b.r == nil && o.r == nil {
		return cmp.Compare(b.n, o.n)
	}
	return b.rat().Cmp(o.rat())
}

func (b bound) String() string {
	if b.r == nil {
		return strconv.FormatInt(b.n, 10)
	}
	return b.r.RatString()
}

func (d *differ) multipleOf(dm, sm *schemaObj, loc string) {
	dv, _ := dm.get(kwMultipleOf)
	sv, _ := sm.get(kwMultipleOf)
	if dv.kind() == jsonscan.Number && sv.kind() == jsonscan.Number && bytes.Equal(dv.number(), sv.number()) {
		return // the same spelling: the same number
	}
	dr, dHas := numberOf(dv)
	sr, sHas := numberOf(sv)
	p := func() string { return ptr(loc, "multipleOf") }
	switch {
	case !dHas && !sHas:
	case !dHas:
		d.add(ChgBoundTightened, p(), "multipleOf absent", "multipleOf "+sr.RatString())
	case !sHas:
		d.add(ChgBoundLoosened, loc, "multipleOf "+dr.RatString(), "multipleOf absent")
	case dr.Cmp(sr) == 0:
	case dr.Sign() != 0 && new(big.Rat).Quo(sr, dr).IsInt():
		d.add(ChgBoundTightened, p(), "multipleOf "+dr.RatString(), "multipleOf "+sr.RatString())
	case sr.Sign() != 0 && new(big.Rat).Quo(dr, sr).IsInt():
		d.add(ChgBoundLoosened, p(), "multipleOf "+dr.RatString(), "multipleOf "+sr.RatString())
	default:
		d.add(ChgKeywordChanged, p(), "multipleOf "+dr.RatString(), "multipleOf "+sr.RatString())
	}
}

// numberOf is number for a tree value.
func numberOf(v val) (*big.Rat, bool) {
	if v.kind() != jsonscan.Number {
		return nil, false
	}
	return new(big.Rat).SetString(string(v.number()))
}

// strings compares pattern and format.
func (d *differ) strings(dm, sm *schemaObj, loc string) {
	for _, kw := range [...]struct {
		at                           keyword
		key, added, changed, removed string
	}{
		{kwPattern, "pattern", ChgPatternAdded, ChgPatternChanged, ChgPatternRemoved},
		{kwFormat, "format", ChgFormatAdded, ChgFormatChanged, ChgFormatRemoved},
	} {
		dv, _ := dm.get(kw.at)
		sv, _ := sm.get(kw.at)
		dHas, sHas := dv.kind() == jsonscan.String, sv.kind() == jsonscan.String
		switch {
		case !dHas && !sHas:
		case !dHas:
			d.add(kw.added, ptr(loc, kw.key), kw.key+" absent", kw.key+" "+strconv.Quote(string(sv.text())))
		case !sHas:
			d.add(kw.removed, loc, kw.key+" "+strconv.Quote(string(dv.text())), kw.key+" absent")
		case !bytes.Equal(dv.text(), sv.text()):
			d.add(kw.changed, ptr(loc, kw.key), kw.key+" "+strconv.Quote(string(dv.text())), kw.key+" "+strconv.Quote(string(sv.text())))
		}
	}
}
