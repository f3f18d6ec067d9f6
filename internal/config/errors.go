package config

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a config file, printed FILE:LINE: FIELD: message.
type Error struct {
	File  string
	Line  int    // 1-based; 0 when yaml did not say
	Field string // e.g. targets[1].name; empty when the problem has no field
	Msg   string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// positions indexes a parsed document by field path, so that errors found
// in decoded values can name their line, and yaml's "line N: …" errors can
// name their field.
type positions struct {
	keyLine map[string]int    // path → line of its key (of the item, in a sequence)
	byValue map[[2]int]string // line, column of a value node → its path
	byLine  map[int][]located // what starts on each line
	root    reflect.Type      // the document's Go type, for the keys valid at a path
}

type located struct{ path, key, value string }

func indexPositions(root *yaml.Node, typ reflect.Type) *positions {
	p := &positions{keyLine: map[string]int{}, byValue: map[[2]int]string{}, byLine: map[int][]located{}, root: typ}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		p.walk(root.Content[0], "")
	}
	return p
}

func (p *positions) walk(n *yaml.Node, at string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if at != "" {
				path = at + "." + k.Value
			}
			p.record(path, k.Value, k, v)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p.record(fmt.Sprintf("%s[%d]", at, i), "", v, v)
		}
	}
}

// record notes a key (or sequence item) k with value v. Aliases are not
// followed: their anchor is indexed where it is written.
func (p *positions) record(path, key string, k, v *yaml.Node) {
	if _, dup := p.keyLine[path]; !dup {
		p.keyLine[path] = k.Line
	}
	p.byValue[[2]int{v.Line, v.Column}] = path
	value := ""
	if v.Kind == yaml.ScalarNode {
		value = v.Value
	}
	p.byLine[k.Line] = append(p.byLine[k.Line], located{path, key, value})
	if v.Line != k.Line {
		p.byLine[v.Line] = append(p.byLine[v.Line], located{path, key, value})
	}
	p.walk(v, path)
}

// line is the line of path's key, or of its nearest written ancestor: a
// missing field is reported where its parent is.
func (p *positions) line(path string) int {
	for path != "" {
		if l, ok := p.keyLine[path]; ok {
			return l
		}
		path = parent(path)
	}
	return 0
}

// parent is the path of the mapping or sequence holding path.
func parent(path string) string {
	return path[:max(strings.LastIndexAny(path, ".["), 0)]
}

// Patterns are compiled on first use, not at start (a one-shot
// `driftd check` pays for none it does not use), here and elsewhere.
var (
	yamlLine   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^line (\d+): (?:column (\d+): )?(.*)$`) })
	unknownKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^field (.+?) not found in type `) })
	dupKey     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mapping key (".*") already defined at line (\d+)$`) })
	dupField   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^field (.+?) already set in type `) })
	badValue   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^cannot unmarshal (\\S+)(?: `(.*)`)? into (.+)$") })
)

// describe names a Go type the way the file's author thinks of it.
func describe(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"), strings.HasPrefix(goType, "config.List["):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping"
	}
	if d, ok := map[string]string{
		"config.Config":             "a mapping of global and targets",
		"config.Global":             "a mapping (the global section)",
		"config.plainTarget":        "a mapping (a target)",
		"config.ClassificationRule": "a mapping of match and class",
		"catalogue.Ignore":          "a mapping (an ignore entry)",
		"time.Duration":             "a duration such as 30s",
		"int":                       "an integer",
		"float64":                   "a number",
		"bool":                      "true or false",
		"string":                    "a string",
	}[goType]; ok {
		return d
	}
	return goType
}

// collector gathers a file's problems.
type collector struct {
	file string
	pos  *positions
	errs []*Error
	bad  []string // fields yaml could not decode: checks of what is under them are noise
	// misspelt are fields missing because an unknown key is their typo:
	// a check of the field itself is noise.
	misspelt []string
}

