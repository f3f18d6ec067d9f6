package probe_test

import (
	"encoding/json"
	"fmt"

	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// prompt returns a prompt definition; args are "name" (optional) or
// "name!" (required).
func prompt(name string, args ...string) json.RawMessage {
	list := make([]map[string]any, len(args))
	for i, a := range args {
		req := a[len(a)-1] == '!'
		if req {
			a = a[:len(a)-1]
		}
		list[i] = map[string]any{"name": a, "required": req}
	}
	b, _ := json.Marshal(map[string]any{"name": name, "description": "prompt " + name, "arguments": list})
	return b
}

func resource(uri, mime string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"uri":%q,"name":"res","mimeType":%q}`, uri, mime))
}

func template(name, tmpl string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"uriTemplate":%q,"mimeType":"application/json","description":"template %s"}`, name, tmpl, name))
}

// surfaceLists are the prompts, resources and templates of surfaceClean.
func surfaceLists() (prompts, resources, templates []json.RawMessage) {
	return []json.RawMessage{prompt("summarise", "order_id!", "tone"), prompt("apology")},
		[]json.RawMessage{resource("orders://recent", "application/json")},
		[]json.RawMessage{template("order", "orders://{order_id}")}
}

// surfaceManifest is a manifest of tools a, b, c and the given lists.
func surfaceManifest(prompts, resources, templates []json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"tools": tools("a", "b", "c"), "prompts": prompts,
		"resources": resources, "resourceTemplates": templates})
	return b
}

// surface serves tools a, b, c and the surfaceLists edited by edit, and
// declares them unedited.
func surface(edit func(o *mcptest.Options)) scenario {
	p, r, tm := surfaceLists()
	s := scenario{opts: mcptest.Options{Tools: tools("a", "b", "c"), Prompts: p, Resources: r, ResourceTemplates: tm},
		manifest: surfaceManifest(p, r, tm)}
	if edit != nil {
		edit(&s.opts)
	}
	return s
}

// surfaceToolsOnly serves the surface with extra items of every kind
// against a tools-only manifest: tools-only means tools only.
var surfaceToolsOnly = func() scenario {
	s := surface(func(o *mcptest.Options) {
		o.Prompts = append(o.Prompts, prompt("extra"))
		o.Resources = append(o.Resources, resource("orders://extra", "text/plain"))
		o.ResourceTemplates = append(o.ResourceTemplates, template("extra", "x://{y}"))
	})
	s.manifest, s.declared = nil, []string{"a", "b", "c"}
	return s
}()
