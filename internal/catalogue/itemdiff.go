package catalogue

import (
	"fmt"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/schema"
)

// Change ids of a resource template's uriTemplate (MCP-DRIFT-URI-TEMPLATE).
const (
	ChgURITemplateVariables = "CHG-URI-TEMPLATE-VARIABLES"
	ChgURITemplateChanged   = "CHG-URI-TEMPLATE-CHANGED"
)

// CompareItem returns the drift findings for one prompt, resource or
// resource template that is both declared (d) and served (s), matched by
// Key: a prompt's arguments graded as input, a template's uriTemplate, a
// mimeType, and the texts a model reads. The same comparison serves the
// probe and driftd diff.
func CompareItem(d, s mcp.Item) []Finding {
	var out []Finding
	switch s.Kind {
	case mcp.KindPrompt:
		out = compareArguments(s.Key, d.Arguments, s.Arguments)
	case mcp.KindResourceTemplate:
		out = compareURITemplate(s.Key, d.URI, s.URI)
		out = append(out, compareMimeType(s.Kind, s.Key, d.MimeType, s.MimeType)...)
	case mcp.KindResource:
		out = compareMimeType(s.Kind, s.Key, d.MimeType, s.MimeType)
	}
	tx := texts{kind: string(s.Kind), name: s.Key, sides: againstManifest}
	tx.add("/description", "description", d.Description, s.Description)
	tx.add("/title", "title", d.Title, s.Title)
	if s.Kind == mcp.KindResource { // keyed by uri: the name is a label
		tx.add("/name", "name", d.Name, s.Name)
	}
	return append(out, compareTexts(&tx)...)
}

// compareArguments grades each change of a prompt's arguments as an input
// change, the way a tool's inputSchema properties are graded: prompt
// arguments are what a caller sends. A new optional argument is
// compatible; a new required one, an optional one that became required,
// or a removed one (the set is closed: a caller sending it is refused or
// ignored) break callers.
func compareArguments(prompt string, declared, served []mcp.PromptArgument) []Finding {
	var out []Finding
	add := func(ch, name, msg string) {
		g := GradeOf(schema.Change{ID: ch}, Input)
		rule := DriftPromptArgumentCompatible
		if g.Breaking {
			rule = DriftPromptArgument
		}
		f := New(rule, prompt, fmt.Sprintf("argument %q %s", name, msg))
		f.Kind, f.Severity, f.Direction, f.Pointer, f.Change, f.Grade = string(mcp.KindPrompt), g.Severity, string(Input), "/arguments/"+jsonscan.EscapeToken(name), ch, g.ID
		out = append(out, f)
	}
	index := func(args []mcp.PromptArgument) map[string]mcp.PromptArgument {
		m := make(map[string]mcp.PromptArgument, len(args))
		for _, a := range args {
			if _, dup := m[a.Name]; !dup {
				m[a.Name] = a
			}
		}
		return m
	}
	declaredBy, servedBy := index(declared), index(served)
	for _, d := range declared {
		s, ok := servedBy[d.Name]
		switch {
		case !ok:
			add(schema.ChgPropertyRemoved, d.Name, "removed: callers that send it are refused or ignored")
		case !d.Required && s.Required:
			add(schema.ChgRequiredAdded, d.Name, "became required: callers that omit it are refused")
		case d.Required && !s.Required:
			add(schema.ChgRequiredRemoved, d.Name, "is no longer required")
		}
	}
	for _, s := range served {
		if _, ok := declaredBy[s.Name]; ok {
			continue
		}
		if s.Required {
			add(schema.ChgRequiredAdded, s.Name, "added, required: callers built against the manifest do not send it")
		} else {
			add(schema.ChgPropertyAdded, s.Name, "added, optional")
		}
	}
	return out
}

// compareURITemplate compares a template's uriTemplate: different
// variables, or the same variables in other literal text, both change the
// URIs a caller builds. Variable names are quoted (sanitised with the
// message); the template text is not.
func compareURITemplate(name, declared, served string) []Finding {
	if declared == served {
		return nil
	}
	dv, sv := mcp.TemplateVariables(declared), mcp.TemplateVariables(served)
	var f Finding
	if slices.Equal(dv, sv) {
		f = New(DriftURITemplate, name, fmt.Sprintf("uriTemplate changed with the same variables %s: declared %d bytes (sha256 %s), served %d bytes (sha256 %s)",
			quoteNames(dv), len(declared), digest(declared), len(served), digest(served)))
		f.Change = ChgURITemplateChanged
	} else {
		f = New(DriftURITemplate, name, fmt.Sprintf("uriTemplate variables changed: removed %s, added %s",
			quoteNames(minus(dv, sv)), quoteNames(minus(sv, dv))))
		f.Change = ChgURITemplateVariables
	}
	f.Kind, f.Pointer = string(mcp.KindResourceTemplate), "/uriTemplate"
	return []Finding{f}
}

// compareMimeType compares a resource's or template's mimeType, a short
// token that is quoted (sanitised with the message).
func compareMimeType(k mcp.Kind, name, declared, served string) []Finding {
	if declared == served {
		return nil
	}
	show := func(s string) string {
		if s == "" {
			return "none"
		}
		return fmt.Sprintf("%q", s)
	}
	f := New(DriftMimeType, name, fmt.Sprintf("mimeType declared %s, served %s", show(declared), show(served)))
	f.Kind, f.Pointer = string(k), "/mimeType"
	return []Finding{f}
}

// minus is a less b; both may be long (a template is server text).
func minus(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
