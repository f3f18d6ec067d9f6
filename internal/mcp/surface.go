package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Kind names one of the lists a server serves to agents. Its values are
// the `kind` label of driftd's metrics and the `kind` of a finding.
type Kind string

// The four kinds, in manifest order.
const (
	KindTool             Kind = "tool"
	KindPrompt           Kind = "prompt"
	KindResource         Kind = "resource"
	KindResourceTemplate Kind = "resource_template"
)

// Kinds lists every kind in manifest order.
var Kinds = []Kind{KindTool, KindPrompt, KindResource, KindResourceTemplate}

// ItemKinds are the kinds other than tools: listed as Items.
var ItemKinds = []Kind{KindPrompt, KindResource, KindResourceTemplate}

// Method returns the list method of k.
func (k Kind) Method() string {
	switch k {
	case KindPrompt:
		return "prompts/list"
	case KindResource:
		return "resources/list"
	case KindResourceTemplate:
		return "resources/templates/list"
	}
	return "tools/list"
}

// Key returns the member of k's list result that holds the array, which
// is also k's member in a manifest.
func (k Kind) Key() string {
	switch k {
	case KindPrompt:
		return "prompts"
	case KindResource:
		return "resources"
	case KindResourceTemplate:
		return "resourceTemplates"
	}
	return "tools"
}

// Capability returns the server capability that advertises k.
func (k Kind) Capability() string {
	switch k {
	case KindPrompt:
		return "prompts"
	case KindResource, KindResourceTemplate:
		return "resources"
	}
	return "tools"
}

// Noun is k in words, for messages: "prompt", "resource template".
func (k Kind) Noun() string { return strings.ReplaceAll(string(k), "_", " ") }

// ParseKind reads a kind by its value or its manifest key ("prompts",
// "resourceTemplates", "resource_templates").
func ParseKind(s string) (Kind, bool) {
	for _, k := range Kinds {
		if s == string(k) || s == k.Key() || s == string(k)+"s" {
			return k, true
		}
	}
	return "", false
}

// Item is one prompt, resource or resource template, as served or
// declared. Key is its identity within its list: a prompt's and a
// template's name, a resource's uri. Raw keeps the exact definition.
type Item struct {
	Kind        Kind
	Key         string
	Name        string
	Title       string
	Description string
	// URI is a resource's uri or a template's uriTemplate.
	URI       string
	MimeType  string
	Arguments []PromptArgument
	Raw       json.RawMessage
}

// PromptArgument is one declared argument of a prompt.
type PromptArgument struct {
	Name     string
	Required bool
}

// ParseItem reads one item of kind k and returns it with the ways it
// breaks the list's shape in the spec's schema (a missing or mistyped
// required member, an argument without a name). An item whose Key is
// empty has no usable identity and is not compared. Keys are matched
// exactly (JSON keys are case-sensitive), the last of a repeated key
// winning.
func ParseItem(k Kind, raw json.RawMessage) (Item, []string) {
	it := Item{Kind: k, Raw: raw}
	uriKey := "uri"
	if k == KindResourceTemplate {
		uriKey = "uriTemplate"
	}
	m, ok := jsonscan.Members(raw)
	if !ok {
		return it, []string{"not an object"}
	}
	name, title, description, uri, mime, args := m["name"], m["title"], m["description"], m[uriKey], m["mimeType"], m["arguments"]
	var problems []string
	str := func(member string, v []byte, required bool) string {
		if v == nil || string(v) == "null" {
			if required {
				problems = append(problems, fmt.Sprintf("%q missing", member))
			}
			return ""
		}
		s, ok := jsonscan.Unquote(v)
		if !ok {
			problems = append(problems, fmt.Sprintf("%q is not a string", member))
			return ""
		}
		if s == "" && required {
			problems = append(problems, fmt.Sprintf("%q is empty", member))
		}
		return s
	}
	it.Name = str("name", name, true)
	it.Title = str("title", title, false)
	it.Description = str("description", description, false)
	switch k {
	case KindPrompt:
		it.Key = it.Name
		it.Arguments, problems = parseArguments(args, problems)
	case KindResource, KindResourceTemplate:
		it.URI = str(uriKey, uri, true)
		it.MimeType = str("mimeType", mime, false)
		it.Key = it.URI
		if k == KindResourceTemplate {
			it.Key = it.Name
		}
	}
	return it, problems
}

func parseArguments(raw []byte, problems []string) ([]PromptArgument, []string) {
	if raw == nil || string(raw) == "null" {
		return nil, problems
	}
	elems, ok := jsonscan.Elements(raw)
	if !ok {
		return nil, append(problems, `"arguments" is not an array of objects`)
	}
	out := make([]PromptArgument, 0, len(elems))
	for i, e := range elems {
		m, ok := jsonscan.Members(e)
		if !ok {
			problems = append(problems, fmt.Sprintf("arguments[%d] is not an object", i))
			continue
		}
		name, required := m["name"], m["required"]
		var arg PromptArgument
		if arg.Name, ok = jsonscan.Unquote(name); !ok || arg.Name == "" {
			problems = append(problems, fmt.Sprintf(`arguments[%d] has no "name" string`, i))
			continue
		}
		switch string(required) {
		case "", "null", "false":
		case "true":
			arg.Required = true
		default:
			problems = append(problems, fmt.Sprintf(`arguments[%d] "required" is not a boolean`, i))
		}
		out = append(out, arg)
	}
	return out, problems
}

// TemplateVariables returns the variable names of an RFC 6570 URI
// template, sorted and once each: "{+path}", "{?q,limit*}" and
// "{id:3}" name path, q, limit and id.
func TemplateVariables(tmpl string) []string {
	var out []string
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			break
		}
		expr := tmpl[open+1 : open+end]
		tmpl = tmpl[open+end+1:]
		if expr != "" && strings.ContainsRune("+#./;?&=,!@|", rune(expr[0])) {
			expr = expr[1:]
		}
		for _, v := range strings.Split(expr, ",") {
			v, _, _ = strings.Cut(v, ":")
			v = strings.TrimSuffix(v, "*")
			if v != "" {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
