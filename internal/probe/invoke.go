package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/schema"
)

// Invocation is the report's invocation section: the plan, whether it was
// executed, and the MCP-DRIFT-CALL-* findings. It never holds a value a
// tool, a prompt or a resource returned.
type Invocation struct {
	Planned []PlannedCall `json:"planned"`
	// Reads are the planned prompts/get and resources/read requests.
	Reads    []PlannedRead       `json:"reads,omitempty"`
	Executed bool                `json:"executed"`
	Seed     uint64              `json:"seed"`
	Refused  string              `json:"refused,omitempty"`
	Findings []catalogue.Finding `json:"findings"`
}

// PlannedCall is one tool of the plan and, once executed, its outcome.
type PlannedCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Error says why no arguments could be generated; the tool is not called.
	Error string `json:"error,omitempty"`
	// Outcome: result, is_error, input_required, jsonrpc_error,
	// rejected: <why> (the server refused driftd's request: -32020,
	// -32021, -32022), refused: <why> (driftd would not send it),
	// failed: <reason>, or skipped: <why>; a call retried after -32020
	// says so.
	Outcome string `json:"outcome,omitempty"`

	// excluded marks a declared tool whose x-mcp-header annotations are
	// invalid: a client must exclude it, so it is refused, never called.
	excluded bool
}

// ErrGate is the class of invocation refusals; each happens before any
// request is sent.
var ErrGate = errors.New("invocation refused")

// Plan checks the invocation gates of t and generates every argument from
// the declared manifest. It sends nothing. A gate that does not open is an
// error wrapping ErrGate.
func Plan(t config.Target, declared *manifest.Manifest) (*Invocation, error) {
	inv := t.Invoke
	plan := &Invocation{Seed: inv.Seed, Planned: []PlannedCall{}, Findings: []catalogue.Finding{}}
	if inv.Execute && !inv.Named() {
		return nil, fmt.Errorf("%w: execute with no tool, prompt or resource named is not a wildcard", ErrGate)
	}
	if inv.Execute && !inv.IKnowThisIsProduction {
		if cl := Classify(t); cl.Class != "local" && cl.Class != "dev" && cl.Class != "staging" {
			return nil, fmt.Errorf("%w: target %q classifies as %s (%s); calling its tools, getting its prompts or reading its resources needs i_know_this_is_production (--i-know-this-is-production)",
				ErrGate, t.Name, cl.Class, cl.Reason)
		}
	}
	byName := map[string]mcp.Tool{}
	if declared != nil {
		for _, tool := range declared.Tools {
			byName[tool.Name] = tool
		}
	}
	for i, name := range inv.Tools {
		tool, ok := byName[name]
		if !ok {
			// Names resolve against the declared manifest only, so a
			// server cannot offer a name and have it called.
			return nil, fmt.Errorf("%w: tool %q is not declared in the manifest", ErrGate, name)
		}
		pc := PlannedCall{Tool: name}
		if _, problems := mcp.ParamHeaders(tool.InputSchema); len(problems) > 0 {
			// Clients must exclude such a tool: it is never called.
			pc.Error, pc.excluded = "invalid x-mcp-header annotation in the declared inputSchema: "+problems[0].String(), true
			plan.Planned = append(plan.Planned, pc)
			continue
		}
		args, err := arguments(tool, inv, i)
		if err != nil {
			pc.Error = err.Error()
		} else {
			pc.Arguments = args
		}
		plan.Planned = append(plan.Planned, pc)
	}
	reads, err := planReads(inv, declared)
	if err != nil {
		return nil, err
	}
	plan.Reads = reads
	return plan, nil
}

// invoke executes the plan on s when it is gated open, checking every
// tools/call result against the declared outputSchema, then every
// prompts/get and resources/read result against the spec's shape.
func (r *run) invoke(ctx context.Context, s *mcp.Session, served *listing, items map[mcp.Kind]*itemListing) {
	inv := r.rep.Invocation
	if inv == nil || inv.Refused != "" || !r.t.Invoke.Execute {
		return
	}
	inv.Executed = true
	declared := map[string]mcp.Tool{}
	for _, t := range r.declared.Tools {
		declared[t.Name] = t
	}
	for i := range inv.Planned {
		pc := &inv.Planned[i]
		servedTool, isServed := served.tool(pc.Tool)
		switch {
		case pc.excluded:
			pc.Outcome = "refused: invalid x-mcp-header (the declared tool must be excluded)"
			continue
		case pc.Error != "":
			pc.Outcome = "skipped: no arguments could be generated"
			continue
		case !isServed:
			pc.Outcome = "skipped: not served"
			continue
		}
		pc.Outcome = r.call(ctx, s, declared[pc.Tool], servedTool, pc.Arguments)
	}
	r.invokeReads(ctx, s, items)
}

