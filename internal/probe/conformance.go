package probe

import (
	"encoding/json"
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/schema"
)

// conformResult checks the members every modern result carries. cacheable
// results (tools/list pages) must also carry valid cache hints.
func (r *run) conformResult(what string, m mcp.ResultMeta, cacheable bool) {
	switch {
	case m.ResultType == nil:
		r.emit(catalogue.New(catalogue.ConfResultType, "", what+` has no "resultType"`))
	case *m.ResultType != "complete":
		r.emit(catalogue.New(catalogue.ConfResultType, "", fmt.Sprintf(`%s has resultType %q, not "complete"`, what, ClipName(*m.ResultType))))
	}
	if m.ServerInfo() == nil {
		r.emit(catalogue.New(catalogue.ConfServerInfo, "", what+" has no _meta "+mcp.MetaServerInfo))
	}
	if !cacheable {
		return
	}
	if problem := cacheHintProblem(m); problem != "" {
		r.emit(catalogue.New(catalogue.ConfCacheHints, "", what+" "+problem))
	}
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

// conformTools checks each served tool definition against the revision.
func (r *run) conformTools(l *listing) {
	count := map[string]int{}
	for i, t := range l.tools {
		r.evidence = l.pageEx[l.toolPage[i]]
		count[t.Name]++
		if count[t.Name] == 2 {
			r.emit(catalogue.New(catalogue.ConfDuplicateTool, t.Name, "more than one served tool has this name"))
		}
		if !validToolName(t.Name) {
			r.emit(catalogue.New(catalogue.ConfToolNameFormat, t.Name,
				fmt.Sprintf("name of %d bytes is outside 1-128 characters of A-Za-z0-9_-.", len(t.Name))))
		}
		r.conformSchemas(t)
	}
}

func (r *run) conformSchemas(t mcp.Tool) {
	in := t.InputSchema
	switch {
	case len(in) == 0 || string(in) == "null":
		r.emit(catalogue.New(catalogue.ConfInputSchema, t.Name, `has no "inputSchema"`))
	case in[0] != '{':
		r.emit(catalogue.New(catalogue.ConfInputSchema, t.Name, `"inputSchema" is not an object`))
	default:
		var root struct {
			Type json.RawMessage `json:"type"`
		}
		_ = json.Unmarshal(in, &root)
		if string(root.Type) != `"object"` {
			r.emit(catalogue.New(catalogue.ConfInputSchema, t.Name, `"inputSchema" root "type" is not "object"`))
		}
		r.checkSchema(t.Name, "input", in)
	}
	if out := t.OutputSchema; len(out) > 0 && string(out) != "null" {
		r.checkSchema(t.Name, "output", out)
	}
}

func (r *run) checkSchema(tool, direction string, raw json.RawMessage) {
	if err := schema.Check(raw); err != nil {
		f := catalogue.New(catalogue.ConfSchemaInvalid, tool, fmt.Sprintf("%sSchema %v", direction, err))
		f.Direction = direction
		r.emit(f)
	}
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
