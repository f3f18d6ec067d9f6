package validate

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	kubeDir        = "../kubernetes"
	driftdPort     = 9820
	configDir      = "/etc/driftd"
	configFile     = configDir + "/driftd.yml"
	driftdUID      = 65532
	driftdImageRef = "registry.example.com/driftd" // the base's images: entry
)

// A source is one way driftd's manifests are made (a kustomize build, the
// Helm chart rendered with one values file), with what it must hold. Every
// source goes through the same decoding and checks.
type source struct {
	name       string
	kinds      []string // kinds that must be present (at least one each)
	monitoring bool     // carries the ServiceMonitor and PrometheusRule
	sidecar    bool     // driftd joins another workload's pod
	load       func(t *testing.T) *objects
}

// The kustomizations that must build, and what each must contain.
var builds = []source{
	kustomize("base", false, false, "Deployment", "Service", "ConfigMap", "ServiceAccount"),
	kustomize("overlays/standalone", true, false, "Namespace", "Deployment", "Service", "ConfigMap", "ServiceAccount", "ServiceMonitor", "PrometheusRule"),
	kustomize("overlays/sidecar", true, true, "Deployment", "Service", "ConfigMap", "ServiceMonitor", "PrometheusRule"),
	kustomize("overlays/sharded", true, false, "Namespace", "StatefulSet", "Service", "ConfigMap", "ServiceAccount", "ServiceMonitor", "PrometheusRule"),
	kustomize("overlays/discovery", true, false, "Namespace", "Deployment", "Service", "ConfigMap", "ServiceAccount", "ServiceMonitor", "PrometheusRule", "ClusterRole", "ClusterRoleBinding"),
}

func kustomize(dir string, monitoring, sidecar bool, kinds ...string) source {
	return source{name: "kustomize " + dir, kinds: kinds, monitoring: monitoring, sidecar: sidecar,
		load: func(t *testing.T) *objects { return build(t, dir) }}
}

// sources is every kustomize build and every chart variant.
func sources() []source { return append(slices.Clone(builds), charts...) }

// objects is one set of manifests (a kustomize build, a chart rendered
// with one values file), strict-decoded.
type objects struct {
	namespaces      []*corev1.Namespace
	deployments     []*appsv1.Deployment
	statefulSets    []*appsv1.StatefulSet
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	serviceAccounts []*corev1.ServiceAccount
	pvcs            []*corev1.PersistentVolumeClaim
	serviceMonitors []*monitoringv1.ServiceMonitor
	prometheusRules []*monitoringv1.PrometheusRule
	// roles are Roles and ClusterRoles, bindings RoleBindings and
	// ClusterRoleBindings: kubernetes_sd's RBAC, and nothing else.
	roles    []*rbacv1.ClusterRole
	bindings []*rbacv1.RoleBinding
	// The chart's optional objects.
	secrets         []*corev1.Secret
	pdbs            []*policyv1.PodDisruptionBudget
	networkPolicies []*networkingv1.NetworkPolicy
	ingresses       []*networkingv1.Ingress
	httpRoutes      []*gatewayv1.HTTPRoute
	kinds           map[string]int
}

// build runs kustomize on dir (relative to deploy/kubernetes) from the files
// on disk, and strict-decodes every object it emits into its API type.
func build(t *testing.T, dir string) *objects {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(kubeDir, dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	o := &objects{kinds: map[string]int{}}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s/%s as YAML: %v", dir, r.GetKind(), r.GetName(), err)
		}
		o.decode(t, dir, y)
	}
	return o
}

