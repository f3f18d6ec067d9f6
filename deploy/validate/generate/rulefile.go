package generate

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// header opens every generated YAML file.
const header = "GENERATED from deploy/mixin by `make mixin`: do not edit by hand."

// foldWidth is where long annotations are wrapped, in characters of text.
const foldWidth = 88

// ruleFile renders the groups as a Prometheus rule file: the comment on
// top, each rule's comment above it, multi-line expressions as literal
// blocks, descriptions folded.
func ruleFile(comment string, groups []Group) ([]byte, error) {
	var p printer
	p.comment("", header+"\n\n"+comment)
	p.line("", "groups:")
	if err := p.groups("  ", groups); err != nil {
		return nil, err
	}
	return []byte(p.String()), nil
}

// prometheusRule renders the same groups as the spec of a
// prometheus-operator PrometheusRule.
func prometheusRule(comment string, groups []Group) ([]byte, error) {
	var p printer
	p.comment("", header+"\nspec.groups are deploy/prometheus/alerts.yml's groups.")
	p.line("", "apiVersion: monitoring.coreos.com/v1")
	p.line("", "kind: PrometheusRule")
	p.line("", "metadata:")
	p.line("  ", "name: driftd")
	p.line("  ", "labels:")
	p.line("    ", "app.kubernetes.io/name: driftd")
	p.line("", "spec:")
	p.comment("  ", comment)
	p.line("  ", "groups:")
	if err := p.groups("    ", groups); err != nil {
		return nil, err
	}
	return []byte(p.String()), nil
}

// printer writes YAML of a known shape line by line; scalars go through
// the YAML encoder unless they are written as blocks.
type printer struct {
	strings.Builder
}

func (p *printer) line(indent, s string) {
	p.WriteString(strings.TrimRight(indent+s, " ") + "\n")
}

// comment writes text as # lines; empty lines stay # so the comment stays
// one block.
func (p *printer) comment(indent, text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			p.line(indent, "#")
		} else {
			p.line(indent, "# "+l)
		}
	}
}

func (p *printer) groups(indent string, groups []Group) error {
	for _, g := range groups {
		p.comment(indent, g.Comment)
		if err := p.scalar(indent, "- name", g.Name); err != nil {
			return err
		}
		in := indent + "  "
		if g.Interval != "" {
			if err := p.scalar(in, "interval", g.Interval); err != nil {
				return err
			}
		}
		p.line(in, "rules:")
		for i, r := range g.Rules {
			if i > 0 {
				p.line("", "")
			}
			if err := p.rule(in+"  ", r); err != nil {
				return fmt.Errorf("group %s: %w", g.Name, err)
			}
		}
	}
	return nil
}

func (p *printer) rule(indent string, r Rule) error {
	p.comment(indent, r.Comment)
	first, in := "- ", indent+"  "
	kv := func(k, v string) error {
		if v == "" {
			return nil
		}
		err := p.scalar(indent+first, k, v)
		indent, first = in, ""
		return err
	}
	for _, f := range [][2]string{{"alert", r.Alert}, {"record", r.Record}, {"expr", r.Expr}, {"for", r.For}, {"keep_firing_for", r.KeepFiringFor}} {
		if err := kv(f[0], f[1]); err != nil {
			return err
		}
	}
	for _, m := range []struct {
		key   string
		kv    map[string]string
		first []string
	}{{"labels", r.Labels, []string{"severity"}}, {"annotations", r.Annotations, []string{"summary", "description", "runbook_url"}}} {
		if len(m.kv) == 0 {
			continue
		}
		p.line(in, m.key+":")
		for _, k := range orderedKeys(m.kv, m.first...) {
			if err := p.scalar(in+"  ", k, m.kv[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// orderedKeys: the keys named first, as given, then the rest sorted.
func orderedKeys(m map[string]string, first ...string) []string {
	var out, rest []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for k := range m {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// scalar writes `key: value`. A value of several lines is a literal block,
// a description a folded one; anything else is quoted as the YAML encoder
// sees fit.
func (p *printer) scalar(indent, key, value string) error {
	k, err := inline(strings.TrimPrefix(key, "- "))
	if err != nil {
		return err
	}
	if strings.HasPrefix(key, "- ") {
		k = "- " + k
	}
	block := indent + "  "
	if strings.HasPrefix(k, "- ") {
		block += "  "
	}
	switch {
	case literalOK(value):
		chomp := "|"
		if !strings.HasSuffix(value, "\n") {
			chomp = "|-"
		}
		p.line(indent, k+": "+chomp)
		for _, l := range strings.Split(strings.TrimSuffix(value, "\n"), "\n") {
			p.line(block, l)
		}
	case key == "description" && foldOK(value):
		p.line(indent, k+": >-")
		for _, l := range wrap(value, foldWidth) {
			p.line(block, l)
		}
	default:
		v, err := inline(value)
		if err != nil {
			return err
		}
		p.line(indent, k+": "+v)
	}
	return nil
}

// literalOK: several lines, at most one final newline, and a first line
// that does not start with a space (which would need an indentation
// indicator).
func literalOK(s string) bool {
	body := strings.TrimSuffix(s, "\n")
	return strings.Contains(body, "\n") && !strings.HasSuffix(body, "\n") &&
		!strings.HasPrefix(s, " ") && !strings.Contains(s, "\t") && !strings.Contains(s, "\r")
}

// foldOK: a folded block reads back as the same text when the text is one
// line of words separated by single spaces.
func foldOK(s string) bool {
	return s != "" && strings.TrimSpace(s) == s && !strings.ContainsAny(s, "\n\r\t") && !strings.Contains(s, "  ")
}

// wrap breaks s at single spaces into lines of about width characters,
// never inside a template action ({{ … }}).
func wrap(s string, width int) []string {
	var words []string
	depth := 0
	for _, w := range strings.Split(s, " ") {
		if depth > 0 {
			words[len(words)-1] += " " + w
		} else {
			words = append(words, w)
		}
		depth += strings.Count(w, "{{") - strings.Count(w, "}}")
	}
	var lines []string
	var cur strings.Builder
	for _, w := range words {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	return append(lines, cur.String())
}

// inline is s as a one-line YAML scalar, plain or quoted.
func inline(s string) (string, error) {
	out, err := yaml.Marshal(s)
	if err != nil {
		return "", err
	}
	v := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(v, "\n") {
		return "", fmt.Errorf("%q does not fit on one line", s)
	}
	return v, nil
}
