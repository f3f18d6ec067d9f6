package probe

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
)

// PlannedRead is one prompts/get or resources/read of the plan and, once
// executed, its outcome. It never holds what the server returned: only
// the outcome, the number of messages or contents, and the result's size.
type PlannedRead struct {
	// Kind is "prompt" (prompts/get) or "resource" (resources/read).
	Kind string `json:"kind"`
	// Name is the prompt's name or the resource's uri, as declared.
	Name string `json:"name"`
	// Arguments are a prompt's arguments: given, or generated from the
	// seed for a required argument without a given value.
	Arguments map[string]string `json:"arguments,omitempty"`
	// Error says why the plan will not send it.
	Error string `json:"error,omitempty"`
	// Outcome: result, input_required, jsonrpc_error, rejected: <why>,
	// failed: <reason>, or skipped: <why>.
	Outcome string `json:"outcome,omitempty"`
	// Items is the number of messages (prompts/get) or contents
	// (resources/read) of a result; Bytes its size as received.
	Items *int `json:"items,omitempty"`
	Bytes int  `json:"bytes,omitempty"`
}

// method is the request a planned read sends.
func (pr PlannedRead) method() string {
	if pr.Kind == string(mcp.KindPrompt) {
		return "prompts/get"
	}
	return "resources/read"
}

// planReads resolves the prompts and resources inv names against the
// declared manifest, exactly, and gives every declared required prompt
// argument a value. A name or uri that is not declared refuses the plan.
func planReads(inv config.Invoke, declared *manifest.Manifest) ([]PlannedRead, error) {
	byKey := func(k mcp.Kind) map[string]mcp.Item {
		m := map[string]mcp.Item{}
		if declared != nil {
			for _, it := range declared.Items[k] {
				m[it.Key] = it
			}
		}
		return m
	}
	prompts, resources := byKey(mcp.KindPrompt), byKey(mcp.KindResource)
	var out []PlannedRead
	for _, name := range inv.Prompts {
		p, ok := prompts[name]
		if !ok {
			// As for tools: a server must not be able to offer a name
			// and have it fetched.
			return nil, fmt.Errorf("%w: prompt %q is not declared in the manifest", ErrGate, name)
		}
		pr := PlannedRead{Kind: string(mcp.KindPrompt), Name: name}
		pr.Arguments, pr.Error = promptArguments(p, inv.PromptArguments[name], inv.Seed)
		out = append(out, pr)
	}
	for _, uri := range inv.Resources {
		if _, ok := resources[uri]; !ok {
			return nil, fmt.Errorf("%w: resource %q is not declared in the manifest", ErrGate, uri)
		}
		out = append(out, PlannedRead{Kind: string(mcp.KindResource), Name: uri})
	}
	return out, nil
}

// promptArguments are the given arguments of the declared prompt p, with a
// value generated from seed for each required argument not given. A given
// name p does not declare is an error: the prompt is not fetched.
func promptArguments(p mcp.Item, given map[string]string, seed uint64) (map[string]string, string) {
	declared := map[string]bool{}
	for _, a := range p.Arguments {
		declared[a.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if !declared[name] {
			return nil, fmt.Sprintf("argument %q is not declared by the prompt", name)
		}
	}
	args := maps.Clone(given)
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; ok || !a.Required {
			continue
		}
		if args == nil {
			args = map[string]string{}
		}
		args[a.Name] = generatedString(seed, p.Name, a.Name)
	}
	return args, ""
}

// generatedString is a deterministic argument value: the same seed, prompt
// and argument give the same string.
func generatedString(seed uint64, prompt, arg string) string {
	h := fnv.New64a()
	_ = binary.Write(h, binary.BigEndian, seed)
	h.Write([]byte(prompt + "\x00" + arg))
	return fmt.Sprintf("driftd-%016x", h.Sum64())
}

// invokeReads sends the planned prompts/get and resources/read requests
// of a plan gated open. A declared item that is not served is skipped.
func (r *run) invokeReads(ctx context.Context, s *mcp.Session, items map[mcp.Kind]*itemListing) {
	inv := r.rep.Invocation
	for i := range inv.Reads {
		pr := &inv.Reads[i]
		k := mcp.Kind(pr.Kind)
		switch {
		case pr.Error != "":
			pr.Outcome = "skipped: " + pr.Error
			continue
		case !servedItem(items[k], pr.Name):
			pr.Outcome = "skipped: not served"
			continue
		case ctx.Err() != nil:
			pr.Outcome = "skipped: the run's deadline passed"
			continue
		}
		var res *mcp.ReadResult
		var ex *mcp.Exchange
		var err error
		if k == mcp.KindPrompt {
			res, ex, err = s.GetPrompt(ctx, pr.Name, pr.Arguments)
		} else {
			res, ex, err = s.ReadResource(ctx, pr.Name)
		}
		var fs []catalogue.Finding
		pr.Outcome, fs = checkRead(*pr, s.Era == mcp.EraModern, res, err)
		if res != nil {
			pr.Bytes = len(res.Result)
			if n, ok := countOf(res, k); ok {
				pr.Items = &n
			}
		}
		r.emitFrom(ex, fs...)
	}
}

func servedItem(l *itemListing, key string) bool {
	if l == nil {
		return false
	}
	return slices.ContainsFunc(l.items, func(it mcp.Item) bool { return it.Key == key })
}

// countOf is the number of messages or contents of a result.
func countOf(res *mcp.ReadResult, k mcp.Kind) (int, bool) {
	members, _ := jsonscan.Members(res.Result)
	elems, ok := jsonscan.Elements(members[resultKey(k)])
	return len(elems), ok
}

func resultKey(k mcp.Kind) string {
	if k == mcp.KindPrompt {
		return "messages"
	}
	return "contents"
}