// decode strict-decodes one object's YAML into its API type and files it.
func (o *objects) decode(t *testing.T, where string, y []byte) {
	t.Helper()
	var meta struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(y, &meta); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, y)
	}
	id := fmt.Sprintf("%s: %s %s/%s", where, meta.APIVersion, meta.Kind, meta.Metadata.Name)
	var into any
	switch gk := meta.APIVersion + " " + meta.Kind; gk {
	case "v1 Namespace":
		v := &corev1.Namespace{}
		o.namespaces, into = append(o.namespaces, v), v
	case "apps/v1 Deployment":
		v := &appsv1.Deployment{}
		o.deployments, into = append(o.deployments, v), v
	case "apps/v1 StatefulSet":
		v := &appsv1.StatefulSet{}
		o.statefulSets, into = append(o.statefulSets, v), v
	case "v1 Service":
		v := &corev1.Service{}
		o.services, into = append(o.services, v), v
	case "v1 ConfigMap":
		v := &corev1.ConfigMap{}
		o.configMaps, into = append(o.configMaps, v), v
	case "v1 ServiceAccount":
		v := &corev1.ServiceAccount{}
		o.serviceAccounts, into = append(o.serviceAccounts, v), v
	case "v1 PersistentVolumeClaim":
		v := &corev1.PersistentVolumeClaim{}
		o.pvcs, into = append(o.pvcs, v), v
	case "monitoring.coreos.com/v1 ServiceMonitor":
		v := &monitoringv1.ServiceMonitor{}
		o.serviceMonitors, into = append(o.serviceMonitors, v), v
	case "monitoring.coreos.com/v1 PrometheusRule":
		v := &monitoringv1.PrometheusRule{}
		o.prometheusRules, into = append(o.prometheusRules, v), v
	case "rbac.authorization.k8s.io/v1 ClusterRole", "rbac.authorization.k8s.io/v1 Role":
		// A Role has the same fields as a ClusterRole but aggregationRule.
		v := &rbacv1.ClusterRole{}
		o.roles, into = append(o.roles, v), v
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding", "rbac.authorization.k8s.io/v1 RoleBinding":
		v := &rbacv1.RoleBinding{}
		o.bindings, into = append(o.bindings, v), v
	case "v1 Secret":
		v := &corev1.Secret{}
		o.secrets, into = append(o.secrets, v), v
	case "policy/v1 PodDisruptionBudget":
		v := &policyv1.PodDisruptionBudget{}
		o.pdbs, into = append(o.pdbs, v), v
	case "networking.k8s.io/v1 NetworkPolicy":
		v := &networkingv1.NetworkPolicy{}
		o.networkPolicies, into = append(o.networkPolicies, v), v
	case "networking.k8s.io/v1 Ingress":
		v := &networkingv1.Ingress{}
		o.ingresses, into = append(o.ingresses, v), v
	case "gateway.networking.k8s.io/v1 HTTPRoute":
		v := &gatewayv1.HTTPRoute{}
		o.httpRoutes, into = append(o.httpRoutes, v), v
	default:
		t.Fatalf("%s: no API type known for %q: add it to decode()", id, gk)
	}
	// Strict: duplicate keys and fields the type does not have fail.
	if err := yaml.UnmarshalStrict(y, into); err != nil {
		t.Fatalf("%s: strict decode: %v\n%s", id, err, y)
	}
	o.kinds[meta.Kind]++
	if errs := validation.IsDNS1123Subdomain(meta.Metadata.Name); len(errs) > 0 {
		t.Errorf("%s: name: %v", id, errs)
	}
}

func TestBuilds(t *testing.T) {
	for _, b := range sources() {
		t.Run(b.name, func(t *testing.T) {
			o := b.load(t)
			for _, k := range b.kinds {
				if o.kinds[k] == 0 {
					t.Errorf("no %s in the build (have %v)", k, o.kinds)
				}
			}
			if !b.monitoring && (len(o.serviceMonitors) > 0 || len(o.prometheusRules) > 0) {
				t.Errorf("prometheus-operator objects in %s: they belong in the monitoring component (or behind the chart's enabled flags)", b.name)
			}
		})
	}
}

