package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/schema"
)

// Invocation is the report's invocation section: the plan, whether it was
// executed, and the MCP-DRIFT-CALL-* findings. It never holds a value a
// tool returned.
type Invocation struct {
	Planned  []PlannedCall       `json:"planned"`
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
	// failed: <reason>, or skipped: <why>.
	Outcome string `json:"outcome,omitempty"`
}

// ErrGate is the class of invocation refusals; each happens before any
// request is sent.
var ErrGate = errors.New("tools/call refused")

// Plan checks the invocation gates of t and generates every argument from
// the declared manifest. It sends nothing. A gate that does not open is an
// error wrapping ErrGate.
func Plan(t config.Target, declared *manifest.Manifest) (*Invocation, error) {
	inv := t.Invoke
	plan := &Invocation{Seed: inv.Seed, Planned: []PlannedCall{}, Findings: []catalogue.Finding{}}
	if inv.Execute && len(inv.Tools) == 0 {
		return nil, fmt.Errorf("%w: execute with no tool named is not a wildcard", ErrGate)
	}
	if inv.Execute && !inv.IKnowThisIsProduction {
		if cl := Classify(t); cl.Class != "local" && cl.Class != "dev" && cl.Class != "staging" {
			return nil, fmt.Errorf("%w: target %q classifies as %s (%s); calling its tools needs i_know_this_is_production (--i-know-this-is-production)",
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
		args, err := schema.Generate(tool.InputSchema, inv.Seed+uint64(i))
		if err != nil {
			pc.Error = err.Error()
		} else {
			pc.Arguments = args
		}
		plan.Planned = append(plan.Planned, pc)
	}
	return plan, nil
}

// invoke executes the plan on s when it is gated open, checking every result
// against the declared outputSchema.
func (r *run) invoke(ctx context.Context, s *mcp.Session, served *listing) {
	inv := r.rep.Invocation
	if inv == nil || inv.Refused != "" || !r.t.Invoke.Execute {
		return
	}
	inv.Executed = true
	servedSet := nameSet(served.names())
	declared := map[string]mcp.Tool{}
	for _, t := range r.declared.Tools {
		declared[t.Name] = t
	}
	for i := range inv.Planned {
		pc := &inv.Planned[i]
		switch {
		case pc.Error != "":
			pc.Outcome = "skipped: no arguments could be generated"
			continue
		case !servedSet[pc.Tool]:
			pc.Outcome = "skipped: not served"
			continue
		}
		res, ex, err := s.CallTool(ctx, pc.Tool, pc.Arguments)
		outcome, fs := checkCall(declared[pc.Tool], res, err)
		pc.Outcome = outcome
		r.emitFrom(ex, fs...)
	}
}

// checkCall applies the MCP-DRIFT-CALL-* rules to one call and names its
// outcome. Findings describe JSON types and declared constraints only.
func checkCall(tool mcp.Tool, res *mcp.CallResult, err error) (string, []catalogue.Finding) {
	var me *mcp.Error
	switch {
	case errors.As(err, &me) && me.RPC != nil:
		return "jsonrpc_error", one(catalogue.New(catalogue.DriftCallErrorShape, tool.Name,
			fmt.Sprintf("tools/call with generated, schema-valid arguments answered JSON-RPC error %d; tool failures SHOULD come as a result with isError: true", me.RPC.Code)))
	case err != nil:
		return "failed: " + string(mcp.Classify(err)), nil
	case res.ResultType != nil && *res.ResultType == "input_required":
		return "input_required", nil // reported, not pursued
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
	vs, verr := schema.Validate(tool.OutputSchema, res.StructuredContent)
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
