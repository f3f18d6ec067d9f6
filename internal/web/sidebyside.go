package web

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/sanitize"
)

// sideBySide walks the two schemas together, pairing object members by
// key and array elements by index, so that its cost is linear in the
// rows it shows (keys sorted: n·log n); it stops at the view's bounds and
// says so. Each side's text is JSON as a person reads it, every key and
// string sanitised.
func sideBySide(d, s any, okD, okS bool) ([]viewLine, bool) {
	a := &aligner{}
	a.pair(0, "", d, s, okD, okS, false, false)
	if len(a.rows) > 0 && okD != okS {
		if okD {
			a.rows[0].Served = "(absent)"
		} else {
			a.rows[0].Declared = "(absent)"
		}
	}
	if !okD && !okS {
		a.rows = []viewLine{{Declared: "(absent)", Served: "(absent)", Kind: "same"}}
	}
	return a.rows, a.cut
}

// aligner collects the view's rows up to its bounds.
type aligner struct {
	rows  []viewLine
	bytes int
	cut   bool
}

func (a *aligner) add(l viewLine) bool {
	if a.cut || len(a.rows) >= maxViewRows || a.bytes+len(l.Declared)+len(l.Served) > maxViewBytes {
		a.cut = true
		return false
	}
	a.bytes += len(l.Declared) + len(l.Served)
	a.rows = append(a.rows, l)
	return true
}

// pair adds the rows of one member (label is `"key": ` or empty) present
// on the declared side (hasD), the served side (hasS) or both.
func (a *aligner) pair(depth int, label string, d, s any, hasD, hasS, commaD, commaS bool) {
	if a.cut {
		return
	}
	switch {
	case !hasS:
		a.one(depth, label, d, commaD, "declared")
		return
	case !hasD:
		a.one(depth, label, s, commaS, "served")
		return
	}
	ind := strings.Repeat("  ", depth)
	switch dv := d.(type) {
	case map[string]any:
		if sv, ok := s.(map[string]any); ok && (len(dv) > 0 || len(sv) > 0) {
			a.add(viewLine{Declared: ind + label + "{", Served: ind + label + "{", Kind: "same"})
			keys := unionKeys(dv, sv)
			lastD, lastS := lastIn(keys, dv), lastIn(keys, sv)
			for i, k := range keys {
				cd, inD := dv[k]
				cs, inS := sv[k]
				a.pair(depth+1, jsonText(sanitize.Name(k))+": ", cd, cs, inD, inS, i < lastD, i < lastS)
			}
			a.add(viewLine{Declared: ind + "}" + comma(commaD), Served: ind + "}" + comma(commaS), Kind: "same"})
			return
		}
	case []any:
		if sv, ok := s.([]any); ok && (len(dv) > 0 || len(sv) > 0) {
			a.add(viewLine{Declared: ind + label + "[", Served: ind + label + "[", Kind: "same"})
			for i := range max(len(dv), len(sv)) {
				var cd, cs any
				if i < len(dv) {
					cd = dv[i]
				}
				if i < len(sv) {
					cs = sv[i]
				}
				a.pair(depth+1, "", cd, cs, i < len(dv), i < len(sv), i < len(dv)-1, i < len(sv)-1)
			}
			a.add(viewLine{Declared: ind + "]" + comma(commaD), Served: ind + "]" + comma(commaS), Kind: "same"})
			return
		}
	}
	// Different shapes, scalars or empty containers: each side's text,
	// row against row.
	budget := maxViewRows - len(a.rows)
	ld, ls := textLines(depth, label, d, commaD, budget), textLines(depth, label, s, commaS, budget)
	same := len(ld) == len(ls)
	for i := 0; same && i < len(ld); i++ {
		same = strings.TrimSuffix(ld[i], ",") == strings.TrimSuffix(ls[i], ",")
	}
	for i := range max(len(ld), len(ls)) {
		l := viewLine{Kind: "changed"}
		switch {
		case same:
			l.Kind = "same"
		case i >= len(ld):
			l.Kind = "served"
		case i >= len(ls):
			l.Kind = "declared"
		}
		if i < len(ld) {
			l.Declared = ld[i]
		}
		if i < len(ls) {
			l.Served = ls[i]
		}
		if !a.add(l) {
			return
		}
	}
}

// one adds the rows of a member only one side has.
func (a *aligner) one(depth int, label string, v any, trailing bool, kind string) {
	for _, line := range textLines(depth, label, v, trailing, maxViewRows-len(a.rows)) {
		l := viewLine{Kind: kind}
		if kind == "declared" {
			l.Declared = line
		} else {
			l.Served = line
		}
		if !a.add(l) {
			return
		}
	}
}

// textLines is v's text as indented JSON lines, at most limit of them.
func textLines(depth int, label string, v any, trailing bool, limit int) []string {
	var out []string
	var walk func(depth int, label string, v any, trailing bool)
	walk = func(depth int, label string, v any, trailing bool) {
		if len(out) >= limit {
			return
		}
		ind := strings.Repeat("  ", depth)
		switch n := v.(type) {
		case map[string]any:
			if len(n) == 0 {
				out = append(out, ind+label+"{}"+comma(trailing))
				return
			}
			out = append(out, ind+label+"{")
			keys := unionKeys(n, nil)
			for i, k := range keys {
				walk(depth+1, jsonText(sanitize.Name(k))+": ", n[k], i < len(keys)-1)
			}
			out = append(out, ind+"}"+comma(trailing))
		case []any:
			if len(n) == 0 {
				out = append(out, ind+label+"[]"+comma(trailing))
				return
			}
			out = append(out, ind+label+"[")
			for i, c := range n {
				walk(depth+1, "", c, i < len(n)-1)
			}
			out = append(out, ind+"]"+comma(trailing))
		default:
			out = append(out, ind+label+scalar(v)+comma(trailing))
		}
	}
	walk(depth, label, v, trailing)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// unionKeys returns the keys of a and b, sorted, each once.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// lastIn is the index in keys of the last key m has, -1 if none.
func lastIn(keys []string, m map[string]any) int {
	for i := len(keys) - 1; i >= 0; i-- {
		if _, ok := m[keys[i]]; ok {
			return i
		}
	}
	return -1
}

func comma(b bool) string {
	if b {
		return ","
	}
	return ""
}

func scalar(v any) string {
	switch n := v.(type) {
	case nil:
		return "null"
	case string:
		return jsonText(sanitize.Text(n))
	case json.Number:
		return n.String()
	case bool:
		if n {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonText quotes s as JSON does, without escaping HTML (the template
// escapes for the page).
func jsonText(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}
