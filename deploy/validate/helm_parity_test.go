package validate

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The chart's optional objects point at what the chart runs: every
// PodDisruptionBudget and NetworkPolicy selects driftd's pods (and only
// lets in the web port), every Ingress and HTTPRoute sends the route
// prefix to driftd's Service on its http port.
func TestChartObjectsSelectDriftd(t *testing.T) {
	for _, c := range charts {
		t.Run(c.name, func(t *testing.T) {
			o := c.load(t)
			ws := o.workloads()
			if len(ws) != 1 {
				t.Fatalf("%d workloads, want 1", len(ws))
			}
			w := ws[0]
			pod := labels.Set(w.template.Labels)
			dc := driftdContainers(&w.template.Spec)[0]
			prefix, _ := webOf(o, w, dc)
			selects := func(what string, sel *metav1.LabelSelector) {
				s, err := metav1.LabelSelectorAsSelector(sel)
				if err != nil || s.Empty() || !s.Matches(pod) {
					t.Errorf("%s: selector %v does not select driftd's pods %v (%v)", what, sel, pod, err)
				}
			}
			for _, p := range o.pdbs {
				selects("PodDisruptionBudget "+p.Name, p.Spec.Selector)
				if p.Spec.MinAvailable != nil && p.Spec.MinAvailable.IntValue() >= int(*w.replicas) {
					t.Errorf("PodDisruptionBudget %s: minAvailable %s of %d replicas blocks every drain", p.Name, p.Spec.MinAvailable, *w.replicas)
				}
			}
			for _, np := range o.networkPolicies {
				selects("NetworkPolicy "+np.Name, &np.Spec.PodSelector)
				for _, r := range np.Spec.Ingress {
					for _, p := range r.Ports {
						if p.Port == nil || (p.Port.String() != "http" && p.Port.IntValue() != driftdPort) {
							t.Errorf("NetworkPolicy %s: ingress port %v, want driftd's http (%d)", np.Name, p.Port, driftdPort)
						}
					}
					if len(r.Ports) == 0 {
						t.Errorf("NetworkPolicy %s: an ingress rule for every port", np.Name)
					}
				}
				if slices.Contains(np.Spec.PolicyTypes, "Egress") && len(np.Spec.Egress) == 0 {
					t.Errorf("NetworkPolicy %s: Egress with no rules cuts driftd off its MCP servers", np.Name)
				}
			}
			service := func(what, name string, port int32, portName string) {
				for _, s := range o.services {
					if s.Name != name {
						continue
					}
					for _, sp := range s.Spec.Ports {
						if sp.Name == "http" && (sp.Port == port || sp.Name == portName) {
							return
						}
					}
				}
				t.Errorf("%s: backend %s port %d/%q is not driftd's Service port http", what, name, port, portName)
			}
			for _, in := range o.ingresses {
				for _, r := range in.Spec.Rules {
					for _, p := range r.HTTP.Paths {
						service("Ingress "+in.Name, p.Backend.Service.Name, p.Backend.Service.Port.Number, p.Backend.Service.Port.Name)
						if want := cmp.Or(prefix, "/"); p.Path != want {
							t.Errorf("Ingress %s: path %s, want the route prefix %s", in.Name, p.Path, want)
						}
					}
				}
			}
			for _, hr := range o.httpRoutes {
				if len(hr.Spec.ParentRefs) == 0 {
					t.Errorf("HTTPRoute %s: no parentRefs", hr.Name)
				}
				for _, r := range hr.Spec.Rules {
					for _, b := range r.BackendRefs {
						if b.Port == nil {
							t.Errorf("HTTPRoute %s: backend %s without a port", hr.Name, b.Name)
							continue
						}
						service("HTTPRoute "+hr.Name, string(b.Name), int32(*b.Port), "")
					}
					for _, m := range r.Matches {
						if m.Path == nil || m.Path.Value == nil || *m.Path.Value != cmp.Or(prefix, "/") {
							t.Errorf("HTTPRoute %s: match %+v, want the route prefix %s", hr.Name, m.Path, cmp.Or(prefix, "/"))
						}
					}
				}
			}
			// State: a claim, for the Deployment, or one per replica.
			var state *corev1.Volume
			for i := range w.template.Spec.Volumes {
				if w.template.Spec.Volumes[i].Name == "state" {
					state = &w.template.Spec.Volumes[i]
				}
			}
			switch {
			case w.sts != nil:
				if len(o.pvcs) > 0 || state != nil || !slices.ContainsFunc(w.sts.Spec.VolumeClaimTemplates, func(p corev1.PersistentVolumeClaim) bool { return p.Name == "state" }) {
					t.Errorf("StatefulSet %s: want the state from volumeClaimTemplates only (PVCs %d, pod volume %v)", w.name, len(o.pvcs), state)
				}
			case c.name == "helm ci/ephemeral-values.yaml":
				if state == nil || state.EmptyDir == nil {
					t.Errorf("persistence off: state volume %+v, want an emptyDir", state)
				}
			default:
				if state == nil || state.PersistentVolumeClaim == nil || len(o.pvcs) != 1 {
					t.Errorf("persistence on by default: state volume %+v with %d PVCs, want the chart's claim", state, len(o.pvcs))
				}
			}
		})
	}
}

