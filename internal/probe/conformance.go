package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/poison"
	"github.com/driftd/driftd/internal/sanitize"
)

// Every MCP-CONF check lives in this file: a small function that returns
// what it found. The run methods here pair each check's findings with the
// exchange they were read from (DESIGN §12).

// A resultCheck checks the members every modern result carries; what
// names the result in messages.
type resultCheck func(what string, m mcp.ResultMeta) []catalogue.Finding

// resultChecks apply to every modern result; pageChecks to tools/list
// pages, which are cacheable and so must also carry valid cache hints.
var (
	resultChecks = []resultCheck{checkResultType, checkServerInfo}
	pageChecks   = []resultCheck{checkResultType, checkServerInfo, checkCacheHints}
)

// A toolCheck checks one served tool; nth counts the served tools so far
// with its name, 1 for the first; c are the program's caches.
type toolCheck func(c *Caches, t mcp.Tool, nth int) []catalogue.Finding

var toolChecks = []toolCheck{checkDuplicateTool, checkToolNameFormat, checkInputSchema, checkSchemasCompile}

// conformResult emits the result checks of a modern result read from ex.
func (r *run) conformResult(ex *mcp.Exchange, what string, m mcp.ResultMeta, checks []resultCheck) {
	for _, check := range checks {
		r.emitFrom(ex, check(what, m)...)
	}
}

// conformListing emits the conformance of the main listing, each finding
// with the page it was read from.
func (r *run) conformListing(ctx context.Context, l *listing, modern bool) {
	if modern {
		for i, ex := range l.pageEx {
			r.conformResult(ex, fmt.Sprintf("tools/list page %d", i+1), l.meta[i], pageChecks)
		}
	}
	r.emitFrom(l.last(), checkPaginationLoop(mcp.KindTool, l.pages, l.loop)...)
	for _, i := range l.unnamed {
		r.emitFrom(l.rawExchange(i), checkToolName(i)...)
	}
	count := make(map[string]int, len(l.tools))
	r.scan = poison.NewScanner(l.tools, r.t.ShadowTools)
	quiet := QuietTool(r.opts.Caches)
	for i, t := range l.tools {
		if i%1024 == 0 && ctx.Err() != nil {
			return // past the deadline: Run reports the timeout
		}
		count[t.Name]++
		if count[t.Name] == 1 && r.declaredQuiet(i, t, quiet) {
			continue // every check below would find nothing (QuietTool)
		}
		for _, check := range toolChecks {
			r.emitFrom(l.toolExchange(i), check(r.opts.Caches, t, count[t.Name])...)
		}
		if count[t.Name] == 1 {
			r.emitFrom(l.toolExchange(i), r.scan.Tool(t)...)
		}
		if modern {
			// x-mcp-header is a rule of the 2026-07-28 HTTP transport.
			r.emitFrom(l.toolExchange(i), checkHeaderAnnotations(t)...)
		}
	}
	var declared []mcp.Tool
	if r.declared != nil && r.declared.Declares(mcp.KindTool) {
		declared = r.declared.Tools
	}
	for _, f := range poison.Names(l.tools, declared, r.t.ShadowTools) {
		r.emitFrom(l.exchangeOf(f.Tool), f)
	}
}

// declaredQuiet reports a served tool byte-identical to the declared tool
// in its place, in which the listing's checks found nothing
// (Manifest.Quiet, by quiet, QuietTool of the run's caches): they would
// find nothing again, and are not run. Most tools of most runs are such a
// tool.
func (r *run) declaredQuiet(i int, t mcp.Tool, quiet func(mcp.Tool) bool) bool {
	m := r.declared
	if m == nil || m.NoTools || i >= len(m.Tools) {
		return false
	}
	d := m.Tools[i]
	return d.Name == t.Name && bytes.Equal(d.Raw, t.Raw) && m.Quiet(i, quiet)
}

// QuietTool is the predicate of Manifest.Quiet: whether a listing's
// checks of t, the only tool of its name, find nothing — the conformance
// checks of a tool (toolChecks, checkHeaderAnnotations, which only a
// modern listing runs: a tool it flags is not quiet on either) and the
// posture prefilter (poison.Clean, which a tool the detectors would flag
// never passes). Each answer depends on t's bytes alone; c only
// remembers the schemas' compile checks.
func QuietTool(c *Caches) func(mcp.Tool) bool {
	return func(t mcp.Tool) bool {
		if !poison.Clean(t.Raw) || len(checkHeaderAnnotations(t)) > 0 {
			return false
		}
		for _, check := range toolChecks {
			if len(check(c, t, 1)) > 0 {
				return false
			}
		}
		return true
	}
}

