package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
	"github.com/driftd/driftd/internal/schema"
)

// The side-by-side view's bounds: a schema is server-controlled and may
// be of any size (in baseline mode both sides are the server's). A view
// stops after maxViewRows rows or maxViewBytes of text, and at most
// MaxSchemaViews are rendered at once (Options).
const (
	maxViewRows  = 2000
	maxViewBytes = 512 << 10
	// DefaultMaxSchemaViews is Options.MaxSchemaViews' default.
	DefaultMaxSchemaViews = 4
)

// manifestDownload is GET /api/v1/targets/{name}/manifest: the served
// tools as last recorded, as a canonical manifest, so that accepting a
// change is `curl … > manifests/x.json` and a pull request. The daemon
// records only the tools it was served, so the other lists the target's
// manifest declares (prompts, resources, templates) are carried over as
// declared: accepting a tool change never drops them from monitoring.
// X-Driftd-Carried-Over names them.
func (h *handler) manifestDownload(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	tools, err := h.src.Served(name)
	switch {
	case errors.Is(err, ErrUnknownTarget):
		apiFail(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		apiFail(w, http.StatusNotFound, "no served set recorded yet")
		return
	}
	m := &manifest.Manifest{Tools: tools}
	if declared, err := h.src.Declared(name); err == nil {
		m.Items, m.NoTools = declared.Items, declared.NoTools // read only: Canonical copies before sorting
		var carried []string
		for _, k := range mcp.ItemKinds {
			if declared.Declares(k) {
				carried = append(carried, k.Key())
			}
		}
		if len(carried) > 0 {
			w.Header().Set("X-Driftd-Carried-Over", strings.Join(carried, ", "))
		}
	}
	b, err := m.Canonical()
	if err != nil {
		apiFail(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.json"`)
	_, _ = w.Write(b)
}

// viewLine is one row of the side-by-side view.
type viewLine struct {
	Declared, Served string
	// Kind is "same", "changed", "declared" (only on the declared side)
	// or "served" (only on the served side).
	Kind string
}

type schemaPage struct {
	page
	Tool, Direction, Pointer string
	// At is the pointer actually shown: the finding's, or the nearest
	// ancestor both sides have.
	At    string
	Lines []viewLine
	Note  string
	// Cut is set when the view stopped at its bound.
	Cut     bool
	MaxRows int
}

var schemaTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("schema").Funcs(funcs).Parse(layout + `{{template "head" .}}
<h1>{{.Status.Name}} · {{.Tool}}</h1>
<p><a href="{{.Prefix}}/targets/{{.Status.Name}}">← back to the target</a></p>
<p>{{.Direction}}Schema at <code>{{.Pointer}}</code>{{if ne .At .Pointer}} (shown from <code>{{.At}}</code>){{end}}: the declared schema (manifest) on the left, the last served one on the right.</p>
{{with .Note}}<p class="dim">{{.}}</p>{{end}}
<table class="sbs"><thead><tr><th>declared</th><th>served</th></tr></thead><tbody>
{{range .Lines}}<tr class="l-{{.Kind}}"><td><pre>{{.Declared}}</pre></td><td><pre>{{.Served}}</pre></td></tr>{{end}}
</tbody></table>
{{if .Cut}}<p class="note" role="status">The schemas are larger than a page shows: the view stops after {{.MaxRows}} rows. The whole served set: <a href="{{.Prefix}}/api/v1/targets/{{.Status.Name}}/manifest">served tools as a manifest (JSON)</a>.</p>{{end}}
{{template "foot" .}}`))
})

// schemaView is GET /targets/{name}/schema?tool=&direction=&pointer=: the
// declared and the served schema of a finding side by side, differences
// highlighted, server-rendered. Every string is sanitised (bounded,
// escaped by the template), as everywhere else.
func (h *handler) schemaView(w http.ResponseWriter, r *http.Request) {
	select {
	case h.views <- struct{}{}:
		defer func() { <-h.views }()
	default:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Too many schema views are being rendered; retry in a second.", http.StatusServiceUnavailable)
		return
	}
	name := r.PathValue("name")
	st, ok := h.src.Target(name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	tool, dir, ptr := q.Get("tool"), q.Get("direction"), q.Get("pointer")
	if ptr == "" {
		ptr = "/" // the whole schema
	}
	if dir != "input" && dir != "output" {
		http.Error(w, "direction must be input or output", http.StatusBadRequest)
		return
	}
	p := schemaPage{page: page{Title: name + " · " + tool, Version: h.opts.Version, Prefix: h.prefix(), Status: st, Config: h.src.ConfigStatus()},
		Tool: sanitize.Name(tool), Direction: dir, Pointer: sanitize.Text(ptr)}
	var declared, served json.RawMessage
	var known, readBoth = false, true // the tool is declared or served; both sets were read
	if m, err := h.src.Declared(name); err == nil {
		for _, t := range m.Tools {
			if t.Name == tool {
				declared, known = schemaOf(t, dir), true
			}
		}
	} else {
		readBoth = false
		p.Note = "The manifest could not be read: " + err.Error()
	}
	if tools, err := h.src.Served(name); err == nil {
		for _, t := range tools {
			if t.Name == tool {
				served, known = schemaOf(t, dir), true
			}
		}
	} else {
		readBoth = false
		if p.Note == "" {
			p.Note = "No served set is recorded yet."
		}
	}
	if readBoth && !known {
		http.Error(w, "no tool of that name is declared or served", http.StatusNotFound)
		return
	}
	dv, sv := decode(declared), decode(served)
	p.At = showFrom(ptr, q.Get("change"))
	d, okD := resolve(dv, p.At)
	s, okS := resolve(sv, p.At)
	// A scalar alone says little: show the object around it.
	for (!okD || !okS || (!container(d) && !container(s))) && p.At != "" {
		p.At = parentPointer(p.At)
		d, okD = resolve(dv, p.At)
		s, okS = resolve(sv, p.At)
	}
	if p.At == "" {
		p.At = "/"
	}
	p.Lines, p.Cut = sideBySide(d, s, okD, okS)
	p.MaxRows = maxViewRows
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := schemaTmpl().Execute(w, p); err != nil {
		http.Error(w, "template: "+err.Error(), http.StatusInternalServerError)
	}
}

func schemaOf(t mcp.Tool, dir string) json.RawMessage {
	if dir == "output" {
		return t.OutputSchema
	}
	return t.InputSchema
}

func decode(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// resolve walks an RFC 6901 pointer as the schema engine does; "/" is the
// view's name for the whole schema, and an absent schema has nothing.
func resolve(v any, ptr string) (any, bool) {
	if v == nil {
		return nil, false
	}
	if ptr == "/" {
		ptr = ""
	}
	return schema.Lookup(v, ptr)
}

func container(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// showFrom is where the view of a change at ptr starts: a property that
// became required or optional (CHG-REQUIRED-*, pointing at the property)
// is shown from the object that holds both it and the "required" array,
// which is what changed; anything else from ptr.
func showFrom(ptr, change string) string {
	if change != schema.ChgRequiredAdded && change != schema.ChgRequiredRemoved {
		return ptr
	}
	if props := parentPointer(ptr); strings.HasSuffix(props, "/properties") {
		return parentPointer(props)
	}
	return ptr
}

func parentPointer(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return ""
}
