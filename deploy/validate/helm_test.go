package validate

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "../helm/driftd"
	// What the chart is rendered as: `helm install driftd … -n driftd`.
	releaseName      = "driftd"
	releaseNamespace = "driftd"
)

// chart is one documented variant of the chart: a values file of ci/ (none
// for the defaults), and objects that exist in the cluster beforehand.
type chart struct {
	values   string
	existing string // a file of testdata/
}

// charts are the chart's variants, checked as the kustomize builds are.
// Every file of ci/ must be one (TestEveryChartVariantIsChecked).
var charts = []source{
	helm(chart{}, "Deployment", "Service", "ConfigMap", "ServiceAccount", "PersistentVolumeClaim"),
	helm(chart{values: "ci/monitoring-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount", "ServiceMonitor", "PrometheusRule"),
	helm(chart{values: "ci/sidecar-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount"),
	helm(chart{values: "ci/existing-configmap-values.yaml", existing: "testdata/existing-configmap.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount"),
	helm(chart{values: "ci/persistence-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount", "PersistentVolumeClaim"),
	helm(chart{values: "ci/ephemeral-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount"),
	helm(chart{values: "ci/kubernetes-sd-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount", "Role", "RoleBinding"),
	helm(chart{values: "ci/web-auth-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount", "ServiceMonitor", "Secret", "PodDisruptionBudget", "NetworkPolicy"),
	helm(chart{values: "ci/exposed-values.yaml"}, "Deployment", "Service", "ConfigMap", "ServiceAccount", "ServiceMonitor", "Secret", "Ingress", "HTTPRoute"),
	helm(chart{values: "ci/sharded-values.yaml"}, "StatefulSet", "Service", "ConfigMap", "ServiceAccount"),
	helm(chart{values: "ci/secret-config-values.yaml", existing: "testdata/existing-secret-config.yaml"}, "Deployment", "Service", "Secret", "ServiceAccount"),
}

func helm(c chart, kinds ...string) source {
	name := "helm defaults"
	if c.values != "" {
		name = "helm " + c.values
	}
	return source{
		name:       name,
		kinds:      kinds,
		monitoring: slices.Contains(kinds, "ServiceMonitor"),
		load: func(t *testing.T) *objects {
			o := &objects{kinds: map[string]int{}}
			out := renderChart(t, c.values)
			for _, f := range keys(out) {
				for _, doc := range splitYAML(t, f, out[f]) {
					o.decode(t, name+": "+f, doc)
				}
			}
			if c.existing != "" {
				raw, err := os.ReadFile(c.existing)
				if err != nil {
					t.Fatal(err)
				}
				for _, doc := range splitYAML(t, c.existing, string(raw)) {
					o.decode(t, c.existing, doc)
				}
			}
			return o
		},
	}
}

// readValues reads a values file of the chart; none is no values.
func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	v, err := common.ReadValuesFile(filepath.Join(chartDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// renderChart is `helm template driftd deploy/helm/driftd -n driftd -f
// VALUES` with the helm library: the chart loaded from disk, the values
// coalesced and validated against values.schema.json, the templates
// rendered. It returns the rendered manifests by template file, NOTES.txt
// left out.
func renderChart(t *testing.T, values string) map[string]string {
	t.Helper()
	out, err := renderValues(readValues(t, values))
	if err != nil {
		t.Fatalf("render %s with %q: %v", chartDir, values, err)
	}
	return out
}

func renderValues(vals map[string]any) (map[string]string, error) {
	c, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	return renderLoaded(c, vals)
}

// renderLoaded renders a chart already loaded, from its directory or a
// packaged .tgz.
func renderLoaded(c *chartv2.Chart, vals map[string]any) (map[string]string, error) {
	cvals, err := util.CoalesceValues(c, vals)
	if err != nil {
		return nil, err
	}
	opts := common.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}
	rv, err := util.ToRenderValuesWithSchemaValidation(c, cvals, opts, common.DefaultCapabilities.Copy(), false)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(c, rv)
	if err != nil {
		return nil, err
	}
	for f := range out {
		if strings.HasSuffix(f, "NOTES.txt") {
			delete(out, f)
		}
	}
	return out, nil
}

// splitYAML splits a stream into its documents, leaving out those that
// hold nothing (a template that rendered only comments).
func splitYAML(t *testing.T, name, s string) [][]byte {
	t.Helper()
	r := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(s)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		if v != nil {
			docs = append(docs, doc)
		}
	}
}

// Every values file of ci/ is a variant the tests render and check.
func TestEveryChartVariantIsChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ci/*.yaml in %s (%v)", chartDir, err)
	}
	for _, f := range files {
		name := "helm ci/" + filepath.Base(f)
		if !slices.ContainsFunc(charts, func(s source) bool { return s.name == name }) {
			t.Errorf("%s is not in charts: a documented variant nothing checks", f)
		}
	}
}

// helm lint, through its library, finds nothing to say about the chart,
// with the defaults and with each variant's values: no error, no warning.
// Information (the icon it recommends) is logged.
func TestChartLints(t *testing.T) {
	for _, c := range charts {
		t.Run(c.name, func(t *testing.T) {
			values := ""
			if f, ok := strings.CutPrefix(c.name, "helm "); ok && f != "defaults" {
				values = f
			}
			res := lint.RunAll(chartDir, readValues(t, values), releaseNamespace)
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %v", m)
				} else {
					t.Logf("helm lint: %v", m)
				}
			}
		})
	}
}

// values.schema.json is in force: values a user gets wrong are refused
// before anything renders.
func TestChartSchemaRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values string
	}{
		{"a misspelt key", `serviceMonitr: {enabled: true}`},
		{"a tag that is a number", `image: {tag: 1.2}`},
		{"a state_dir the volume is not at", `config: {global: {state_dir: /data}}`},
		{"a secret mount without its Secret", `secretMounts: [{name: orders}]`},
		{"a target name driftd refuses", `config: {targets: [{name: Orders, url: "http://x/mcp"}]}`},
		{"an interval that is no duration", `serviceMonitor: {enabled: true, interval: often}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := common.ReadValues([]byte(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := renderValues(vals); err == nil || !strings.Contains(err.Error(), "schema") {
				t.Errorf("rendered with %s (%v), want a schema error", tc.values, err)
			}
		})
	}
}

// The monitoring objects come from the generated files: the PrometheusRule's
// groups are alerts.yml's (with the additional rule labels), the dashboard
// ConfigMap holds deploy/grafana/driftd.json byte for byte, labelled for the
// Grafana sidecar; the extra labels land where kube-prometheus-stack looks.
func TestChartMonitoringObjects(t *testing.T) {
	o := charts[slices.IndexFunc(charts, func(s source) bool { return s.name == "helm ci/monitoring-values.yaml" })].load(t)
	vals := readValues(t, "ci/monitoring-values.yaml")
	alerts, err := os.ReadFile(alertsPath)
	if err != nil {
		t.Fatal(err)
	}
	dashboard, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}

	if len(o.prometheusRules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(o.prometheusRules))
	}
	pr := o.prometheusRules[0]
	raw, err := yaml.Marshal(pr)
	if err != nil {
		t.Fatal(err)
	}
	want := groupsOf(t, alertsPath, alerts, "groups")
	add := vals["prometheusRule"].(map[string]any)["additionalRuleLabels"].(map[string]any)
	for _, g := range want {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			ls, _ := r.(map[string]any)["labels"].(map[string]any)
			if ls == nil {
				ls = map[string]any{}
			}
			for k, v := range add {
				if _, ok := ls[k]; !ok {
					ls[k] = v
				}
			}
			r.(map[string]any)["labels"] = ls
		}
	}
	if got := groupsOf(t, "the chart's PrometheusRule", raw, "spec", "groups"); !reflect.DeepEqual(got, want) {
		t.Errorf("the chart's PrometheusRule groups differ from %s's with additionalRuleLabels %v", alertsPath, add)
	}

	var dash *corev1.ConfigMap
	for _, cm := range o.configMaps {
		if _, ok := cm.Data["driftd.json"]; ok {
			dash = cm
		}
	}
	if dash == nil {
		t.Fatal("no ConfigMap with driftd.json")
	}
	if dash.Data["driftd.json"] != string(dashboard) {
		t.Errorf("ConfigMap %s: driftd.json is not %s byte for byte", dash.Name, dashboardPath)
	}
	if dash.Labels["grafana_dashboard"] != "1" {
		t.Errorf("ConfigMap %s: labels %v, want grafana_dashboard: \"1\" for the sidecar", dash.Name, dash.Labels)
	}

	for _, l := range []struct {
		kind   string
		labels map[string]string
	}{{"ServiceMonitor", o.serviceMonitors[0].Labels}, {"PrometheusRule", pr.Labels}} {
		if l.labels["release"] != "kube-prometheus-stack" {
			t.Errorf("%s labels %v, want release: kube-prometheus-stack", l.kind, l.labels)
		}
	}
	if sm := o.serviceMonitors[0]; sm.Namespace == releaseNamespace || !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{releaseNamespace}) {
		t.Errorf("ServiceMonitor in %s with namespaceSelector %+v: want it in another namespace selecting %s", sm.Namespace, sm.Spec.NamespaceSelector, releaseNamespace)
	}

	// And none of it by default.
	d := charts[0].load(t)
	if len(d.serviceMonitors)+len(d.prometheusRules) > 0 || len(d.configMaps) != 1 {
		t.Errorf("the defaults render %d ServiceMonitors, %d PrometheusRules, %d ConfigMaps: want only driftd's ConfigMap", len(d.serviceMonitors), len(d.prometheusRules), len(d.configMaps))
	}
}