// checkHeaderAnnotations reports a tool whose inputSchema carries an
// invalid x-mcp-header annotation: the spec has clients exclude it, and
// driftd never calls it (invoke refuses). The message names each broken
// rule and where, up to three.
func checkHeaderAnnotations(t mcp.Tool) []catalogue.Finding {
	_, problems := mcp.ParamHeaders(t.InputSchema)
	if len(problems) == 0 {
		return nil
	}
	var parts []string
	for _, p := range problems[:min(3, len(problems))] {
		parts = append(parts, p.String())
	}
	more := ""
	if len(problems) > 3 {
		more = fmt.Sprintf(" (and %d more)", len(problems)-3)
	}
	f := catalogue.New(catalogue.ConfToolHeader, t.Name, fmt.Sprintf(
		"inputSchema has %d invalid x-mcp-header annotation(s): %s%s; a conforming client excludes this tool, and driftd never calls it",
		len(problems), strings.Join(parts, "; "), more))
	f.Direction, f.Pointer = "input", problems[0].Where
	return one(f)
}

func checkResultType(what string, m mcp.ResultMeta) []catalogue.Finding {
	switch {
	case m.ResultType == nil:
		return one(catalogue.New(catalogue.ConfResultType, "", what+` has no "resultType"`))
	case *m.ResultType != "complete":
		return one(catalogue.New(catalogue.ConfResultType, "", fmt.Sprintf(`%s has resultType %q, not "complete"`, what, sanitize.Name(*m.ResultType))))
	}
	return nil
}

func checkServerInfo(what string, m mcp.ResultMeta) []catalogue.Finding {
	if m.ServerInfo() == nil {
		return one(catalogue.New(catalogue.ConfServerInfo, "", what+" has no _meta "+mcp.MetaServerInfo))
	}
	return nil
}

func checkCacheHints(what string, m mcp.ResultMeta) []catalogue.Finding {
	if problem := cacheHintProblem(m); problem != "" {
		return one(catalogue.New(catalogue.ConfCacheHints, "", what+" "+problem))
	}
	return nil
}

func cacheHintProblem(m mcp.ResultMeta) string {
	if m.TTLMs == nil {
		return `has no "ttlMs"`
	}
	var ttl int64
	if err := json.Unmarshal(*m.TTLMs, &ttl); err != nil {
		return `has a "ttlMs" that is not an integer`
	}
	if ttl < 0 {
		return fmt.Sprintf(`has a negative "ttlMs" (%d)`, ttl)
	}
	if m.CacheScope == nil {
		return `has no "cacheScope"`
	}
	var scope string
	if err := json.Unmarshal(*m.CacheScope, &scope); err != nil || (scope != "public" && scope != "private") {
		return `has a "cacheScope" that is neither "public" nor "private"`
	}
	return ""
}

// checkPaginationLoop reports a listing of k that stopped on a repeated
// cursor after pages pages.
func checkPaginationLoop(k mcp.Kind, pages int, loop bool) []catalogue.Finding {
	if !loop {
		return nil
	}
	return kinded(k, catalogue.New(catalogue.ConfPaginationLoop, "",
		fmt.Sprintf("%s page %d returned a nextCursor already seen; paging stopped", k.Method(), pages)))
}

// checkToolName reports served tools[i], which has no usable name: each
// such tool is its own finding, identified by its position in the served
// list (the pointer), since it has no name to be told apart by.
func checkToolName(i int) []catalogue.Finding {
	f := catalogue.New(catalogue.ConfToolName, "", fmt.Sprintf("served tools[%d] has no usable name (missing, null, empty or not a string); no client can call it", i))
	f.Pointer = fmt.Sprintf("/tools/%d", i)
	return one(f)
}

func checkDuplicateTool(_ *Caches, t mcp.Tool, nth int) []catalogue.Finding {
	if nth == 2 {
		return one(catalogue.New(catalogue.ConfDuplicateTool, t.Name, "more than one served tool has this name"))
	}
	return nil
}

func checkToolNameFormat(_ *Caches, t mcp.Tool, _ int) []catalogue.Finding {
	if !validToolName(t.Name) {
		return one(catalogue.New(catalogue.ConfToolNameFormat, t.Name,
			fmt.Sprintf("name of %d bytes is outside 1-128 characters of A-Za-z0-9_-.", len(t.Name))))
	}
	return nil
}