// workload is a Deployment or a StatefulSet.
type workload struct {
	kind, name string
	replicas   *int32
	template   *corev1.PodTemplateSpec
	deployment *appsv1.Deployment
	sts        *appsv1.StatefulSet
}

func (o *objects) workloads() []workload {
	var out []workload
	for _, d := range o.deployments {
		out = append(out, workload{kind: "deployment", name: d.Name, replicas: d.Spec.Replicas, template: &d.Spec.Template, deployment: d})
	}
	for _, s := range o.statefulSets {
		out = append(out, workload{kind: "statefulset", name: s.Name, replicas: s.Spec.Replicas, template: &s.Spec.Template, sts: s})
	}
	return out
}

// driftdContainers returns the driftd containers of a pod spec: those named
// driftd or running the driftd image.
func driftdContainers(spec *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name == "driftd" || strings.HasPrefix(c.Image, driftdImageRef+":") {
			out = append(out, c)
		}
	}
	return out
}

func TestDriftdContainers(t *testing.T) {
	for _, b := range sources() {
		t.Run(b.name, func(t *testing.T) {
			o := b.load(t)
			found := 0
			for _, w := range o.workloads() {
				cs := driftdContainers(&w.template.Spec)
				if len(cs) == 0 {
					continue
				}
				found += len(cs)
				checkPod(t, o, w, b.sidecar)
				for _, c := range cs {
					checkContainer(t, o, w, c)
				}
			}
			if found != 1 {
				t.Fatalf("%d driftd containers in %s, want 1", found, b.name)
			}
		})
	}
}

func checkPod(t *testing.T, o *objects, w workload, sidecar bool) {
	t.Helper()
	spec := &w.template.Spec
	where := w.kind + " " + w.name
	if sidecar {
		if len(spec.Containers) < 2 {
			t.Errorf("%s: the sidecar overlay must leave the MCP server container beside driftd, have %d containers", where, len(spec.Containers))
		}
		return
	}
	switch {
	case w.deployment != nil:
		if w.replicas == nil || *w.replicas != 1 {
			t.Errorf("%s: replicas %v, want 1 (more would probe every target twice; use --shard on a StatefulSet)", where, w.replicas)
		}
		if w.deployment.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("%s: strategy %q, want Recreate", where, w.deployment.Spec.Strategy.Type)
		}
	case w.sts != nil:
		checkShards(t, w)
	}
	// driftd talks to the Kubernetes API only for kubernetes_sd, and then
	// with exactly the RBAC checked in TestKubernetesSDRBAC.
	apiAccess := len(o.bindings) > 0
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken != apiAccess {
		t.Errorf("%s: automountServiceAccountToken must be %v (RBAC bindings: %d)", where, apiAccess, len(o.bindings))
	}
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext must set runAsNonRoot and seccompProfile RuntimeDefault: %+v", where, psc)
	}
	sa := spec.ServiceAccountName
	if sa == "" {
		t.Errorf("%s: no serviceAccountName", where)
		return
	}
	var acct *corev1.ServiceAccount
	for _, a := range o.serviceAccounts {
		if a.Name == sa {
			acct = a
		}
	}
	if acct == nil {
		t.Errorf("%s: service account %q is not in the build", where, sa)
	} else if acct.AutomountServiceAccountToken == nil || *acct.AutomountServiceAccountToken != apiAccess {
		t.Errorf("service account %s: automountServiceAccountToken must be %v", sa, apiAccess)
	}
}

