package validate

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	alertsPath = "../prometheus/alerts.yml"
	rulePath   = kubeDir + "/base/monitoring/prometheusrule.yaml"
)

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

// Both files are generated from the mixin; this holds the two printers
// (top level and under spec:) to the same groups.
func TestPrometheusRuleMatchesAlerts(t *testing.T) {
	alerts, err := os.ReadFile(alertsPath)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := os.ReadFile(rulePath)
	if err != nil {
		t.Fatal(err)
	}
	want := groupsOf(t, alertsPath, alerts, "groups")
	got := groupsOf(t, rulePath, rule, "spec", "groups")
	if reflect.DeepEqual(got, want) {
		return
	}
	var diffs []string
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			diffs = append(diffs, fmt.Sprintf("group %d (%v) is missing from the PrometheusRule", i, groupName(want[i])))
		case i >= len(want):
			diffs = append(diffs, fmt.Sprintf("group %d (%v) is not in alerts.yml", i, groupName(got[i])))
		case !reflect.DeepEqual(got[i], want[i]):
			diffs = append(diffs, fmt.Sprintf("group %d (%v) differs: %s", i, groupName(want[i]), describeDiff(got[i], want[i])))
		}
	}
	t.Fatalf("the PrometheusRule's spec.groups differs from %s's groups (both come from `make mixin`)\n%s",
		alertsPath, strings.Join(diffs, "\n"))
}

func groupName(g any) any {
	if m, ok := g.(map[string]any); ok {
		return m["name"]
	}
	return g
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

// describeDiff names what differs between two groups: the rules missing on
// either side, or the keys of the first rule that differs.
func describeDiff(got, want any) string {
	gm, _ := got.(map[string]any)
	wm, _ := want.(map[string]any)
	var out []string
	for k := range wm {
		if k != "rules" && !reflect.DeepEqual(gm[k], wm[k]) {
			out = append(out, fmt.Sprintf("%s: %v in alerts.yml, %v in the PrometheusRule", k, wm[k], gm[k]))
		}
	}
	name := func(r any) string {
		m, _ := r.(map[string]any)
		if a, ok := m["alert"]; ok {
			return fmt.Sprint(a)
		}
		return fmt.Sprint(m["record"])
	}
	gr, _ := gm["rules"].([]any)
	wr, _ := wm["rules"].([]any)
	var gn, wn []string
	for _, r := range gr {
		gn = append(gn, name(r))
	}
	for _, r := range wr {
		wn = append(wn, name(r))
	}
	if !slices.Equal(gn, wn) {
		out = append(out, fmt.Sprintf("rules in alerts.yml %v, in the PrometheusRule %v", wn, gn))
	} else {
		for i := range wr {
			if reflect.DeepEqual(gr[i], wr[i]) {
				continue
			}
			g, _ := gr[i].(map[string]any)
			w, _ := wr[i].(map[string]any)
			var ks []string
			for k := range w {
				if !reflect.DeepEqual(g[k], w[k]) {
					ks = append(ks, k)
				}
			}
			for k := range g {
				if _, ok := w[k]; !ok {
					ks = append(ks, k)
				}
			}
			slices.Sort(ks)
			out = append(out, fmt.Sprintf("rule %s differs in %v", wn[i], ks))
		}
	}
	if len(out) == 0 {
		return "(in ways not itemised)"
	}
	return strings.Join(out, "; ")
}
