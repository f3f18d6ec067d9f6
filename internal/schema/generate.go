package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// maxGenerateDepth bounds recursion through nested schemas and $refs.
const maxGenerateDepth = 24

// ErrUnsatisfiable means driftd could not build a value for a schema; the
// tool is reported, not called with a guess.
var ErrUnsatisfiable = errors.New("cannot generate arguments for this schema")

// Generate returns a value that satisfies schema, the same bytes
// for the same schema and seed. It covers types, required, enum and const,
// numeric and length bounds, multipleOf, a practical subset of pattern and
// format, nested objects and arrays, local $refs, allOf/anyOf/oneOf by
// trying branches. Every value is validated against the schema before it is
// returned; one that does not validate is ErrUnsatisfiable.
//
// The schema's parse is kept in c.
func (c *Cache) Generate(schema []byte, seed uint64) (json.RawMessage, error) {
	root, err := c.parse(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: the schema is not valid JSON", ErrUnsatisfiable)
	}
	compiled, err := NewCompiler().Compile(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: the schema does not compile", ErrUnsatisfiable)
	}
	g := &generator{doc: &doc{root: root}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	v, err := g.value(root, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsatisfiable, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsatisfiable, err)
	}
	if vs := violations(compiled.ValidateJSON(b), root, b); len(vs) > 0 {
		return nil, fmt.Errorf("%w: the generated value does not validate (%s)", ErrUnsatisfiable, vs[0])
	}
	return b, nil
}

type generator struct {
	doc *doc
	rng *rand.Rand
}

func (g *generator) value(v any, depth int) (any, error) {
	if depth > maxGenerateDepth {
		return nil, errors.New("nested too deeply")
	}
	m, ok := v.(map[string]any)
	if !ok {
		if b, isBool := v.(bool); isBool && !b {
			return nil, errors.New("the false schema allows no value")
		}
		return "driftd", nil
	}
	if ref, ok := m["$ref"].(string); ok {
		if !strings.HasPrefix(ref, "#") {
			return nil, fmt.Errorf("remote $ref %q is never fetched", ref)
		}
		target, ok := g.doc.lookup(ref[1:])
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		tm, isMap := target.(map[string]any)
		if len(m) == 1 || !isMap {
			return g.value(target, depth+1)
		}
		m = merge(m, tm)
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, s := range all {
			if sm, ok := s.(map[string]any); ok {
				m = merge(m, sm)
			}
		}
	}
	if c, ok := m["const"]; ok {
		return c, nil
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[g.rng.IntN(len(e))], nil
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if branches, ok := m[key].([]any); ok && len(branches) > 0 {
			for _, b := range branches {
				bm, _ := b.(map[string]any)
				if v, err := g.value(merge(withoutKey(m, key), bm), depth+1); err == nil {
					return v, nil
				}
			}
			return nil, fmt.Errorf("no %s branch can be satisfied", key)
		}
	}
	switch t := pickType(m); t {
	case "object":
		return g.object(m, depth)
	case "array":
		return g.array(m, depth)
	case "string":
		return g.string(m)
	case "integer", "number":
		return g.number(m, t == "integer")
	case "boolean":
		return g.rng.IntN(2) == 1, nil
	case "null":
		return nil, nil
	}
	return nil, fmt.Errorf("unsupported type")
}

// pickType chooses the type to generate: the first declared non-null one,
// else one the keywords imply, else string.
func pickType(m map[string]any) string {
	types := typeList(m["type"])
	for _, t := range types {
		if t != "null" {
			return t
		}
	}
	if len(types) > 0 {
		return "null"
	}
	switch {
	case m["properties"] != nil || m["required"] != nil:
		return "object"
	case m["items"] != nil || m["prefixItems"] != nil:
		return "array"
	case m["minimum"] != nil || m["maximum"] != nil || m["multipleOf"] != nil:
		return "number"
	}
	return "string"
}