// call sends one planned tools/call and names its outcome. The
// Mcp-Param-* headers follow the served tool's x-mcp-header annotations
// (the ones the server checks); a served tool whose annotations are
// invalid is refused, never called. After a -32020 that Mcp-Param-* may
// have caused, tools/list is fetched again once and the call retried once
// with the fresh definition (2026-07-28, HTTP transport, "Custom Headers").
func (r *run) call(ctx context.Context, s *mcp.Session, declared, served mcp.Tool, args json.RawMessage) string {
	headers, ok := callHeaders(s, served)
	if !ok {
		return "refused: invalid x-mcp-header (see MCP-CONF-TOOL-HEADER-INVALID)"
	}
	res, ex, err := s.CallTool(ctx, declared.Name, args, headers)
	retried := ""
	if paramHeaderMismatch(err, headers) {
		l, lerr := r.page(ctx, s, nil, nil)
		if lerr != nil {
			return "rejected: header_mismatch; the re-fetch of tools/list failed: " + string(mcp.Classify(lerr))
		}
		fresh, still := l.tool(declared.Name)
		if !still {
			return "rejected: header_mismatch; not served after a re-fetch of tools/list"
		}
		if headers, ok = callHeaders(s, fresh); !ok {
			return "refused: invalid x-mcp-header after a re-fetch of tools/list"
		}
		res, ex, err = s.CallTool(ctx, declared.Name, args, headers)
		retried = " (after -32020: tools/list fetched again, call retried once)"
	}
	outcome, fs := checkCall(r.opts.Caches.Schema(), declared, res, err)
	r.emitFrom(ex, fs...)
	return outcome + retried
}

// callHeaders returns the Mcp-Param-* annotations of the served tool, and
// false when they are invalid. A legacy server has no such headers.
func callHeaders(s *mcp.Session, served mcp.Tool) ([]mcp.ParamHeader, bool) {
	if s.Era != mcp.EraModern {
		return nil, true
	}
	headers, problems := mcp.ParamHeaders(served.InputSchema)
	return headers, len(problems) == 0
}

// paramHeaderMismatch reports a -32020 that Mcp-Param-* may have caused:
// the request carried such headers, or the server's message names them
// (a definition that gained an annotation since it was listed).
func paramHeaderMismatch(err error, headers []mcp.ParamHeader) bool {
	var me *mcp.Error
	if !errors.As(err, &me) || me.RPC == nil || me.RPC.Code != mcp.CodeHeaderMismatch {
		return false
	}
	return len(headers) > 0 || strings.Contains(strings.ToLower(me.RPC.Message), strings.ToLower(mcp.HeaderParamPrefix))
}

// rejections name the modern errors by which a server refuses the request
// itself rather than reporting a tool failure.
var rejections = map[int]string{
	mcp.CodeHeaderMismatch:             "header_mismatch",
	mcp.CodeMissingClientCapability:    "missing_client_capability",
	mcp.CodeUnsupportedProtocolVersion: "unsupported_protocol_version",
}

// checkCall applies the MCP-DRIFT-CALL-* rules to one call and names its
// outcome. Findings describe JSON types and declared constraints only.
func checkCall(c *schema.Cache, tool mcp.Tool, res *mcp.CallResult, err error) (string, []catalogue.Finding) {
	var me *mcp.Error
	switch {
	case errors.As(err, &me) && me.RPC != nil && rejections[me.RPC.Code] != "":
		// The server refused driftd's request (its headers, capabilities
		// or version): no tool ran, so no tool failed.
		return "rejected: " + rejections[me.RPC.Code], nil
	case errors.As(err, &me) && me.RPC != nil:
		return "jsonrpc_error", one(catalogue.New(catalogue.DriftCallErrorShape, tool.Name,
			fmt.Sprintf("tools/call with generated, schema-valid arguments answered JSON-RPC error %d; tool failures SHOULD come as a result with isError: true", me.RPC.Code)))
	case err != nil:
		return "failed: " + string(mcp.Classify(err)), nil
	case res.ResultType != nil && *res.ResultType == "input_required":
		return "input_required", checkInputRequired(tool.Name, res) // reported, not pursued
	case res.IsError:
		return "is_error", nil
	}
	if len(tool.OutputSchema) == 0 || string(tool.OutputSchema) == "null" {
		return "result", nil
	}
	if len(res.StructuredContent) == 0 || string(res.StructuredContent) == "null" {
		f := catalogue.New(catalogue.DriftCallNoStructured, tool.Name, "the tool declares an outputSchema and returned no structuredContent")
		f.Direction = "output"
		return "result", one(f)
	}
	vs, verr := c.Validate(tool.OutputSchema, res.StructuredContent)
	if verr != nil {
		return "result", nil
	}
	var out []catalogue.Finding
	for _, v := range vs {
		f := catalogue.New(catalogue.DriftCallOutputSchema, tool.Name, "structuredContent "+v.String())
		f.Direction, f.Pointer = "output", v.Pointer
		out = append(out, f)
	}
	return "result", out
}

