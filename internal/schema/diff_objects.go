package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// object compares properties, required and additionalProperties.
func (d *differ) object(dm, sm map[string]any, dn, sn node, depth int) {
	dp, _ := dm["properties"].(map[string]any)
	sp, _ := sm["properties"].(map[string]any)
	sClosed := isFalse(sm["additionalProperties"])
	for _, name := range sortedKeys(dp) {
		if _, ok := sp[name]; !ok {
			d.changes = append(d.changes, Change{ID: ChgPropertyRemoved, Pointer: ptr(sn.loc, "properties", name),
				Declared: clipText(fmt.Sprintf("property %q", name)), Served: "absent", Open: !sClosed})
		}
	}
	for _, name := range sortedKeys(sp) {
		if _, ok := dp[name]; !ok {
			d.add(ChgPropertyAdded, ptr(sn.loc, "properties", name), "absent", fmt.Sprintf("property %q", name))
			continue
		}
		if refFreeEqual(dp[name], sp[name], 0) {
			continue // skip building pointers for the common unchanged case
		}
		d.walk(d.child(dn, "properties", name), d.child(sn, "properties", name), depth+1)
	}
	dr, sr := stringSet(dm["required"]), stringSet(sm["required"])
	for _, name := range slices.Sorted(maps.Keys(sr)) {
		if !dr[name] {
			d.add(ChgRequiredAdded, ptr(sn.loc, "properties", name), fmt.Sprintf("%q optional", name), fmt.Sprintf("%q required", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(dr)) {
		if !sr[name] {
			d.add(ChgRequiredRemoved, ptr(sn.loc, "properties", name), fmt.Sprintf("%q required", name), fmt.Sprintf("%q optional", name))
		}
	}
	da, dHas := dm["additionalProperties"]
	sa, sHas := sm["additionalProperties"]
	dClosed := isFalse(da)
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

// array compares items and prefixItems (and draft-07 tuple items).
func (d *differ) array(dm, sm map[string]any, dn, sn node, depth int) {
	di, dHas := dm["items"]
	si, sHas := sm["items"]
	_, dTuple := di.([]any)
	_, sTuple := si.([]any)
	if (dHas || sHas) && !dTuple && !sTuple {
		d.walk(node{orTrue(di, dHas), ptr(dn.loc, "items")}, node{orTrue(si, sHas), ptr(sn.loc, "items")}, depth+1)
	}
	for _, kw := range []string{"prefixItems", "items"} {
		da, _ := dm[kw].([]any)
		sa, _ := sm[kw].([]any)
		if da == nil && sa == nil {
			continue
		}
		if len(da) != len(sa) {
			d.add(ChgKeywordChanged, ptr(sn.loc, kw), fmt.Sprintf("%s of %d", kw, len(da)), fmt.Sprintf("%s of %d", kw, len(sa)))
			continue
		}
		for i := range da {
			idx := fmt.Sprint(i)
			d.walk(node{da[i], ptr(dn.loc, kw, idx)}, node{sa[i], ptr(sn.loc, kw, idx)}, depth+1)
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
func (d *differ) others(dm, sm map[string]any, loc string) {
	keys := map[string]bool{}
	for k := range dm {
		keys[k] = true
	}
	for k := range sm {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		dv, dHas := dm[k]
		sv, sHas := sm[k]
		p := loc
		if sHas {
			p = ptr(loc, k)
		}
		switch {
		case k == "default":
			if dHas != sHas || canonValue(dv) != canonValue(sv) {
				d.add(ChgDefaultChanged, p, presence("default", dHas), presence("default", sHas))
			}
		case k == "description":
			if dHas != sHas || canonValue(dv) != canonValue(sv) {
				d.add(ChgDescriptionChanged, p, presence("description", dHas), presence("description", sHas))
			}
		case compared[k] || ignoredKeywords[k] || (!jsonSchemaKeyword(k) && k != "x-mcp-header"):
		default:
			if d.canon(d.decl, k, dv, dHas) != d.canon(d.serv, k, sv, sHas) {
				id := ChgKeywordChanged
				if composition[k] {
					id = ChgCompositionChanged
				}
				d.add(id, p, presence(k, dHas), presence(k, sHas))
			}
		}
	}
}

// canon renders one keyword's value canonically; a failure to render
// makes the pair uncomparable.
func (d *differ) canon(side *doc, k string, v any, has bool) string {
	if !has {
		return ""
	}
	c := &canonicalizer{d: side, budget: d.budget, refPath: map[string]bool{}}
	var b strings.Builder
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

func isFalse(v any) bool { b, ok := v.(bool); return ok && !b }

func orTrue(v any, has bool) any {
	if !has {
		return true
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