func (g *generator) object(m map[string]any, depth int) (any, error) {
	props, _ := m["properties"].(map[string]any)
	out := map[string]any{}
	names := slices.Sorted(maps.Keys(stringSet(m["required"])))
	minProps := 0
	if n, ok := number(m["minProperties"]); ok {
		minProps = int(n.Num().Int64())
	}
	for _, name := range sortedKeys(props) {
		if len(names) >= minProps {
			break
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		var ps any = map[string]any{}
		if p, ok := props[name]; ok {
			ps = p
		} else if ap, ok := m["additionalProperties"].(map[string]any); ok {
			ps = ap
		}
		v, err := g.value(ps, depth+1)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		out[name] = v
	}
	// An optional property that is mirrored into an Mcp-Param-* header
	// (x-mcp-header on it, or on a property below it) gets a value too, so
	// that a planned call exercises the header; one that cannot be
	// generated, or that maxProperties leaves no room for, is left out.
	maxProps := math.MaxInt
	if n, ok := number(m["maxProperties"]); ok {
		maxProps = int(n.Num().Int64())
	}
	for _, name := range sortedKeys(props) {
		if _, done := out[name]; done || len(out) >= maxProps || !mirrored(props[name], 0) {
			continue
		}
		if v, err := g.value(props[name], depth+1); err == nil {
			out[name] = v
		}
	}
	return out, nil
}

// mirrored reports whether schema, or a property reached from it through
// properties alone, carries x-mcp-header.
func mirrored(schema any, depth int) bool {
	m, ok := schema.(map[string]any)
	if !ok || depth > maxGenerateDepth {
		return false
	}
	if _, ok := m["x-mcp-header"]; ok {
		return true
	}
	props, _ := m["properties"].(map[string]any)
	for _, p := range props {
		if mirrored(p, depth+1) {
			return true
		}
	}
	return false
}

func (g *generator) array(m map[string]any, depth int) (any, error) {
	prefix, _ := m["prefixItems"].([]any)
	n := len(prefix)
	if mi, ok := number(m["minItems"]); ok {
		n = max(n, int(mi.Num().Int64()))
	}
	if n > 64 {
		return nil, errors.New("minItems beyond 64")
	}
	out := make([]any, 0, n)
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		var item any = map[string]any{}
		if i < len(prefix) {
			item = prefix[i]
		} else if it, ok := m["items"]; ok {
			item = it
		}
		var v any
		var err error
		for try := 0; try < 8; try++ {
			if v, err = g.value(item, depth+1); err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			if m["uniqueItems"] != true || !seen[canonValue(v)] {
				break
			}
		}
		seen[canonValue(v)] = true
		out = append(out, v)
	}
	return out, nil
}

func (g *generator) string(m map[string]any) (any, error) {
	minLen, maxLen := 0, math.MaxInt
	if n, ok := number(m["minLength"]); ok {
		minLen = int(n.Num().Int64())
	}
	if n, ok := number(m["maxLength"]); ok {
		maxLen = int(n.Num().Int64())
	}
	fits := func(s string) bool { l := len([]rune(s)); return l >= minLen && l <= maxLen }
	if f, ok := m["format"].(string); ok {
		if s, known := formatExample(f, g.rng); known && fits(s) {
			return s, nil
		}
	}
	if p, ok := m["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, errors.New("pattern does not compile")
		}
		parsed, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return nil, errors.New("pattern does not parse")
		}
		for try := 0; try < 16; try++ {
			var b strings.Builder
			g.fromRegexp(parsed.Simplify(), &b)
			if s := b.String(); re.MatchString(s) && fits(s) {
				return s, nil
			}
		}
		return nil, errors.New("no string of the allowed length matching the pattern was found")
	}
	n := min(max(minLen, 6), maxLen)
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[g.rng.IntN(len(letters))]
	}
	return string(b), nil
}