// checkInputRequired reports a tools/call answered with an
// InputRequiredResult. driftd does not pursue it: answering would mean
// answering an elicitation or sampling request on someone's behalf. The
// shape is checked (2026-07-28 schema, InputRequiredResult): at least one
// of inputRequests and requestState; requestState a string; inputRequests
// an object whose members are requests ({"method": …}); and, since driftd
// declares no client capability, no request at all may be in it. The
// finding describes sizes and known method names, never a value.
func checkInputRequired(tool string, res *mcp.CallResult) []catalogue.Finding {
	present := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	var problems []string
	state := "no requestState"
	if present(res.RequestState) {
		var s string
		if json.Unmarshal(res.RequestState, &s) != nil {
			problems = append(problems, "requestState is not a string")
			state = "a requestState"
		} else {
			state = fmt.Sprintf("a requestState of %d bytes", len(s))
		}
	}
	requests := "no inputRequests"
	if present(res.InputRequests) {
		var reqs map[string]json.RawMessage
		if json.Unmarshal(res.InputRequests, &reqs) != nil {
			problems = append(problems, "inputRequests is not an object")
			requests = "inputRequests"
		} else {
			methods := map[string]int{}
			for _, raw := range reqs {
				var req struct {
					Method *string `json:"method"`
				}
				if json.Unmarshal(raw, &req) != nil || req.Method == nil {
					methods["not a request"]++
					continue
				}
				switch *req.Method {
				case "elicitation/create", "sampling/createMessage", "roots/list":
					methods[*req.Method]++
				default:
					methods["another method"]++
				}
			}
			if methods["not a request"] > 0 {
				problems = append(problems, "an inputRequests member is not a request object with a method")
			}
			if n := len(reqs) - methods["not a request"]; n > 0 {
				problems = append(problems, fmt.Sprintf("%d input request(s) although driftd declared no client capability (clientCapabilities {}), which servers MUST NOT do", n))
			}
			requests = fmt.Sprintf("%d inputRequests (%s)", len(reqs), describeCounts(methods))
		}
	}
	if !present(res.RequestState) && !present(res.InputRequests) {
		problems = append(problems, "neither inputRequests nor requestState is present (one MUST be)")
	}
	msg := fmt.Sprintf("tools/call answered input_required with %s and %s; not pursued: driftd answers no input request on anyone's behalf", requests, state)
	f := catalogue.New(catalogue.DriftCallInputRequired, tool, msg)
	if len(problems) > 0 {
		f.Severity = catalogue.Error
		f.Message = msg + "; the InputRequiredResult breaks the spec: " + strings.Join(problems, "; ")
	}
	return one(f)
}

// describeCounts renders counts by name, sorted: "elicitation/create: 2".
func describeCounts(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// arguments are the configured arguments of the i-th planned tool, checked
// against its declared inputSchema, or else arguments generated from it.
func arguments(tool mcp.Tool, inv config.Invoke, i int) (json.RawMessage, error) {
	// No schema cache: a plan is made once per configuration load, not per
	// run, of the few schemas a target names to call; keeping their parses
	// would hold them for nothing.
	var planCache *schema.Cache
	given, ok := inv.Arguments[tool.Name]
	if !ok {
		return planCache.Generate(tool.InputSchema, inv.Seed+uint64(i))
	}
	// A null member means "not provided" (MCP: a null parameter has no
	// Mcp-Param header): it is left out, and a required one is then
	// reported missing by the schema check.
	given = maps.Clone(given)
	maps.DeleteFunc(given, func(_ string, v any) bool { return v == nil })
	b, err := json.Marshal(given)
	if err != nil {
		return nil, fmt.Errorf("configured arguments: %w", err)
	}
	if len(tool.InputSchema) > 0 {
		vs, err := planCache.Validate(tool.InputSchema, b)
		if err != nil {
			return nil, err
		}
		if len(vs) > 0 {
			return nil, fmt.Errorf("configured arguments do not match the declared inputSchema: %s", vs[0])
		}
	}
	return b, nil
}
