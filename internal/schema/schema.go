// Package schema is driftd's JSON Schema engine: it checks that a schema
// compiles without fetching anything, diffs a declared schema against a
// served one (direction-free CHG-* changes that the catalogue grades),
// validates instances without quoting them, and generates arguments for
// tools/call. Schemas are server-controlled, so every walk is bounded in
// depth, $ref expansions and output size. Diffs, compile checks and parses
// are cached by content in a byte-bounded Cache that the program builds
// once and passes to these entry points, its methods (cache.go); a nil
// Cache computes without keeping. docs/schema-diff.md says how the diff
// and the check stay fast.
package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaptinlin/jsonschema"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/sanitize"
)

// MaxDepth bounds the nesting of a schema driftd will compile or walk.
const MaxDepth = 64

// NewCompiler is the only way driftd builds a JSON Schema compiler.
// kaptinlin/jsonschema registers HTTP and HTTPS loaders by default and would
// fetch a remote $ref while compiling; schemas are server-controlled, and the
// specification forbids dereferencing network references automatically.
func NewCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	for scheme := range c.Loaders {
		delete(c.Loaders, scheme)
	}
	return c
}

// Check reports why raw is not a usable JSON Schema, or nil. Every schema
// is compiled, each with its own compiler, so one tool's $id cannot
// shadow another's. The answer is cached by content in c: a daemon checks
// the same served schemas every run.
func (c *Cache) Check(raw []byte) error { return c.CheckSummed(jsonscan.Sum{}, raw) }

// CheckSummed is Check with raw's jsonscan.SumOf already known (mcp.Tool's
// InputSum and OutputSum; zero computes it). The answer is cached under
// the Sum: no copy of the schema is kept, and a schema seen before costs
// a lookup, without a pass over its bytes.
func (c *Cache) CheckSummed(sum jsonscan.Sum, raw []byte) error {
	if c == nil {
		return check(raw)
	}
	if sum == (jsonscan.Sum{}) {
		sum = jsonscan.SumOf(raw)
	}
	return c.check(sum, func() error { return check(raw) })
}

func check(raw []byte) error {
	if d := jsonscan.Depth(raw); d > MaxDepth {
		return fmt.Errorf("nested %d levels deep, more than driftd's bound of %d", d, MaxDepth)
	}
	c := NewCompiler()
	switch dialect := declaredDialect(raw); dialect {
	case "", jsonschema.Draft202012, jsonschema.Draft201909:
		// No offline meta-schema ships for these; Compile checks keyword shapes.
	case jsonschema.Draft7, jsonschema.Draft6, jsonschema.Draft4:
		res, err := c.ValidateSchema(raw)
		if err != nil || !res.IsValid() {
			return fmt.Errorf("does not validate against the %s meta-schema", dialect)
		}
	default:
		return fmt.Errorf("declares $schema %s, a dialect driftd does not support", clipText(strconv.Quote(string(dialect))))
	}
	schema, err := c.Compile(raw)
	if err != nil {
		return fmt.Errorf("does not compile as JSON Schema: %s", clipText(err.Error()))
	}
	refs := schema.UnresolvedReferenceURIs()
	switch {
	case len(refs) == 0:
		return nil
	case strings.HasPrefix(refs[0], "#"):
		return fmt.Errorf("local $ref %s does not resolve", clipText(strconv.Quote(refs[0])))
	}
	return fmt.Errorf("remote $ref %s is never fetched, so the schema cannot be resolved", clipText(strconv.Quote(refs[0])))
}

// declaredDialect returns the $schema a schema object declares, normalised
// to the library's dialect URIs (with or without the trailing "#").
func declaredDialect(raw []byte) jsonschema.Dialect {
	var head struct {
		Schema string `json:"$schema"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Schema == "" {
		return ""
	}
	for _, d := range []jsonschema.Dialect{jsonschema.Draft202012, jsonschema.Draft201909, jsonschema.Draft7, jsonschema.Draft6, jsonschema.Draft4} {
		if strings.TrimSuffix(head.Schema, "#") == strings.TrimSuffix(string(d), "#") {
			return d
		}
	}
	return jsonschema.Dialect(head.Schema)
}

// clipText bounds server-controlled schema text quoted in a change or an
// error, through the one sanitiser.
func clipText(s string) string { return sanitize.Clip(s, 160) }
