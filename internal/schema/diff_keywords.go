package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// types compares "type", treating null on its own and integer as a subset
// of number. An absent type allows every type.
func (d *differ) types(dm, sm map[string]any, loc string) {
	dt, st := typeList(dm["type"]), typeList(sm["type"])
	_, dHas := dm["type"]
	_, sHas := sm["type"]
	if !dHas && !sHas {
		return
	}
	ptr := ptr(loc, "type")
	if !sHas {
		ptr = loc
	}
	if dHas && sHas {
		dNull, sNull := slices.Contains(dt, "null"), slices.Contains(st, "null")
		switch {
		case sNull && !dNull:
			d.add(ChgNullAdded, ptr, typeText(dt), typeText(st))
		case dNull && !sNull:
			d.add(ChgNullRemoved, ptr, typeText(dt), typeText(st))
		}
		dt, st = without(dt, "null"), without(st, "null")
		if len(dt) == 0 || len(st) == 0 {
			if len(dt) != len(st) {
				d.add(ChgTypeChanged, ptr, typeText(dt), typeText(st))
			}
			return
		}
	}
	sub := typeSubset(st, dt, sHas, dHas) // served within declared
	sup := typeSubset(dt, st, dHas, sHas) // declared within served
	switch {
	case sub && sup:
	case sub:
		d.add(ChgTypeNarrowed, ptr, typeText(dt), typeText(st))
	case sup:
		d.add(ChgTypeWidened, ptr, typeText(dt), typeText(st))
	default:
		d.add(ChgTypeChanged, ptr, typeText(dt), typeText(st))
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

func without(ts []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return t == drop })
}

func typeText(ts []string) string {
	if ts == nil {
		return "any type"
	}
	return "type " + strings.Join(ts, "|")
}

// enums compares enum and const as sets of allowed values.
func (d *differ) enums(dm, sm map[string]any, loc string) {
	dc, dConst := dm["const"]
	sc, sConst := sm["const"]
	_, dEnum := dm["enum"]
	_, sEnum := sm["enum"]
	if dConst && sConst && !dEnum && !sEnum {
		if canonValue(dc) != canonValue(sc) {
			d.add(ChgConstChanged, ptr(loc, "const"), "const "+canonValue(dc), "const "+canonValue(sc))
		}
		return
	}
	dv, dHas := allowedValues(dm)
	sv, sHas := allowedValues(sm)
	switch {
	case !dHas && !sHas:
	case !dHas:
		d.add(ChgEnumAdded, ptr(loc, enumKey(sm)), "any value", fmt.Sprintf("%d allowed values", len(sv)))
	case !sHas:
		d.add(ChgEnumRemoved, loc, fmt.Sprintf("%d allowed values", len(dv)), "any value")
	default:
		removed, added := setDiff(dv, sv), setDiff(sv, dv)
		p := ptr(loc, enumKey(sm))
		if len(removed) > 0 {
			d.add(ChgEnumValueRemoved, p, "values "+listText(removed), "no longer allowed")
		}
		if len(added) > 0 {
			d.add(ChgEnumValueAdded, p, "not allowed", "values "+listText(added)+" allowed")
		}
	}
}

func enumKey(m map[string]any) string {
	if _, ok := m["enum"]; ok {
		return "enum"
	}
	return "const"
}