// checkRead names the outcome of one prompts/get or resources/read and
// checks its result: its shape, and on a modern server its resultType
// and, for resources/read, its cache hints. Findings describe shapes,
// positions and counts, never a value the server returned.
func checkRead(pr PlannedRead, modern bool, res *mcp.ReadResult, err error) (string, []catalogue.Finding) {
	var me *mcp.Error
	switch {
	case errors.As(err, &me) && me.RPC != nil && rejections[me.RPC.Code] != "":
		return "rejected: " + rejections[me.RPC.Code], nil
	case errors.As(err, &me) && me.RPC != nil:
		// The spec's way to fail a get or a read: recorded, the
		// server's message is not.
		return fmt.Sprintf("jsonrpc_error %d", me.RPC.Code), nil
	case err != nil:
		return "failed: " + string(mcp.Classify(err)), nil
	case res.ResultType != nil && *res.ResultType == "input_required":
		return "input_required", nil // recorded, never pursued
	}
	what := fmt.Sprintf("the %s result for %s", pr.method(), pr.Name)
	var out []catalogue.Finding
	if modern {
		out = append(out, checkResultType(what, res.ResultMeta)...)
		if pr.Kind == string(mcp.KindResource) {
			out = append(out, checkCacheHints(what, res.ResultMeta)...)
		}
		// Named by the prompt or resource, these stand apart from the
		// same rule's list-page findings.
		for i := range out {
			out[i].Tool, out[i].Kind = pr.Name, pr.Kind
		}
	}
	if pr.Kind == string(mcp.KindPrompt) {
		out = append(out, checkGetResult(pr.Name, res)...)
	} else {
		out = append(out, checkReadResult(pr.Name, res)...)
	}
	return "result", out
}

// maxShapeProblems bounds the problems one shape finding lists.
const maxShapeProblems = 5

func shapeFinding(rule, kind, name, method string, problems []string) []catalogue.Finding {
	if len(problems) == 0 {
		return nil
	}
	listed := problems[:min(len(problems), maxShapeProblems)]
	msg := fmt.Sprintf("the %s result breaks the spec's shape: %s", method, strings.Join(listed, "; "))
	if more := len(problems) - len(listed); more > 0 {
		msg += fmt.Sprintf("; %d more", more)
	}
	f := catalogue.New(rule, name, msg)
	f.Kind = kind
	return one(f)
}

// checkGetResult holds a prompts/get result to GetPromptResult: a
// "messages" array of {role: "user" | "assistant", content: {type, …}},
// and a string description if any.
func checkGetResult(name string, res *mcp.ReadResult) []catalogue.Finding {
	members, _ := jsonscan.Members(res.Result)
	var problems []string
	if d, ok := members["description"]; ok && string(d) != "null" && !isString(d) {
		problems = append(problems, `"description" is not a string`)
	}
	msgs, ok := jsonscan.Elements(members["messages"])
	if !ok {
		problems = append(problems, `"messages" is missing or not an array`)
	}
	for i, m := range msgs {
		fields, ok := jsonscan.Members(m)
		if !ok {
			problems = append(problems, fmt.Sprintf("messages[%d] is not an object", i))
			continue
		}
		if role, _ := jsonscan.Unquote(fields["role"]); role != "user" && role != "assistant" {
			problems = append(problems, fmt.Sprintf(`messages[%d].role is not "user" or "assistant"`, i))
		}
		content, ok := jsonscan.Members(fields["content"])
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf(`messages[%d].content is missing or not an object`, i))
		case !isString(content["type"]):
			problems = append(problems, fmt.Sprintf(`messages[%d].content has no "type" string`, i))
		}
	}
	return shapeFinding(catalogue.ConfGetResultShape, string(mcp.KindPrompt), name, "prompts/get", problems)
}

// checkReadResult holds a resources/read result to ReadResourceResult: a
// "contents" array of items with a "uri" string and exactly one of "text"
// (a string) or "blob" (a base64 string).
func checkReadResult(uri string, res *mcp.ReadResult) []catalogue.Finding {
	members, _ := jsonscan.Members(res.Result)
	var problems []string
	contents, ok := jsonscan.Elements(members["contents"])
	if !ok {
		problems = append(problems, `"contents" is missing or not an array`)
	}
	for i, c := range contents {
		fields, ok := jsonscan.Members(c)
		if !ok {
			problems = append(problems, fmt.Sprintf("contents[%d] is not an object", i))
			continue
		}
		if !isString(fields["uri"]) {
			problems = append(problems, fmt.Sprintf(`contents[%d] has no "uri" string`, i))
		}
		if mt, ok := fields["mimeType"]; ok && string(mt) != "null" && !isString(mt) {
			problems = append(problems, fmt.Sprintf(`contents[%d].mimeType is not a string`, i))
		}
		text, hasText := fields["text"]
		blob, hasBlob := fields["blob"]
		switch {
		case hasText == hasBlob:
			problems = append(problems, fmt.Sprintf(`contents[%d] has %s of "text" and "blob" (exactly one is required)`, i, map[bool]string{true: "both", false: "neither"}[hasText]))
		case hasText && !isString(text):
			problems = append(problems, fmt.Sprintf(`contents[%d].text is not a string`, i))
		case hasBlob && !isBase64(blob):
			problems = append(problems, fmt.Sprintf(`contents[%d].blob is not a base64 string`, i))
		}
	}
	return shapeFinding(catalogue.ConfReadResultShape, string(mcp.KindResource), uri, "resources/read", problems)
}

func isString(raw []byte) bool {
	_, ok := jsonscan.Unquote(raw)
	return ok
}

func isBase64(raw []byte) bool {
	s, ok := jsonscan.Unquote(raw)
	if !ok {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}