// validToolName applies the SHOULD of SEP-986: 1-128 of A-Za-z0-9_-.
func validToolName(name string) bool {
	if len(name) < 1 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func checkInputSchema(c *Caches, t mcp.Tool, _ int) []catalogue.Finding {
	in := t.InputSchema
	switch {
	case len(in) == 0 || string(in) == "null":
		return one(catalogue.New(catalogue.ConfInputSchema, t.Name, `has no "inputSchema"`))
	case in[0] != '{':
		return one(catalogue.New(catalogue.ConfInputSchema, t.Name, `"inputSchema" is not an object`))
	}
	// JSON Schema keywords are case-sensitive: "type" exactly, the last
	// one when repeated, as a JSON parser reads duplicates.
	if !c.rootIsObject(in, t.InputSum) {
		return one(catalogue.New(catalogue.ConfInputSchema, t.Name, `"inputSchema" root "type" is not "object"`))
	}
	return nil
}

// rootIsObject reports whether the schema in, of Sum sum (zero for a
// definition built by hand), has the root "type" "object". The answer is
// remembered in c under the Sum: finding the last "type" member reads the
// whole schema, 4 % of the 10,000-target benchmark's CPU, for an answer
// that holds as long as the bytes do.
func (c *Caches) rootIsObject(in json.RawMessage, sum jsonscan.Sum) bool {
	is := func() bool {
		m, _ := jsonscan.Members(in)
		return string(m["type"]) == `"object"`
	}
	if sum == (jsonscan.Sum{}) {
		return is()
	}
	return c.roots().Do(sum, is)
}

// checkSchemasCompile compiles an input schema that is an object (the rest
// is checkInputSchema's) and any output schema.
func checkSchemasCompile(c *Caches, t mcp.Tool, _ int) []catalogue.Finding {
	var out []catalogue.Finding
	for _, s := range []struct {
		direction string
		raw       json.RawMessage
		sum       jsonscan.Sum
		compiled  bool
	}{
		{"input", t.InputSchema, t.InputSum, len(t.InputSchema) > 0 && t.InputSchema[0] == '{'},
		{"output", t.OutputSchema, t.OutputSum, len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null"},
	} {
		if !s.compiled {
			continue
		}
		if err := c.Schema().CheckSummed(s.sum, s.raw); err != nil {
			f := catalogue.New(catalogue.ConfSchemaInvalid, t.Name, fmt.Sprintf("%sSchema %v", s.direction, err))
			f.Direction = s.direction
			out = append(out, f)
		}
	}
	return out
}

// checkToolsetStable compares the names (keys) of k a second connection
// listed (b) with the first listing's (a), and names the outcome.
func checkToolsetStable(k mcp.Kind, a, b []string) (string, []catalogue.Finding) {
	switch {
	case !sameSet(a, b):
		onlyFirst, onlySecond := setMinus(a, b), setMinus(b, a)
		return "set_varies", kinded(k, catalogue.New(catalogue.ConfToolsetVaries, "",
			fmt.Sprintf("a second connection served a different %s set: %d %ss only on the first (%s), %d only on the second (%s)",
				k.Noun(), len(onlyFirst), k.Noun(), quoteList(onlyFirst), len(onlySecond), quoteList(onlySecond))))
	case !slices.Equal(a, b):
		return "order_varies", kinded(k, catalogue.New(catalogue.ConfOrderVaries, "",
			fmt.Sprintf("a second connection served the same %ss in a different order (%s SHOULD be deterministic)", k.Noun(), k.Method())))
	}
	return "same", nil
}

// kinded returns f as one finding, about a list of k: a tool finding
// carries no kind, so its identity and fingerprint stay what they were.
func kinded(k mcp.Kind, f catalogue.Finding) []catalogue.Finding {
	if k != mcp.KindTool {
		f.Kind = string(k)
	}
	return one(f)
}

// checkRedirect reports a request answered with a redirect, which driftd
// never follows.
func checkRedirect(err error) []catalogue.Finding {
	var me *mcp.Error
	if errors.As(err, &me) && me.IsRedirect() {
		return one(catalogue.New(catalogue.ConfRedirect, "",
			fmt.Sprintf("%s answered HTTP %d redirect to %s; driftd never follows redirects", me.Method, me.Status, describeLocation(me.Location))))
	}
	return nil
}

func one(f catalogue.Finding) []catalogue.Finding { return []catalogue.Finding{f} }
