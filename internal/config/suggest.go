package config

import (
	"reflect"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
)

// closest returns the candidates nearest to s, or none when none is
// close: within a third of s's length (at least one, at most three edits),
// case ignored, a swap of neighbours counting as one. More than three
// equally near are no guess either.
func closest(s string, candidates []string) []string {
	limit := min(max(len(s)/3, 1), 3)
	best, at := []string(nil), limit+1
	for _, c := range candidates {
		switch d := editDistance(strings.ToLower(s), strings.ToLower(c)); {
		case d < at:
			best, at = []string{c}, d
		case d == at && !slices.Contains(best, c):
			best = append(best, c)
		}
	}
	if len(best) > 3 {
		return nil
	}
	return best
}

// didYouMean is "; did you mean X?" for the nearest candidates, or "".
func didYouMean(near []string) string {
	if len(near) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// ruleIDs and severityIDs are what an ignore's rule and a severity key may
// name, for suggestions.
var (
	ruleIDs     = catalogueIDs(false)
	severityIDs = catalogueIDs(true)
)

func catalogueIDs(withGrades bool) []string {
	var ids []string
	for _, r := range catalogue.Rules {
		ids = append(ids, r.ID)
	}
	if withGrades {
		for _, g := range catalogue.Grades {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// shapes maps a type with its own UnmarshalYAML to the struct it decodes.
var shapes = map[reflect.Type]reflect.Type{
	reflect.TypeFor[Target]():       reflect.TypeFor[plainTarget](),
	reflect.TypeFor[RegistrySD]():   reflect.TypeFor[plainRegistrySD](),
	reflect.TypeFor[SDCredential](): reflect.TypeFor[plainSDCredential](),
}

// keysAt returns the keys the mapping at path (as positions names it) in
// a document of type root may hold, or nil when it takes any key or path
// is not a known place.
func keysAt(root reflect.Type, path string) []string {
	t := root
	if t == nil {
		return nil
	}
	for path != "" {
		t = shape(t)
		var seg string
		if rest, ok := strings.CutPrefix(path, "["); ok {
			_, path, _ = strings.Cut(rest, "]")
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
		} else {
			i := strings.IndexAny(path, ".[")
			if i < 0 {
				i = len(path)
			}
			seg, path = path[:i], path[i:]
			f, ok := fieldByKey(t, seg)
			if !ok {
				return nil
			}
			t = f
		}
		path = strings.TrimPrefix(path, ".")
	}
	keys, _ := structKeys(shape(t))
	return keys
}

func shape(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := shapes[t]; ok {
		return s
	}
	return t
}

// fieldByKey is the type of the value under key in a struct or map of type t.
func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), true
	case reflect.Struct:
	default:
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlKey(f)
		switch {
		case !ok:
		case inline:
			if ft, ok := fieldByKey(shape(f.Type), key); ok {
				return ft, true
			}
		case name == key:
			return f.Type, true
		}
	}
	return nil, false
}

// structKeys lists the keys of struct type t; ok is false when t takes any
// key (an inline map, or not a struct).
func structKeys(t reflect.Type) (keys []string, ok bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, use := yamlKey(f)
		switch {
		case !use:
		case inline:
			more, ok := structKeys(shape(f.Type))
			if !ok {
				return nil, false
			}
			keys = append(keys, more...)
		default:
			keys = append(keys, name)
		}
	}
	return keys, true
}

// yamlKey is the key yaml.v3 decodes field f from.
func yamlKey(f reflect.StructField) (name string, inline, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" {
		return "", false, false
	}
	if slices.Contains(strings.Split(opts, ","), "inline") {
		return "", true, true
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, false, true
}
