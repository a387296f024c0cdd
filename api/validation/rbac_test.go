package validation

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
)

func TestValidateRoles(t *testing.T) {
	t.Parallel()
	rule := api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	tests := []struct {
		name string
		obj  api.Object
		want []string
	}{
		{"valid role", &api.Role{ObjectMeta: api.ObjectMeta{Name: "reader", Namespace: "default"}, Rules: []api.PolicyRule{rule}}, nil},
		{"rbac names need only be path segments", &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "system:node"},
			Rules: []api.PolicyRule{rule}}, nil},
		{"bad names", &api.Role{ObjectMeta: api.ObjectMeta{Name: "a/b%c", Namespace: "default"}}, []string{
			`metadata.name: Invalid value: "a/b%c": may not contain '/'`,
			`metadata.name: Invalid value: "a/b%c": may not contain '%'`,
		}},
		{"role needs a namespace", &api.Role{ObjectMeta: api.ObjectMeta{Name: "r"}}, []string{"metadata.namespace: Required value"}},
		{"cluster role has none", &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "x"}},
			[]string{"metadata.namespace: Forbidden: not allowed on this type"}},
		{"verbs, groups and resources required", &api.Role{ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "default"},
			Rules: []api.PolicyRule{{}}}, []string{
			"rules[0].verbs: Required value: verbs must contain at least one value",
			"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
			"rules[0].resources: Required value: resource rules must supply at least one resource",
		}},
		{"non-resource URLs in a role", &api.Role{ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "default"},
			Rules: []api.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}}, []string{
			`rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: namespaced rules cannot apply to non-resource URLs`,
		}},
		{"non-resource URLs in a cluster role", &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "r"},
			Rules: []api.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/api/*"}}}}, nil},
		{"both kinds in one rule", &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "r"},
			Rules: []api.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"pods"}, NonResourceURLs: []string{"/metrics"}}}}, []string{
			`rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: rules cannot apply to both regular resources and non-resource URLs`,
		}},
		{"empty aggregation rule", &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "r"}, AggregationRule: &api.AggregationRule{}}, []string{
			"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
		}},
		{"aggregation selector", &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "r"}, AggregationRule: &api.AggregationRule{
			ClusterRoleSelectors: []api.LabelSelector{{MatchLabels: map[string]string{"rbac.example.com/aggregate": "true"}},
				{MatchExpressions: []api.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}},
		}}, []string{`aggregationRule.clusterRoleSelectors[1].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`}},
	}
	for _, tc := range tests {
		checkErrs(t, tc.name, Validate(tc.obj), tc.want)
	}
}

func TestValidateBindings(t *testing.T) {
	t.Parallel()
	rb := func(mutate func(*api.RoleBinding)) *api.RoleBinding {
		b := &api.RoleBinding{
			ObjectMeta: api.ObjectMeta{Name: "read-pods", Namespace: "default"},
			Subjects:   []api.Subject{{Kind: api.UserKind, Name: "alice"}, {Kind: api.ServiceAccountKind, Name: "default"}},
			RoleRef:    api.RoleRef{Kind: "Role", Name: "pod-reader"},
		}
		mutate(b)
		defaults.Default(b)
		return b
	}
	crb := func(mutate func(*api.ClusterRoleBinding)) *api.ClusterRoleBinding {
		b := &api.ClusterRoleBinding{
			ObjectMeta: api.ObjectMeta{Name: "admins"},
			Subjects:   []api.Subject{{Kind: api.GroupKind, Name: "system:masters"}},
			RoleRef:    api.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
		}
		mutate(b)
		defaults.Default(b)
		return b
	}
	tests := []struct {
		name string
		obj  api.Object
		want []string
	}{
		{"valid role binding", rb(func(*api.RoleBinding) {}), nil},
		{"role binding to a cluster role", rb(func(b *api.RoleBinding) { b.RoleRef.Kind = "ClusterRole" }), nil},
		{"valid cluster role binding", crb(func(*api.ClusterRoleBinding) {}), nil},
		{"roleRef required", rb(func(b *api.RoleBinding) { b.RoleRef = api.RoleRef{APIGroup: "example.com"} }), []string{
			`roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"`,
			`roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"`,
			"roleRef.name: Required value",
		}},
		{"cluster role binding to a Role", crb(func(b *api.ClusterRoleBinding) { b.RoleRef.Kind = "Role"; b.RoleRef.Name = "a/b" }), []string{
			`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`,
			`roleRef.name: Invalid value: "a/b": may not contain '/'`,
		}},
		{"subject kinds", rb(func(b *api.RoleBinding) {
			b.Subjects = []api.Subject{{Kind: "Robot", Name: "r2"}, {Kind: api.UserKind}, {Kind: api.GroupKind, APIGroup: "v1", Name: "g"}}
		}), []string{
			`subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`,
			"subjects[1].name: Required value",
			`subjects[2].apiGroup: Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"`,
		}},
		{"service account subjects", crb(func(b *api.ClusterRoleBinding) {
			b.Subjects = []api.Subject{{Kind: api.ServiceAccountKind, Name: "Bad_Name", APIGroup: "rbac.authorization.k8s.io"}}
		}), []string{
			`subjects[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain ...`,
			`subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""`,
			"subjects[0].namespace: Required value",
		}},
	}
	for _, tc := range tests {
		checkErrs(t, tc.name, Validate(tc.obj), tc.want)
	}

	old := rb(func(*api.RoleBinding) {})
	old.ResourceVersion = "5"
	upd := api.DeepCopy(old)
	upd.Subjects = append(upd.Subjects, api.Subject{Kind: api.GroupKind, Name: "devs", APIGroup: api.RBACGroupName})
	checkErrs(t, "subjects may change", ValidateUpdate(upd, old), nil)
	upd.RoleRef.Name = "pod-writer"
	checkErrs(t, "roleRef may not", ValidateUpdate(upd, old), []string{
		`roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"pod-writer"}: cannot change roleRef`,
	})
	oldC := crb(func(*api.ClusterRoleBinding) {})
	oldC.ResourceVersion = "5"
	updC := api.DeepCopy(oldC)
	updC.RoleRef.Name = "view"
	checkErrs(t, "cluster roleRef may not", ValidateUpdate(updC, oldC), []string{
		`roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef`,
	})
	role := &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "r", ResourceVersion: "1"}}
	role2 := api.DeepCopy(role)
	role2.Name = "other"
	checkErrs(t, "role rename", ValidateUpdate(role2, role), []string{`metadata.name: Invalid value: "other": field is immutable`})
}