// serviceMonitor.releaseLabel and prometheusRule.releaseLabel add release:
// <the release's name>, unless labels sets its own.
func TestChartReleaseLabel(t *testing.T) {
	o := charts[slices.IndexFunc(charts, func(s source) bool { return s.name == "helm ci/web-auth-values.yaml" })].load(t)
	if got := o.serviceMonitors[0].Labels["release"]; got != releaseName {
		t.Errorf("ServiceMonitor release label %q, want %q", got, releaseName)
	}
	vals, err := common.ReadValues([]byte(`{serviceMonitor: {enabled: true, releaseLabel: true, labels: {release: kube-prometheus-stack}}, prometheusRule: {enabled: true, releaseLabel: true}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := renderValues(vals)
	if err != nil {
		t.Fatal(err)
	}
	o = &objects{kinds: map[string]int{}}
	for _, f := range keys(out) {
		for _, doc := range splitYAML(t, f, out[f]) {
			o.decode(t, f, doc)
		}
	}
	if got := o.serviceMonitors[0].Labels["release"]; got != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor release label %q: labels' own release should win", got)
	}
	if got := o.prometheusRules[0].Labels["release"]; got != releaseName {
		t.Errorf("PrometheusRule release label %q, want %q", got, releaseName)
	}
}

// Values that cannot work are refused at render time.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, values, want string
	}{
		{"a route prefix without its slash", `web: {routePrefix: driftd}`, "schema"},
		{"a plain password as a basic-auth user", `web: {config: {basic_auth_users: {prometheus: secret}}}`, "schema"},
		{"an HTTPRoute without a gateway", `httpRoute: {enabled: true}`, "schema"},
		{"no shard", `shards: 0`, "schema"},
		{"a misspelt PodDisruptionBudget field", `podDisruptionBudget: {maxUnavaliable: 1}`, "schema"},
		{"an ingress path that is not absolute", `ingress: {enabled: true, hosts: [{host: x, paths: [{path: driftd}]}]}`, "schema"},
		{"one claim for every shard", `{shards: 3, persistence: {existingClaim: driftd-state}}`, "existingClaim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := common.ReadValues([]byte(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := renderValues(vals); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("rendered with %s (%v), want an error with %q", tc.values, err, tc.want)
			}
		})
	}
}

// An Ingress without hosts still routes: one rule for any host, on the
// route prefix.
func TestChartIngressWithoutHosts(t *testing.T) {
	vals, err := common.ReadValues([]byte(`{ingress: {enabled: true}, web: {routePrefix: /driftd/}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := renderValues(vals)
	if err != nil {
		t.Fatal(err)
	}
	o := &objects{kinds: map[string]int{}}
	for _, f := range keys(out) {
		for _, doc := range splitYAML(t, f, out[f]) {
			o.decode(t, f, doc)
		}
	}
	if len(o.ingresses) != 1 || len(o.ingresses[0].Spec.Rules) != 1 {
		t.Fatalf("want one Ingress with one rule, have %+v", o.ingresses)
	}
	r := o.ingresses[0].Spec.Rules[0]
	if r.Host != "" || r.HTTP == nil || len(r.HTTP.Paths) != 1 || r.HTTP.Paths[0].Path != "/driftd" {
		t.Errorf("rule %+v: want any host, path /driftd", r)
	}
}

// secretConfig: true renders config and manifests into a Secret, mounted
// where the ConfigMap would be, and driftd accepts what it holds.
func TestChartSecretConfig(t *testing.T) {
	bin := driftdBinary(t)
	vals, err := common.ReadValues([]byte(`secretConfig: true`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := renderValues(vals)
	if err != nil {
		t.Fatal(err)
	}
	o := &objects{kinds: map[string]int{}}
	for _, f := range keys(out) {
		for _, doc := range splitYAML(t, f, out[f]) {
			o.decode(t, f, doc)
		}
	}
	if len(o.configMaps) != 0 || len(o.secrets) != 1 {
		t.Fatalf("%d ConfigMaps and %d Secrets, want the configuration in one Secret", len(o.configMaps), len(o.secrets))
	}
	w := o.workloads()[0]
	checkContainer(t, o, w, driftdContainers(&w.template.Spec)[0])
	data := volumeData(o, w, "config")
	if _, ok := data["orders.json"]; !ok {
		t.Errorf("the config volume holds %v, want driftd.yml and orders.json", keys(data))
	}
	if msg, err := configCheck(t, bin, secretAsConfigMap(o.secrets[0])); err != nil {
		t.Errorf("driftd config check: %v\n%s", err, msg)
	}
}