func checkContainer(t *testing.T, o *objects, w workload, c *corev1.Container) {
	t.Helper()
	where := fmt.Sprintf("%s %s container %s", w.kind, w.name, c.Name)
	spec := &w.template.Spec

	// Image: the base's image, with a tag, never latest.
	name, tag, ok := strings.Cut(c.Image, ":")
	if !ok || name != driftdImageRef || tag == "" || tag == "latest" {
		t.Errorf("%s: image %q: want %s:<version>", where, c.Image, driftdImageRef)
	}
	if len(c.Command) != 0 {
		t.Errorf("%s: command %q overrides the image's ENTRYPOINT", where, c.Command)
	}
	wantArgs := []string{"run", "--config.file=" + configFile, fmt.Sprintf("--web.listen-address=:%d", driftdPort)}
	if len(c.Args) < len(wantArgs) || !slices.Equal(c.Args[:len(wantArgs)], wantArgs) {
		t.Errorf("%s: args %q, want them to start with %q", where, c.Args, wantArgs)
	}

	// Security.
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("%s: no securityContext", where)
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("%s: runAsNonRoot must be true", where)
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != driftdUID {
		t.Errorf("%s: runAsUser %v, want %d", where, sc.RunAsUser, driftdUID)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem must be true", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation must be false", where)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", where)
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("%s: capabilities %+v, want drop [ALL] and nothing added", where, sc.Capabilities)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", where, sc.SeccompProfile)
	}

	// Resources: requests and limits for both cpu and memory, request <= limit.
	for _, rn := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[rn]
		lim, okLim := c.Resources.Limits[rn]
		if !okReq || !okLim {
			t.Errorf("%s: %s needs both a request and a limit (requests %v, limits %v)", where, rn, c.Resources.Requests, c.Resources.Limits)
			continue
		}
		if req.Cmp(lim) > 0 || req.Cmp(resource.Quantity{}) <= 0 {
			t.Errorf("%s: %s request %s, limit %s", where, rn, req.String(), lim.String())
		}
	}

	// Port and probes.
	var port *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].ContainerPort == driftdPort {
			port = &c.Ports[i]
		}
	}
	if port == nil || port.Name == "" {
		t.Fatalf("%s: no named containerPort %d", where, driftdPort)
	}
	if errs := validation.IsValidPortName(port.Name); len(errs) > 0 {
		t.Errorf("%s: port name %q: %v", where, port.Name, errs)
	}
	prefix, scheme := webOf(o, w, c)
	for _, p := range []struct {
		kind  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, prefix + "/-/healthy"}, {"readiness", c.ReadinessProbe, prefix + "/-/ready"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: no %s httpGet probe", where, p.kind)
			continue
		}
		g := p.probe.HTTPGet
		if g.Path != p.path {
			t.Errorf("%s: %s probe path %q, want %q", where, p.kind, g.Path, p.path)
		}
		if got := cmp.Or(g.Scheme, corev1.URISchemeHTTP); got != scheme {
			t.Errorf("%s: %s probe scheme %s, want %s", where, p.kind, got, scheme)
		}
		if !portMatches(g.Port, port) {
			t.Errorf("%s: %s probe port %s is not driftd's port %s/%d", where, p.kind, g.Port.String(), port.Name, port.ContainerPort)
		}
	}

	// Volumes: the ConfigMap as a directory at /etc/driftd (no subPath), and
	// a writable volume at the config's state_dir.
	volumes := map[string]*corev1.Volume{}
	for i := range spec.Volumes {
		volumes[spec.Volumes[i].Name] = &spec.Volumes[i]
	}
	claims := map[string]bool{}
	if w.sts != nil {
		for _, p := range w.sts.Spec.VolumeClaimTemplates {
			claims[p.Name] = true
		}
	}
	var cm *corev1.ConfigMap
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
		v := volumes[m.Name]
		if v == nil && claims[m.Name] {
			continue
		}
		if v == nil {
			t.Errorf("%s: mount %s: no volume %q in the pod", where, m.MountPath, m.Name)
			continue
		}
		if v.ConfigMap != nil || v.Secret != nil || v.Projected != nil {
			if m.SubPath != "" || m.SubPathExpr != "" {
				t.Errorf("%s: mount %s uses subPath: a subPath mount never sees ConfigMap or Secret updates, so driftd would not reload", where, m.MountPath)
			}
		}
	}
	cfgMount, ok := mounts[configDir]
	if !ok {
		t.Fatalf("%s: nothing mounted at %s", where, configDir)
	}
	if !cfgMount.ReadOnly {
		t.Errorf("%s: %s should be mounted readOnly", where, configDir)
	}
	if v := volumes[cfgMount.Name]; v != nil && v.Secret != nil {
		// The configuration from a Secret (the chart's
		// configExistingSecretName or secretConfig): held to the same checks.
		if len(v.Secret.Items) != 0 {
			t.Errorf("%s: the Secret volume lists items: mount every key, so new manifests need no workload change", where)
		}
		for _, x := range o.secrets {
			if x.Name == v.Secret.SecretName {
				cm = secretAsConfigMap(x)
			}
		}
		if cm == nil {
			t.Fatalf("%s: Secret %q is not in the build", where, v.Secret.SecretName)
		}
	} else if v == nil || v.ConfigMap == nil {
		t.Fatalf("%s: %s is not a ConfigMap or Secret volume", where, configDir)
	} else {
		if len(v.ConfigMap.Items) != 0 {
			t.Errorf("%s: the ConfigMap volume lists items: mount every key, so new manifests need no Deployment change", where)
		}
		for _, x := range o.configMaps {
			if x.Name == v.ConfigMap.Name {
				cm = x
			}
		}
		if cm == nil {
			t.Fatalf("%s: ConfigMap %q is not in the build", where, v.ConfigMap.Name)
		}
	}
	cfg := checkConfigMap(t, cm)
	if cfg == nil {
		return
	}
	sm, ok := mounts[cfg.Global.StateDir]
	if !ok {
		t.Errorf("%s: state_dir %s is not a mounted volume (the root filesystem is read-only)", where, cfg.Global.StateDir)
	} else if sm.ReadOnly {
		t.Errorf("%s: state_dir %s is mounted readOnly", where, cfg.Global.StateDir)
	} else if v := volumes[sm.Name]; v != nil && (v.EmptyDir != nil || v.PersistentVolumeClaim != nil) {
		// an emptyDir or a claim
	} else if claims[sm.Name] {
		// a claim per replica
	} else {
		t.Errorf("%s: state_dir volume %q is neither an emptyDir nor a PVC", where, sm.Name)
	}
	for _, v := range spec.Volumes {
		if c := v.PersistentVolumeClaim; c != nil && !slices.ContainsFunc(o.pvcs, func(p *corev1.PersistentVolumeClaim) bool { return p.Name == c.ClaimName }) {
			t.Errorf("%s: volume %s claims %q, which is not in the build", where, v.Name, c.ClaimName)
		}
	}

	// Credentials: every file a target's http_client reads (credentials_file,
	// password_file, http_headers files…) is in a Secret or ConfigMap
	// mounted into this container, so it exists and follows rotation.
	for _, tg := range cfg.Targets {
		for _, f := range secretFiles(tg.HTTPClient) {
			if !path.IsAbs(f) {
				f = path.Join(configDir, f)
			}
			mounted := false
			for mp, m := range mounts {
				v := volumes[m.Name]
				if v != nil && (v.Secret != nil || v.ConfigMap != nil || v.Projected != nil) && strings.HasPrefix(f, strings.TrimSuffix(mp, "/")+"/") {
					mounted = true
				}
			}
			if !mounted {
				t.Errorf("%s: target %s reads %s, which no Secret or ConfigMap mount of the container provides", where, tg.Name, f)
			}
		}
	}

	// Sidecar: every target is the pod's own loopback, on a port another
	// container of the pod serves.
	if len(spec.Containers) > 1 {
		others := map[int32]bool{}
		for _, x := range spec.Containers {
			if x.Name == c.Name {
				continue
			}
			for _, p := range x.Ports {
				others[p.ContainerPort] = true
			}
		}
		for _, tg := range cfg.Targets {
			u, err := url.Parse(tg.URL)
			if err != nil {
				t.Errorf("%s: target %s: url: %v", where, tg.Name, err)
				continue
			}
			p, _ := strconv.Atoi(u.Port())
			if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() || u.Path != "/mcp" || !others[int32(p)] {
				t.Errorf("%s: sidecar target %s url %q: want http://127.0.0.1:PORT/mcp with PORT a containerPort of the server beside it (%v)", where, tg.Name, tg.URL, others)
			}
		}
	}

	// A Service exposes the port under the name "http", selecting this pod.
	podLabels := labels.Set(w.template.Labels)
	exposed := false
	for _, s := range o.services {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			continue
		}
		for _, sp := range s.Spec.Ports {
			if sp.Name == "http" && sp.Port == driftdPort && portMatches(sp.TargetPort, port) {
				exposed = true
			}
		}
	}
	if !exposed {
		t.Errorf("%s: no Service selects the pod with a port named http (%d) targeting driftd's port", where, driftdPort)
	}
}

