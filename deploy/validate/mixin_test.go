package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/driftd/driftd/deploy/validate/generate"
)

const repoRoot = "../.."

// Every file generated from deploy/mixin is committed exactly as the mixin
// generates it: the alert rules, the PrometheusRule, the dashboard and the
// Helm chart's copies of them.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	files, err := generate.Files(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{generate.AlertsFile, generate.RuleFile, generate.DashboardFile, generate.ChartAlerts, generate.ChartDashboard} {
		if _, ok := files[p]; !ok {
			t.Errorf("the generator no longer writes %s", p)
		}
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Errorf("%v (run make mixin)", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what deploy/mixin generates, first at %s: run make mixin, and edit deploy/mixin, never the generated file", p, firstDiff(got, want))
		}
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, gl, wl)
		}
	}
	return "(no line differs)"
}

// withoutComments is the groups as a rule file holds them: generic values,
// the comments left out.
func withoutComments(t *testing.T, groups []generate.Group) []any {
	t.Helper()
	raw, err := json.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	var v []any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, g := range v {
		gm := g.(map[string]any)
		delete(gm, "comment")
		for _, r := range gm["rules"].([]any) {
			delete(r.(map[string]any), "comment")
		}
	}
	return v
}

// The rule file printer loses nothing: the file reads back as the mixin's
// rules, for the defaults and for a configuration whose strings need
// quoting.
func TestRuleFileReadsBackAsTheMixin(t *testing.T) {
	for _, cfg := range []string{"{}", `{driftdSelector: 'job=~"driftd|x: y", env!="#dev"', pageSeverity: 'yes', runbookURLPattern: "' %s '"}`} {
		t.Run(cfg, func(t *testing.T) {
			m, err := generate.Evaluate(repoRoot, cfg)
			if err != nil {
				t.Fatal(err)
			}
			files, err := generate.FilesOf(m)
			if err != nil {
				t.Fatal(err)
			}
			want := withoutComments(t, m.Groups)
			if got := groupsOf(t, "alerts.yml", files[generate.AlertsFile], "groups"); !reflect.DeepEqual(got, want) {
				t.Errorf("alerts.yml reads back as\n%v\nwant\n%v\n%s", got, want, files[generate.AlertsFile])
			}
			if got := groupsOf(t, "prometheusrule.yaml", files[generate.RuleFile], "spec", "groups"); !reflect.DeepEqual(got, want) {
				t.Errorf("the PrometheusRule reads back as\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// _config reaches every expression: with a selector set, every driftd_*
// selector of every alert and every dashboard query carries it, and the
// durations and counts land in the rules and their prose.
func TestMixinConfigApplies(t *testing.T) {
	m, err := generate.Evaluate(repoRoot, `{
		driftdSelector: 'job="driftd-mixin-test"',
		findingFor: '7m', probeStalePeriods: 4, newFindingsWindow: '20m', findingHoldWindow: '2h',
		dashboardUID: 'other-uid',
	}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &labels.Matcher{Type: labels.MatchEqual, Name: "job", Value: "driftd-mixin-test"}
	rules := map[string]generate.Rule{}
	for _, g := range m.Groups {
		for _, r := range g.Rules {
			rules[r.Alert] = r
			if err := allSelect(r.Expr, want); err != nil {
				t.Errorf("alert %s: %v", r.Alert, err)
			}
		}
	}
	if r := rules["MCPToolMissing"]; r.For != "7m" || !strings.Contains(r.Expr, "[2h:1m]") || !strings.Contains(r.Comment, "for up to 2h") {
		t.Errorf("MCPToolMissing: for %q, expr %q: findingFor and findingHoldWindow not applied", r.For, r.Expr)
	}
	if r := rules["DriftdProbeStale"]; !strings.Contains(r.Expr, "4 * ") || !strings.Contains(r.Annotations["description"], "more than four periods") {
		t.Errorf("DriftdProbeStale: probeStalePeriods not applied: %q / %q", r.Expr, r.Annotations["description"])
	}
	if r := rules["DriftdNewFindings"]; !strings.Contains(r.Expr, "[20m]") || !strings.HasSuffix(r.Annotations["description"], "in the last 20 minutes.") {
		t.Errorf("DriftdNewFindings: newFindingsWindow not applied: %q / %q", r.Expr, r.Annotations["description"])
	}

	var d dashboard
	if err := json.Unmarshal(m.Dashboards["driftd.json"], &d); err != nil {
		t.Fatal(err)
	}
	if d.UID != "other-uid" {
		t.Errorf("dashboard uid %q, want other-uid", d.UID)
	}
	vars := map[string]string{"datasource": "prometheus", "target": ".*", "window": "1h"}
	for k, v := range builtinVars {
		vars[k] = v
	}
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			expr, err := substitute(tg.Expr, vars)
			if err == nil {
				err = allSelect(expr, want)
			}
			if err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no panel queries")
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" && !strings.Contains(v.query(), want.String()) {
			t.Errorf("variable %s: query %q lacks %s", v.Name, v.query(), want)
		}
	}
}

// allSelect: every vector selector of expr has the matcher m.
func allSelect(expr string, m *labels.Matcher) error {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return err
	}
	var lacking []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && !slices.ContainsFunc(vs.LabelMatchers, func(x *labels.Matcher) bool { return x.String() == m.String() }) {
			lacking = append(lacking, vs.String())
		}
		return nil
	})
	if len(lacking) > 0 {
		return fmt.Errorf("%q: selectors without %s: %v", expr, m, lacking)
	}
	return nil
}
