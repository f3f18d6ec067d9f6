package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
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
		jobSelector: 'job="driftd-mixin-test"', driftdSelector: 'namespace="mon"',
		findingFor: '7m', probeStalePeriods: 4, newFindingsWindow: '20m', findingHoldWindow: '2h',
		dashboardUID: 'other-uid',
	}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &labels.Matcher{Type: labels.MatchEqual, Name: "job", Value: "driftd-mixin-test"}
	ns := &labels.Matcher{Type: labels.MatchEqual, Name: "namespace", Value: "mon"}
	rules := map[string]generate.Rule{}
	for _, g := range m.Groups {
		for _, r := range g.Rules {
			rules[r.Alert+r.Record] = r
			for _, matcher := range []*labels.Matcher{want, ns} {
				if err := allSelect(r.Expr, matcher); err != nil {
					t.Errorf("rule %s%s: %v", r.Alert, r.Record, err)
				}
			}
		}
	}
	if r := rules["MCPToolMissing"]; r.For != "7m" || !strings.Contains(r.Comment, "for up to 2h") {
		t.Errorf("MCPToolMissing: for %q, comment %q: findingFor and findingHoldWindow not applied", r.For, r.Comment)
	}
	if r := rules["driftd:finding_breaking:held"]; !strings.Contains(r.Expr, "[2h]") {
		t.Errorf("driftd:finding_breaking:held: expr %q: findingHoldWindow not applied", r.Expr)
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
	vars := map[string]string{"datasource": "prometheus", "target": ".*", "window": "1h", "job": ".+", "cluster": ".*"}
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

// The dashboard's job variable reaches every query; with showMultiCluster
// the cluster variable does too (it is shown, and the job variable offers
// the chosen clusters' jobs); every join of the rules matches on the
// cluster label, so two clusters' series never meet.
func TestMixinJobAndClusterVariables(t *testing.T) {
	for _, multi := range []bool{false, true} {
		t.Run(fmt.Sprint("showMultiCluster=", multi), func(t *testing.T) {
			m, err := generate.Evaluate(repoRoot, fmt.Sprintf(`{showMultiCluster: %v, clusterLabel: 'k8s_cluster'}`, multi))
			if err != nil {
				t.Fatal(err)
			}
			var d dashboard
			if err := json.Unmarshal(m.Dashboards["driftd.json"], &d); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{"datasource": "prometheus", "target": ".*", "window": "1h", "job": "J", "cluster": "C"}
			for k, v := range builtinVars {
				vars[k] = v
			}
			job := &labels.Matcher{Type: labels.MatchRegexp, Name: "job", Value: "J"}
			cluster := &labels.Matcher{Type: labels.MatchRegexp, Name: "k8s_cluster", Value: "C"}
			for _, p := range d.Panels {
				for _, tg := range p.Targets {
					expr, err := substitute(tg.Expr, vars)
					if err == nil {
						err = allSelect(expr, job)
					}
					if err == nil && multi {
						err = allSelect(expr, cluster)
					}
					if err != nil {
						t.Errorf("panel %q: %v", p.Title, err)
					}
				}
			}
			byName := map[string]variable{}
			var hidden = map[string]int{}
			var raw struct {
				Templating struct {
					List []struct {
						Name string `json:"name"`
						Hide int    `json:"hide"`
					} `json:"list"`
				} `json:"templating"`
			}
			if err := json.Unmarshal(m.Dashboards["driftd.json"], &raw); err != nil {
				t.Fatal(err)
			}
			for _, v := range raw.Templating.List {
				hidden[v.Name] = v.Hide
			}
			for _, v := range d.Templating.List {
				byName[v.Name] = v
			}
			if q := byName["job"].query(); q != map[bool]string{false: `label_values(driftd_build_info, job)`, true: `label_values(driftd_build_info{k8s_cluster=~"$cluster"}, job)`}[multi] {
				t.Errorf("job variable query %q", q)
			}
			if q := byName["cluster"].query(); q != `label_values(driftd_build_info, k8s_cluster)` {
				t.Errorf("cluster variable query %q", q)
			}
			if got, want := hidden["cluster"], map[bool]int{false: 2, true: 0}[multi]; got != want {
				t.Errorf("cluster variable hide %d, want %d", got, want)
			}
			if q := byName["target"].query(); !strings.Contains(q, `job=~"$job"`) {
				t.Errorf("target variable query %q does not follow the job variable", q)
			}
			for _, g := range m.Groups {
				for _, r := range g.Rules {
					e, err := promql.ParseExpr(r.Expr)
					if err != nil {
						t.Fatal(err)
					}
					parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
						if b, ok := n.(*parser.BinaryExpr); ok && b.VectorMatching != nil && b.VectorMatching.On && !slices.Contains(b.VectorMatching.MatchingLabels, "k8s_cluster") {
							t.Errorf("rule %s%s: a join on %v, not on the cluster label", r.Alert, r.Record, b.VectorMatching.MatchingLabels)
						}
						return nil
					})
				}
			}
		})
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

// recordName is Prometheus' naming of a recording rule,
// level:metric:operations.
var recordName = regexp.MustCompile(`^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$`)

// The series the mixin records are the ones recorded lists (which the
// rules and the dashboard may read), named level:metric:operations, each
// documented in docs/metrics.md; every alert that pages reads one.
func TestRecordingRulesAreKnown(t *testing.T) {
	m, err := generate.Evaluate(repoRoot, "{}")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs/metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, g := range m.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && r.Labels["severity"] == "critical" && !recordName.MatchString(strings.TrimSpace(r.Expr)) {
				t.Errorf("page alert %s: expr %q, want one recorded series", r.Alert, r.Expr)
			}
			if r.Record == "" {
				continue
			}
			got[r.Record] = true
			if !recordName.MatchString(r.Record) {
				t.Errorf("record %q is not level:metric:operations", r.Record)
			}
			if _, ok := recorded[r.Record]; !ok {
				t.Errorf("record %q is not in recorded (metrics_test.go)", r.Record)
			}
			if !bytes.Contains(doc, []byte("`"+r.Record+"`")) {
				t.Errorf("record %q is not in docs/metrics.md", r.Record)
			}
		}
	}
	for name := range recorded {
		if !got[name] {
			t.Errorf("recorded lists %q, which the mixin no longer records", name)
		}
	}
}