// fromRegexp writes a string the parsed pattern matches.
func (g *generator) fromRegexp(re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) >= 2 {
			i := 2 * g.rng.IntN(len(re.Rune)/2)
			lo, hi := re.Rune[i], min(re.Rune[i+1], re.Rune[i]+25)
			b.WriteRune(lo + rune(g.rng.IntN(int(hi-lo)+1)))
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
	case syntax.OpCapture:
		g.fromRegexp(re.Sub[0], b)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.fromRegexp(s, b)
		}
	case syntax.OpAlternate:
		g.fromRegexp(re.Sub[g.rng.IntN(len(re.Sub))], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 2
			}
		}
		for i, n := 0, lo+g.rng.IntN(min(hi, lo+8)-lo+1); i < n; i++ {
			g.fromRegexp(re.Sub[0], b)
		}
	}
}

func (g *generator) number(m map[string]any, integer bool) (any, error) {
	lo, hi := big.NewRat(0, 1), big.NewRat(100, 1)
	if r, ok := number(m["minimum"]); ok {
		lo = r
		if r.Cmp(hi) > 0 {
			hi = new(big.Rat).Add(r, big.NewRat(100, 1))
		}
	}
	if r, ok := number(m["exclusiveMinimum"]); ok {
		lo = new(big.Rat).Add(r, big.NewRat(1, 1))
		if lo.Cmp(hi) > 0 {
			hi = new(big.Rat).Add(lo, big.NewRat(100, 1))
		}
	}
	if r, ok := number(m["maximum"]); ok {
		hi = r
		if _, hasMin := m["minimum"]; !hasMin && r.Cmp(lo) < 0 {
			lo = new(big.Rat).Sub(r, big.NewRat(100, 1))
		}
	}
	if r, ok := number(m["exclusiveMaximum"]); ok {
		hi = new(big.Rat).Sub(r, big.NewRat(1, 1))
	}
	step := big.NewRat(1, 1)
	if r, ok := number(m["multipleOf"]); ok && r.Sign() > 0 {
		step = r
	}
	// The smallest multiple of step at or above lo.
	k := new(big.Int).Quo(new(big.Int).Mul(lo.Num(), step.Denom()), new(big.Int).Mul(lo.Denom(), step.Num()))
	v := new(big.Rat).Mul(new(big.Rat).SetInt(k), step)
	for v.Cmp(lo) < 0 {
		v.Add(v, step)
	}
	if v.Cmp(hi) > 0 || (integer && !v.IsInt()) {
		return nil, errors.New("no number fits the bounds")
	}
	return json.Number(v.RatString()), nil
}

// formatExample returns a valid example of a format, if driftd knows it.
func formatExample(f string, rng *rand.Rand) (string, bool) {
	switch f {
	case "date-time":
		return "2026-01-02T03:04:05Z", true
	case "date":
		return "2026-01-02", true
	case "time":
		return "03:04:05Z", true
	case "email", "idn-email":
		return "driftd@example.com", true
	case "uri", "iri", "uri-reference", "iri-reference", "url":
		return "https://example.com/driftd", true
	case "hostname", "idn-hostname":
		return "example.com", true
	case "ipv4":
		return "192.0.2.1", true
	case "ipv6":
		return "2001:db8::1", true
	case "uuid":
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff), true
	case "duration":
		return "PT1M", true
	}
	return "", false
}

// merge combines two schema objects for generation: b's keywords fill in,
// properties and required are unioned.
func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range a {
		if k != "$ref" && k != "allOf" {
			out[k] = v
		}
	}
	ap, _ := a["properties"].(map[string]any)
	bp, _ := b["properties"].(map[string]any)
	if ap != nil && bp != nil {
		props := map[string]any{}
		for k, v := range bp {
			props[k] = v
		}
		for k, v := range ap {
			props[k] = v
		}
		out["properties"] = props
	}
	req := stringSet(a["required"])
	for k := range stringSet(b["required"]) {
		req[k] = true
	}
	if len(req) > 0 {
		list := make([]any, 0, len(req))
		for _, k := range slices.Sorted(maps.Keys(req)) {
			list = append(list, k)
		}
		out["required"] = list
	}
	return out
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
