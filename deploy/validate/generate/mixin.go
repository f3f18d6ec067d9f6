// Package generate writes the files that are generated rather than edited:
// the alert rules, the PrometheusRule and the Grafana dashboard from the
// monitoring mixin in deploy/mixin (evaluated with go-jsonnet), and the
// copies of them the Helm chart reads. `make mixin` writes them; a test in
// deploy/validate fails while the committed files differ from what Files
// returns.
package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/google/go-jsonnet"
)

// Where the mixin is and where its products go, relative to the
// repository root.
const (
	MixinDir       = "deploy/mixin"
	AlertsFile     = "deploy/prometheus/alerts.yml"
	DashboardFile  = "deploy/grafana/driftd.json"
	RuleFile       = "deploy/kubernetes/base/monitoring/prometheusrule.yaml"
	ChartAlerts    = "deploy/helm/driftd/files/alerts.yml"
	ChartDashboard = "deploy/helm/driftd/files/driftd.json"
)

// exportSnippet evaluates the mixin into one JSON document: the rule
// groups (the recording rules' first, as the alerts read them), the
// dashboards, and the hidden `comment::` fields that become
// comments in the rule file (hidden, so no consumer of the mixin sees them).
const exportSnippet = `
local mixin = (import 'mixin.libsonnet') + { _config+:: std.extVar('config') };
local comment(o) = if std.objectHasAll(o, 'comment') then o.comment else '';
local groups(x) = if std.objectHasAll(x, 'groups') then x.groups else [];
{
  comment: comment(mixin.prometheusAlerts),
  groups: [
    g { comment::: comment(g), rules: [r { comment::: comment(r) } for r in g.rules] }
    for g in groups(mixin.prometheusRules) + groups(mixin.prometheusAlerts)
  ],
  dashboards: mixin.grafanaDashboards,
}
`

// Mixin is what exportSnippet evaluates to: the mixin's rule groups (with
// the comments of the rule file) and its dashboards.
type Mixin struct {
	Comment    string                     `json:"comment"`
	Groups     []Group                    `json:"groups"`
	Dashboards map[string]json.RawMessage `json:"dashboards"`
}

// Group and Rule are a Prometheus rule file's, with the comments. Fields
// the mixin sets that these do not know fail the decoding, so nothing is
// dropped on the way to the file.
type Group struct {
	Comment  string `json:"comment"`
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []Rule `json:"rules"`
}

// Rule is one alerting or recording rule.
type Rule struct {
	Comment       string            `json:"comment"`
	Alert         string            `json:"alert,omitempty"`
	Record        string            `json:"record,omitempty"`
	Expr          string            `json:"expr"`
	For           string            `json:"for,omitempty"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Evaluate runs the mixin in root/deploy/mixin with config (a jsonnet
// object, "{}" for the defaults) merged into its _config.
func Evaluate(root, config string) (*Mixin, error) {
	vm := jsonnet.MakeVM()
	vm.ExtCode("config", config)
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{filepath.Join(root, MixinDir)}})
	out, err := vm.EvaluateAnonymousSnippet(filepath.Join(root, MixinDir, "export.jsonnet"), exportSnippet)
	if err != nil {
		return nil, fmt.Errorf("evaluate the mixin: %w", err)
	}
	var e Mixin
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("the mixin's rules: %w", err)
	}
	return &e, nil
}

// Files returns every generated file, by path relative to the repository
// root, generated from the mixin under root with its defaults.
func Files(root string) (map[string][]byte, error) {
	e, err := Evaluate(root, "{}")
	if err != nil {
		return nil, err
	}
	return FilesOf(e)
}

// FilesOf returns the files generated from an evaluated mixin.
func FilesOf(e *Mixin) (map[string][]byte, error) {
	if len(e.Groups) == 0 {
		return nil, fmt.Errorf("the mixin has no rule groups")
	}
	alerts, err := ruleFile(e.Comment, e.Groups)
	if err != nil {
		return nil, err
	}
	pr, err := prometheusRule(e.Comment, e.Groups)
	if err != nil {
		return nil, err
	}
	raw, ok := e.Dashboards["driftd.json"]
	if !ok || len(e.Dashboards) != 1 {
		return nil, fmt.Errorf("the mixin's grafanaDashboards: want exactly driftd.json, have %d dashboards", len(e.Dashboards))
	}
	dash, err := dashboardJSON(raw)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		AlertsFile:     alerts,
		RuleFile:       pr,
		DashboardFile:  dash,
		ChartAlerts:    alerts,
		ChartDashboard: dash,
	}, nil
}

// dashboardJSON re-indents the dashboard as Grafana exports it: two
// spaces, keys sorted, numbers as written, no HTML escaping.
func dashboardJSON(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the mixin's dashboard: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