// decodeError adds one of yaml's "line N: …" type errors, finding the
// field it is about.
func (c *collector) decodeError(s string) {
	m := yamlLine().FindStringSubmatch(s)
	if m == nil {
		c.errs = append(c.errs, &Error{File: c.file, Msg: s})
		return
	}
	e := &Error{File: c.file, Msg: m[3]}
	e.Line, _ = strconv.Atoi(m[1])
	if col, err := strconv.Atoi(m[2]); err == nil {
		// From nodeError: the exact value node.
		e.Field = c.pos.byValue[[2]int{e.Line, col}]
		if l := c.pos.line(e.Field); l > 0 {
			e.Line = l
		}
	} else {
		var meant string
		e.Field, e.Msg, meant = c.pos.guess(e.Line, m[3])
		if _, written := c.pos.keyLine[meant]; meant != "" && !written {
			// "name: required" besides "nmae: unknown field; did you mean
			// name?" would be the same mistake twice.
			c.misspelt = append(c.misspelt, meant)
		}
	}
	switch {
	case strings.HasPrefix(e.Msg, "duplicate key"):
		// yaml decodes nothing of a mapping with a duplicate key.
		c.bad = append(c.bad, parent(e.Field))
	case e.Field != "":
		c.bad = append(c.bad, e.Field)
	}
	c.errs = append(c.errs, e)
}

// guess picks the field on line a yaml error names, by the key or value
// the message quotes, and rewords the messages that name Go types. For an
// unknown key close to one valid key, meant is that key's path.
func (p *positions) guess(line int, msg string) (field, newMsg, meant string) {
	on := p.byLine[line]
	pick := func(match func(located) bool) string {
		for _, l := range on {
			if match(l) {
				return l.path
			}
		}
		if len(on) > 0 {
			return on[0].path
		}
		return ""
	}
	if m := unknownKey().FindStringSubmatch(msg); m != nil {
		field := pick(func(l located) bool { return l.key == m[1] })
		at := parent(field)
		if field != at+"."+m[1] && (at != "" || field != m[1]) {
			return field, "unknown field", ""
		}
		keys := keysAt(p.root, at)
		near := closest(m[1], keys)
		if slices.Contains(keys, m[1]+"_file") {
			// A secret given inline where only a file is taken (oauth):
			// the message says so, without the value.
			return field, fmt.Sprintf("unknown field: secrets are read from files; use %s_file", m[1]), ""
		}
		if len(near) == 1 {
			meant = near[0]
			if at != "" {
				meant = at + "." + near[0]
			}
		}
		return field, "unknown field" + didYouMean(near), meant
	}
	if m := dupKey().FindStringSubmatch(msg); m != nil {
		key, _ := strconv.Unquote(m[1])
		return pick(func(l located) bool { return l.key == key }), "duplicate key: already set at line " + m[2], ""
	}
	if m := dupField().FindStringSubmatch(msg); m != nil {
		return pick(func(l located) bool { return l.key == m[1] }), "duplicate key", ""
	}
	if m := badValue().FindStringSubmatch(msg); m != nil {
		got := m[1]
		if m[2] != "" {
			got += " `" + m[2] + "`"
		}
		return pick(func(l located) bool { return m[2] != "" && l.value == m[2] }), fmt.Sprintf("want %s, got %s", describe(m[3]), got), ""
	}
	return pick(func(located) bool { return false }), msg, ""
}

// add adds the problems found checking the value at path.
func (c *collector) add(at string, is []issue) {
	for _, i := range is {
		field := i.field
		switch {
		case field == "":
			field = at
		case at != "":
			field = at + "." + i.field
		}
		if !c.underBad(field) && !slices.Contains(c.misspelt, field) {
			c.errs = append(c.errs, &Error{File: c.file, Line: c.pos.line(field), Field: field, Msg: i.msg})
		}
	}
}

func (c *collector) underBad(field string) bool {
	for _, b := range c.bad {
		if b == "" || field == b || strings.HasPrefix(field, b+".") || strings.HasPrefix(field, b+"[") {
			return true
		}
	}
	return false
}

// err returns every problem in file order, joined.
func (c *collector) err() error {
	slices.SortStableFunc(c.errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Field, b.Field))
	})
	errs := make([]error, len(c.errs))
	for i, e := range c.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}
