package validate

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const alertsPath = "../prometheus/alerts.yml"

// groupsOf decodes YAML into generic values and returns the groups found
// under the given path of keys.
func groupsOf(t *testing.T, name string, data []byte, keys ...string) []any {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, k := range keys {
		m, ok := doc.(map[string]any)
		if !ok {
			t.Fatalf("%s: %s: not a mapping", name, k)
		}
		if doc, ok = m[k]; !ok {
			t.Fatalf("%s: no %s", name, strings.Join(keys, "."))
		}
	}
	groups, ok := doc.([]any)
	if !ok || len(groups) == 0 {
		t.Fatalf("%s: %s is not a non-empty list", name, strings.Join(keys, "."))
	}
	return groups
}

var camelCase = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// The rules themselves: every expression parses and uses only metrics that
// driftd exports (or up), and every alert carries what DESIGN §13 asks.
func TestPrometheusRuleContents(t *testing.T) {
	o := build(t, "overlays/standalone")
	if len(o.prometheusRules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(o.prometheusRules))
	}
	pr := o.prometheusRules[0]
	n := 0
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			n++
			id := r.Alert
			if id == "" {
				id = r.Record
			}
			where := fmt.Sprintf("group %s rule %s", g.Name, id)
			if _, err := exprMetrics(r.Expr.String(), true); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			if r.Alert == "" {
				continue
			}
			if !camelCase.MatchString(r.Alert) {
				t.Errorf("%s: alert name is not CamelCase", where)
			}
			if r.Labels["severity"] == "" {
				t.Errorf("%s: no severity label", where)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[a] == "" {
					t.Errorf("%s: no %s annotation", where, a)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the PrometheusRule has no rules")
	}
}
