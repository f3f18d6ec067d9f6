package schema

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/driftd/driftd/internal/jsonscan"
)

// object compares properties, required and additionalProperties.
func (d *differ) object(dm, sm *schemaObj, dn, sn node, depth int) {
	dp, _ := dm.get(kwProperties)
	sp, _ := sm.get(kwProperties)
	sa, sHas := sm.get(kwAdditionalProperties)
	sClosed := sa.isFalse()
	dps, sps := dp.members(), sp.members()
	onlyIn(dp, sp, dps, sps, func(m int32) {
		name := string(dp.t.key(m))
		d.changes = append(d.changes, Change{ID: ChgPropertyRemoved, Pointer: ptr(sn.loc, "properties", name),
			Declared: clipText("property " + strconv.Quote(name)), Served: "absent", Open: !sClosed})
	})
	j := 0
	for _, m := range sps {
		name := sp.t.key(m)
		for j < len(dps) && bytes.Compare(dp.t.key(dps[j]), name) < 0 {
			j++
		}
		if j == len(dps) || !bytes.Equal(dp.t.key(dps[j]), name) {
			d.add(ChgPropertyAdded, ptr(sn.loc, "properties", string(name)), "absent", "property "+strconv.Quote(string(name)))
			continue
		}
		if refFreeEqual(val{dp.t, dps[j]}, val{sp.t, m}) {
			continue // skip building pointers for the common unchanged case
		}
		d.walk(child(dn, "properties", dps[j]), child(sn, "properties", m), depth+1)
	}
	dr, _ := dm.get(kwRequired)
	sr, _ := sm.get(kwRequired)
	if !equal(dr, sr, 0) {
		var dBuf, sBuf [16][]byte
		dReq, sReq := stringsOf(dr, dBuf[:0]), stringsOf(sr, sBuf[:0])
		for _, name := range sReq {
			if _, found := slices.BinarySearchFunc(dReq, name, bytes.Compare); !found {
				q := strconv.Quote(string(name))
				d.add(ChgRequiredAdded, ptr(sn.loc, "properties", string(name)), q+" optional", q+" required")
			}
		}
		for _, name := range dReq {
			if _, found := slices.BinarySearchFunc(sReq, name, bytes.Compare); !found {
				q := strconv.Quote(string(name))
				d.add(ChgRequiredRemoved, ptr(sn.loc, "properties", string(name)), q+" required", q+" optional")
			}
		}
	}
	da, dHas := dm.get(kwAdditionalProperties)
	dClosed := da.isFalse()
	switch {
	case sClosed && !dClosed:
		d.add(ChgAdditionalClosed, ptr(sn.loc, "additionalProperties"), "additional properties allowed", "additionalProperties false")
	case dClosed && !sClosed:
		d.add(ChgAdditionalOpened, sn.loc, "additionalProperties false", "additional properties allowed")
	case dClosed && sClosed:
	case dHas || sHas:
		d.walk(node{orTrue(da, dHas), ptr(dn.loc, "additionalProperties")}, node{orTrue(sa, sHas), ptr(sn.loc, "additionalProperties")}, depth+1)
	}
}

// onlyIn calls f, in key order, for each of a's sorted members as whose
// key none of b's sorted members bs has.
func onlyIn(a, b val, as, bs []int32, f func(int32)) {
	j := 0
	for _, m := range as {
		k := a.t.key(m)
		for j < len(bs) && bytes.Compare(b.t.key(bs[j]), k) < 0 {
			j++
		}
		if j == len(bs) || !bytes.Equal(b.t.key(bs[j]), k) {
			f(m)
		}
	}
}

// array compares items and prefixItems (and draft-07 tuple items).
func (d *differ) array(dm, sm *schemaObj, dn, sn node, depth int) {
	di, dHas := dm.get(kwItems)
	si, sHas := sm.get(kwItems)
	if (dHas || sHas) && !di.isArray() && !si.isArray() {
		d.walk(node{orTrue(di, dHas), ptr(dn.loc, "items")}, node{orTrue(si, sHas), ptr(sn.loc, "items")}, depth+1)
	}
	for _, kw := range [...]struct {
		at  keyword
		key string
	}{{kwPrefixItems, "prefixItems"}, {kwItems, "items"}} {
		dv, _ := dm.get(kw.at)
		sv, _ := sm.get(kw.at)
		if !dv.isArray() && !sv.isArray() {
			continue
		}
		if dv.len() != sv.len() {
			d.add(ChgKeywordChanged, ptr(sn.loc, kw.key), kw.key+" of "+strconv.Itoa(dv.len()), kw.key+" of "+strconv.Itoa(sv.len()))
			continue
		}
		i, end := dv.span()
		j, _ := sv.span()
		for n := 0; i < end; i, j, n = dv.t.next(i), sv.t.next(j), n+1 {
			idx := strconv.Itoa(n)
			d.walk(node{val{dv.t, i}, ptr(dn.loc, kw.key, idx)}, node{val{sv.t, j}, ptr(sn.loc, kw.key, idx)}, depth+1)
		}
	}
}