func portMatches(p intstr.IntOrString, port *corev1.ContainerPort) bool {
	if p.Type == intstr.String {
		return p.StrVal == port.Name
	}
	return p.IntVal == port.ContainerPort
}

// driftdConfig is the part of driftd's configuration these tests read.
type driftdConfig struct {
	Global struct {
		StateDir string `json:"state_dir"`
	} `json:"global"`
	Targets []struct {
		Name       string `json:"name"`
		URL        string `json:"url"`
		Manifest   string `json:"manifest"`
		HTTPClient any    `json:"http_client"`
	} `json:"targets"`
	TargetFiles  []string `json:"target_files"`
	KubernetesSD []any    `json:"kubernetes_sd"`
	RegistrySD   []any    `json:"registry_sd"`
}

// secretFiles returns the file paths an http_client block reads: the
// values of its *_file keys and of its http_headers' files lists.
func secretFiles(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && strings.HasSuffix(k, "_file") && s != "" {
				out = append(out, s)
			}
			if l, ok := e.([]any); ok && k == "files" {
				for _, f := range l {
					if s, ok := f.(string); ok {
						out = append(out, s)
					}
				}
			}
			out = append(out, secretFiles(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, secretFiles(e)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkConfigMap checks that the ConfigMap carries driftd.yml and every
// manifest it names, as flat keys beside it.
func checkConfigMap(t *testing.T, cm *corev1.ConfigMap) *driftdConfig {
	t.Helper()
	where := "configmap " + cm.Name
	raw, ok := cm.Data[path.Base(configFile)]
	if !ok {
		t.Errorf("%s: no key %s", where, path.Base(configFile))
		return nil
	}
	var cfg driftdConfig
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Errorf("%s: driftd.yml: %v", where, err)
		return nil
	}
	if !path.IsAbs(cfg.Global.StateDir) || path.Clean(cfg.Global.StateDir) != cfg.Global.StateDir {
		t.Errorf("%s: state_dir %q: want an absolute, clean path (a mounted volume)", where, cfg.Global.StateDir)
	}
	if len(cfg.Targets)+len(cfg.TargetFiles)+len(cfg.KubernetesSD)+len(cfg.RegistrySD) == 0 {
		t.Errorf("%s: no targets and no discovery", where)
	}
	for _, tg := range cfg.Targets {
		if tg.Manifest == "" {
			continue
		}
		m := tg.Manifest
		if path.IsAbs(m) {
			rel, ok := strings.CutPrefix(m, configDir+"/")
			if !ok {
				t.Errorf("%s: target %s: manifest %s is outside %s", where, tg.Name, m, configDir)
				continue
			}
			m = rel
		}
		if _, ok := cm.Data[m]; !ok {
			t.Errorf("%s: target %s: manifest %q is not a key of the ConfigMap (keys: %v)", where, tg.Name, tg.Manifest, keys(cm.Data))
		}
	}
	return &cfg
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestServiceMonitor(t *testing.T) {
	for _, b := range sources() {
		if !b.monitoring {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			o := b.load(t)
			if len(o.serviceMonitors) != 1 {
				t.Fatalf("%d ServiceMonitors, want 1", len(o.serviceMonitors))
			}
			sm := o.serviceMonitors[0]
			if len(sm.Spec.Endpoints) != 1 {
				t.Fatalf("servicemonitor %s: %d endpoints, want 1", sm.Name, len(sm.Spec.Endpoints))
			}
			ep := sm.Spec.Endpoints[0]
			prefix, scheme := "", corev1.URISchemeHTTP
			for _, w := range o.workloads() {
				for _, c := range driftdContainers(&w.template.Spec) {
					prefix, scheme = webOf(o, w, c)
				}
			}
			if ep.Port != "http" || ep.Path != prefix+"/metrics" {
				t.Errorf("servicemonitor %s: endpoint port %q path %q, want http %s/metrics", sm.Name, ep.Port, ep.Path, prefix)
			}
			if got := cmp.Or(ep.Scheme.String(), "http"); !strings.EqualFold(got, string(scheme)) {
				t.Errorf("servicemonitor %s: scheme %s, but driftd serves %s", sm.Name, got, scheme)
			}
			sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			selected := 0
			for _, s := range o.services {
				if !sel.Matches(labels.Set(s.Labels)) || !selectsNamespace(sm, s.Namespace) {
					continue
				}
				selected++
				named := false
				for _, p := range s.Spec.Ports {
					named = named || p.Name == ep.Port
				}
				if !named {
					t.Errorf("servicemonitor %s selects service %s, which has no port named %q", sm.Name, s.Name, ep.Port)
				}
			}
			if selected != 1 {
				t.Errorf("servicemonitor %s selects %d services, want 1", sm.Name, selected)
			}
		})
	}
}

// selectsNamespace: a ServiceMonitor looks for Services in its own
// namespace unless its namespaceSelector says otherwise.
func selectsNamespace(sm *monitoringv1.ServiceMonitor, ns string) bool {
	switch sel := sm.Spec.NamespaceSelector; {
	case sel.Any:
		return true
	case len(sel.MatchNames) > 0:
		return slices.Contains(sel.MatchNames, ns)
	}
	return ns == sm.Namespace
}

// checkShards: a StatefulSet of N replicas runs each driftd container with
// --shard=$(SHARD)/N, SHARD being the pod's ordinal from its pod-index label.
func checkShards(t *testing.T, w workload) {
	t.Helper()
	where := w.kind + " " + w.name
	if w.replicas == nil || *w.replicas < 2 {
		t.Errorf("%s: replicas %v: a sharded StatefulSet wants at least 2", where, w.replicas)
		return
	}
	want := fmt.Sprintf("--shard=$(SHARD)/%d", *w.replicas)
	for _, c := range driftdContainers(&w.template.Spec) {
		if !slices.Contains(c.Args, want) {
			t.Errorf("%s container %s: args %q lack %q (replicas and N must agree)", where, c.Name, c.Args, want)
		}
		ok := false
		for _, e := range c.Env {
			if e.Name == "SHARD" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+appsv1.PodIndexLabel+"']" {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s container %s: no env SHARD from the %s label", where, c.Name, appsv1.PodIndexLabel)
		}
	}
}

// Every overlay runs the same driftd image: the images: entries of the base
// and of the overlays that bring their own pod spec move together.
func TestOneDriftdImage(t *testing.T) {
	images := map[string][]string{}
	for _, b := range sources() {
		o := b.load(t)
		for _, w := range o.workloads() {
			for _, c := range driftdContainers(&w.template.Spec) {
				images[c.Image] = append(images[c.Image], b.name)
			}
		}
	}
	if len(images) != 1 {
		t.Errorf("the builds use different driftd images: %v", images)
	}
}
