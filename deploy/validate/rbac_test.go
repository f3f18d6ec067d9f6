package validate

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// kubernetesSDRules are what kubernetes_sd reads: Services, listed and
// watched by its informers, and the ConfigMaps that driftd.io/manifest
// names. Nothing more: no Secrets, no writes.
var kubernetesSDRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
}

// TestKubernetesSDRBAC: every role a build carries grants exactly
// kubernetes_sd's rules, and every binding binds such a role to the
// service account the driftd pod runs as, in its namespace.
func TestKubernetesSDRBAC(t *testing.T) {
	withRBAC := 0
	for _, b := range sources() {
		t.Run(b.name, func(t *testing.T) {
			o := b.load(t)
			if len(o.roles) > 0 {
				withRBAC++
			}
			names := map[string]bool{}
			for _, r := range o.roles {
				names[r.Name] = true
				if !slices.EqualFunc(r.Rules, kubernetesSDRules, func(a, b rbacv1.PolicyRule) bool {
					return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Verbs, b.Verbs) &&
						len(a.ResourceNames) == 0 && len(a.NonResourceURLs) == 0
				}) {
					t.Errorf("role %s grants %+v, want exactly %+v", r.Name, r.Rules, kubernetesSDRules)
				}
			}
			accounts := map[string]bool{}
			for _, w := range o.workloads() {
				if len(driftdContainers(&w.template.Spec)) > 0 {
					accounts[w.template.Spec.ServiceAccountName] = true
				}
			}
			for _, rb := range o.bindings {
				if rb.RoleRef.APIGroup != rbacv1.GroupName || !names[rb.RoleRef.Name] {
					t.Errorf("binding %s refers to %+v, not a role of the build", rb.Name, rb.RoleRef)
				}
				if len(rb.Subjects) != 1 || rb.Subjects[0].Kind != rbacv1.ServiceAccountKind || !accounts[rb.Subjects[0].Name] || rb.Subjects[0].Namespace == "" {
					t.Errorf("binding %s binds %+v, want driftd's service account %v with its namespace", rb.Name, rb.Subjects, accounts)
				}
				if ns := o.namespaceOf(rb.Subjects); ns != "" && ns != rb.Subjects[0].Namespace {
					t.Errorf("binding %s: subject namespace %q, driftd runs in %q", rb.Name, rb.Subjects[0].Namespace, ns)
				}
			}
			if len(o.roles) > 0 && len(o.bindings) == 0 {
				t.Error("roles without a binding")
			}
		})
	}
	if withRBAC == 0 {
		t.Error("no build carries kubernetes_sd's RBAC")
	}
}

// namespaceOf is the namespace of the service account subjects names, as
// the build declares it, or "".
func (o *objects) namespaceOf(subjects []rbacv1.Subject) string {
	for _, s := range subjects {
		for _, a := range o.serviceAccounts {
			if a.Name == s.Name {
				return a.Namespace
			}
		}
	}
	return ""
}