// compared is every keyword compared structurally above or ignored.
var compared = set("type", "enum", "const", "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties",
	"minContains", "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains",
	"multipleOf", "uniqueItems", "pattern", "format", "properties", "required", "additionalProperties", "items", "prefixItems")

var composition = set("allOf", "anyOf", "oneOf", "not", "if", "then", "else")

// others compares every remaining keyword by canonical form: compositions
// as CHG-COMPOSITION-CHANGED, the rest as CHG-KEYWORD-CHANGED, and the
// default and description annotations.
func (d *differ) others(dm, sm val, loc string) {
	dms, sms := dm.members(), sm.members()
	i, j := 0, 0
	for i < len(dms) || j < len(sms) {
		var dv, sv val
		var dHas, sHas bool
		var k []byte
		switch c := compareKeys(dm, sm, dms, sms, i, j); {
		case c < 0:
			dv, dHas, k = val{dm.t, dms[i]}, true, dm.t.key(dms[i])
			i++
		case c > 0:
			sv, sHas, k = val{sm.t, sms[j]}, true, sm.t.key(sms[j])
			j++
		default:
			dv, sv, dHas, sHas, k = val{dm.t, dms[i]}, val{sm.t, sms[j]}, true, true, sm.t.key(sms[j])
			i++
			j++
		}
		if !dHas {
			dv = val{dm.t, absent}
		}
		if !sHas {
			sv = val{sm.t, absent}
		}
		p := func() string {
			if sHas {
				return ptr(loc, string(k))
			}
			return loc
		}
		switch {
		case string(k) == "default":
			if dHas != sHas || !sameValue(dv, sv) {
				d.add(ChgDefaultChanged, p(), presence("default", dHas), presence("default", sHas))
			}
		case string(k) == "description":
			if dHas != sHas || !sameValue(dv, sv) {
				d.add(ChgDescriptionChanged, p(), presence("description", dHas), presence("description", sHas))
			}
		case compared[string(k)] || ignoredKeywords[string(k)] || (string(k) != "x-mcp-header" && !jsonSchemaKeyword(string(k))):
		default:
			key := string(k)
			if d.canon(d.decl, key, dv, dHas) != d.canon(d.serv, key, sv, sHas) {
				id := ChgKeywordChanged
				if composition[key] {
					id = ChgCompositionChanged
				}
				d.add(id, p(), presence(key, dHas), presence(key, sHas))
			}
		}
	}
}

// compareKeys orders the next members of two sorted member lists; a
// finished list sorts last.
func compareKeys(a, b val, as, bs []int32, i, j int) int {
	switch {
	case i == len(as):
		return 1
	case j == len(bs):
		return -1
	}
	return bytes.Compare(a.t.key(as[i]), b.t.key(bs[j]))
}

// canon renders one keyword's value canonically; a failure to render
// makes the pair uncomparable.
func (d *differ) canon(side *tree, k string, v val, has bool) string {
	if !has {
		return ""
	}
	c := &canonicalizer{d: side, budget: &d.budget}
	var b bytes.Buffer
	c.keyword(k, v, 0, &b)
	if c.failed {
		d.giveUp("", "a $ref that is remote, broken, or beyond driftd's bounds")
	}
	return b.String()
}

func presence(k string, has bool) string {
	if has {
		return k + " present"
	}
	return k + " absent"
}

func orTrue(v val, has bool) val {
	if !has {
		return val{v.t, yes}
	}
	return v
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	arr, _ := v.([]any)
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out[s] = true
		}
	}
	return out
}

// stringsOf returns the distinct strings of an array, sorted, as
// stringSet's keys would be, built in buf.
func stringsOf(v val, buf [][]byte) [][]byte {
	out := buf
	if v.isArray() {
		for j, end := v.span(); j < end; j = v.t.next(j) {
			if e := (val{v.t, j}); e.kind() == jsonscan.String {
				out = append(out, e.text())
			}
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return slices.CompactFunc(out, bytes.Equal)
}

// jsonSchemaKeyword reports whether k is a JSON Schema keyword that
// constrains instances and is not compared structurally.
func jsonSchemaKeyword(k string) bool {
	switch k {
	case "$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
		"dependentSchemas", "dependentRequired", "dependencies", "patternProperties", "propertyNames",
		"unevaluatedProperties", "unevaluatedItems", "additionalItems", "contains",
		"contentEncoding", "contentMediaType", "contentSchema":
		return true
	}
	return false
}