// allowedValues returns the canonical values enum (or const) allows.
func allowedValues(m map[string]any) (map[string]bool, bool) {
	if arr, ok := m["enum"].([]any); ok {
		out := make(map[string]bool, len(arr))
		for _, v := range arr {
			out[canonValue(v)] = true
		}
		if c, ok := m["const"]; ok {
			cv := canonValue(c)
			return map[string]bool{cv: out[cv]}, true
		}
		return out, true
	}
	if c, ok := m["const"]; ok {
		return map[string]bool{canonValue(c): true}, true
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
// tightens) and -1 for upper bounds, and an index for a quick presence scan.
var (
	boundKeys = [...]string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains",
		"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains", "multipleOf", "uniqueItems"}
	boundSign  = [...]int{+1, +1, +1, +1, +1, +1, -1, -1, -1, -1, -1, -1, 0, 0}
	boundIndex = func() map[string]int {
		m := map[string]int{}
		for i, k := range boundKeys {
			m[k] = i
		}
		return m
	}()
)

// bounds compares numeric bounds, multipleOf and uniqueItems.
func (d *differ) bounds(dm, sm map[string]any, loc string) {
	var present [len(boundSign)]bool
	found := false
	for _, m := range []map[string]any{dm, sm} {
		for k := range m {
			if i, ok := boundIndex[k]; ok {
				present[i], found = true, true
			}
		}
	}
	if !found {
		return
	}
	for i, k := range boundKeys[:12] {
		if present[i] {
			d.bound(k, dm, sm, loc, boundSign[i])
		}
	}
	d.multipleOf(dm, sm, loc)
	du, _ := dm["uniqueItems"].(bool)
	su, _ := sm["uniqueItems"].(bool)
	switch {
	case su && !du:
		d.add(ChgBoundTightened, ptr(loc, "uniqueItems"), "uniqueItems false", "uniqueItems true")
	case du && !su:
		d.add(ChgBoundLoosened, loc, "uniqueItems true", "uniqueItems false")
	}
}

// bound compares keyword k; sign +1 for lower bounds (a larger served
// value tightens), -1 for upper bounds.
func (d *differ) bound(k string, dm, sm map[string]any, loc string, sign int) {
	if dn, ok := dm[k].(json.Number); ok {
		if sn, ok := sm[k].(json.Number); ok && dn == sn {
			return
		}
	}
	dr, dHas := number(dm[k])
	sr, sHas := number(sm[k])
	_, dPresent := dm[k]
	_, sPresent := sm[k]
	if (dPresent && !dHas) || (sPresent && !sHas) {
		return // draft-04 boolean exclusive*: compared by others()
	}
	switch {
	case !dHas && !sHas:
	case !dHas:
		d.add(ChgBoundTightened, ptr(loc, k), k+" absent", k+" "+sr.RatString())
	case !sHas:
		d.add(ChgBoundLoosened, loc, k+" "+dr.RatString(), k+" absent")
	default:
		switch c := sr.Cmp(dr) * sign; {
		case c > 0:
			d.add(ChgBoundTightened, ptr(loc, k), k+" "+dr.RatString(), k+" "+sr.RatString())
		case c < 0:
			d.add(ChgBoundLoosened, ptr(loc, k), k+" "+dr.RatString(), k+" "+sr.RatString())
		}
	}
}

func (d *differ) multipleOf(dm, sm map[string]any, loc string) {
	dr, dHas := number(dm["multipleOf"])
	sr, sHas := number(sm["multipleOf"])
	p := ptr(loc, "multipleOf")
	switch {
	case !dHas && !sHas:
	case !dHas:
		d.add(ChgBoundTightened, p, "multipleOf absent", "multipleOf "+sr.RatString())
	case !sHas:
		d.add(ChgBoundLoosened, loc, "multipleOf "+dr.RatString(), "multipleOf absent")
	case dr.Cmp(sr) == 0:
	case dr.Sign() != 0 && new(big.Rat).Quo(sr, dr).IsInt():
		d.add(ChgBoundTightened, p, "multipleOf "+dr.RatString(), "multipleOf "+sr.RatString())
	case sr.Sign() != 0 && new(big.Rat).Quo(dr, sr).IsInt():
		d.add(ChgBoundLoosened, p, "multipleOf "+dr.RatString(), "multipleOf "+sr.RatString())
	default:
		d.add(ChgKeywordChanged, p, "multipleOf "+dr.RatString(), "multipleOf "+sr.RatString())
	}
}

func number(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(string(n))
}

// strings compares pattern and format.
func (d *differ) strings(dm, sm map[string]any, loc string) {
	for _, kw := range []struct{ key, added, changed, removed string }{
		{"pattern", ChgPatternAdded, ChgPatternChanged, ChgPatternRemoved},
		{"format", ChgFormatAdded, ChgFormatChanged, ChgFormatRemoved},
	} {
		dv, dHas := dm[kw.key].(string)
		sv, sHas := sm[kw.key].(string)
		switch {
		case !dHas && !sHas:
		case !dHas:
			d.add(kw.added, ptr(loc, kw.key), kw.key+" absent", kw.key+" "+strconv.Quote(sv))
		case !sHas:
			d.add(kw.removed, loc, kw.key+" "+strconv.Quote(dv), kw.key+" absent")
		case dv != sv:
			d.add(kw.changed, ptr(loc, kw.key), kw.key+" "+strconv.Quote(dv), kw.key+" "+strconv.Quote(sv))
		}
	}
}
