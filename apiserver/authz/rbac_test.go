package authz

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// staticRules is a RuleSource over fixed objects.
type staticRules struct {
	clusterRoles        []*api.ClusterRole
	roles               []*api.Role
	clusterRoleBindings []*api.ClusterRoleBinding
	roleBindings        []*api.RoleBinding
}

var _ RuleSource = (*staticRules)(nil)

func (s *staticRules) ListClusterRoleBindings() []*api.ClusterRoleBinding {
	return s.clusterRoleBindings
}

func (s *staticRules) ListRoleBindings(namespace string) []*api.RoleBinding {
	var out []*api.RoleBinding
	for _, b := range s.roleBindings {
		if b.Namespace == namespace {
			out = append(out, b)
		}
	}
	return out
}

func (s *staticRules) GetClusterRole(name string) (*api.ClusterRole, bool) {
	for _, r := range s.clusterRoles {
		if r.Name == name {
			return r, true
		}
	}
	return nil, false
}

func (s *staticRules) GetRole(namespace, name string) (*api.Role, bool) {
	for _, r := range s.roles {
		if r.Namespace == namespace && r.Name == name {
			return r, true
		}
	}
	return nil, false
}

func user(name string) api.Subject {
	return api.Subject{Kind: api.UserKind, APIGroup: api.RBACGroupName, Name: name}
}

func group(name string) api.Subject {
	return api.Subject{Kind: api.GroupKind, APIGroup: api.RBACGroupName, Name: name}
}

func clusterRef(name string) api.RoleRef {
	return api.RoleRef{APIGroup: api.RBACGroupName, Kind: "ClusterRole", Name: name}
}

func roleRef(name string) api.RoleRef {
	return api.RoleRef{APIGroup: api.RBACGroupName, Kind: "Role", Name: name}
}

func testRBACSource() *staticRules {
	podReader := []api.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	return &staticRules{
		clusterRoles: []*api.ClusterRole{
			{ObjectMeta: api.ObjectMeta{Name: "pod-reader"}, Rules: podReader},
			{ObjectMeta: api.ObjectMeta{Name: "node-reader"}, Rules: []api.PolicyRule{
				{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"nodes"}}}},
			{ObjectMeta: api.ObjectMeta{Name: "deploy-scaler"}, Rules: []api.PolicyRule{
				{Verbs: []string{"get", "update", "patch"}, APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}}}},
			{ObjectMeta: api.ObjectMeta{Name: "metrics"}, Rules: []api.PolicyRule{
				{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/debug/*"}}}},
		},
		roles: []*api.Role{
			{ObjectMeta: api.ObjectMeta{Namespace: "team-a", Name: "config-editor"}, Rules: []api.PolicyRule{
				{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
				{Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"app-secret"}}}},
		},
		clusterRoleBindings: []*api.ClusterRoleBinding{
			{ObjectMeta: api.ObjectMeta{Name: "ops-nodes"}, Subjects: []api.Subject{group("ops")}, RoleRef: clusterRef("node-reader")},
			{ObjectMeta: api.ObjectMeta{Name: "scrapers"}, Subjects: []api.Subject{
				{Kind: api.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus"}}, RoleRef: clusterRef("metrics")},
			{ObjectMeta: api.ObjectMeta{Name: "dangling"}, Subjects: []api.Subject{user("carol")}, RoleRef: clusterRef("gone")},
		},
		roleBindings: []*api.RoleBinding{
			{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "alice-pods"}, Subjects: []api.Subject{user("alice")}, RoleRef: clusterRef("pod-reader")},
			{ObjectMeta: api.ObjectMeta{Namespace: "team-a", Name: "devs-config"}, Subjects: []api.Subject{group("devs")}, RoleRef: roleRef("config-editor")},
			{ObjectMeta: api.ObjectMeta{Namespace: "team-a", Name: "ci"}, Subjects: []api.Subject{
				{Kind: api.ServiceAccountKind, Name: "deployer"}}, RoleRef: clusterRef("deploy-scaler")},
			{ObjectMeta: api.ObjectMeta{Namespace: "team-a", Name: "carol-missing"}, Subjects: []api.Subject{user("carol")}, RoleRef: roleRef("missing")},
			// A Role of another namespace cannot be granted from here.
			{ObjectMeta: api.ObjectMeta{Namespace: "team-b", Name: "borrow"}, Subjects: []api.Subject{user("bob")}, RoleRef: roleRef("config-editor")},
		},
	}
}

func TestRBAC(t *testing.T) {
	t.Parallel()
	az := NewRBAC(testRBACSource())
	alice := &request.User{Name: "alice", Groups: []string{AllAuthenticated}}
	dev := &request.User{Name: "dave", Groups: []string{"devs", AllAuthenticated}}
	op := &request.User{Name: "olga", Groups: []string{"ops", AllAuthenticated}}
	prom := &request.User{Name: "system:serviceaccount:monitoring:prometheus"}
	deployer := &request.User{Name: "system:serviceaccount:team-a:deployer"}
	carol := &request.User{Name: "carol"}
	bob := &request.User{Name: "bob"}
	tests := []struct {
		name       string
		a          Attributes
		want       Decision
		wantReason string
	}{
		{"role binding to a cluster role grants in its namespace", res(alice, "list", "", "pods", "", "default", ""), Allow,
			`RBAC: allowed by RoleBinding "alice-pods/default" of ClusterRole "pod-reader" to User "alice"`},
		{"only there", res(alice, "list", "", "pods", "", "kube-system", ""), NoOpinion, ""},
		{"not across all namespaces", res(alice, "list", "", "pods", "", "", ""), NoOpinion, ""},
		{"nor other verbs", res(alice, "delete", "", "pods", "", "default", "p"), NoOpinion, ""},
		{"nor subresources", res(alice, "get", "", "pods", "log", "default", "p"), NoOpinion, ""},
		{"group in a role binding", res(dev, "create", "", "configmaps", "", "team-a", ""), Allow,
			`RBAC: allowed by RoleBinding "devs-config/team-a" of Role "config-editor" to Group "devs"`},
		{"resource names", res(dev, "update", "", "secrets", "", "team-a", "app-secret"), Allow,
			`RBAC: allowed by RoleBinding "devs-config/team-a" of Role "config-editor" to Group "devs"`},
		{"other names", res(dev, "get", "", "secrets", "", "team-a", "db-secret"), NoOpinion, ""},
		{"listing named objects", res(dev, "list", "", "secrets", "", "team-a", ""), NoOpinion, ""},
		{"cluster role binding grants everywhere", res(op, "get", "", "nodes", "", "", "n1"), Allow,
			`RBAC: allowed by ClusterRoleBinding "ops-nodes" of ClusterRole "node-reader" to Group "ops"`},
		{"not more", res(op, "delete", "", "nodes", "", "", "n1"), NoOpinion, ""},
		{"service account with namespace, non-resource URL", path(prom, "get", "/debug/pprof/heap"), Allow,
			`RBAC: allowed by ClusterRoleBinding "scrapers" of ClusterRole "metrics" to ServiceAccount "prometheus/monitoring"`},
		{"service account in the binding's namespace", res(deployer, "patch", "apps", "deployments", "scale", "team-a", "web"), Allow,
			`RBAC: allowed by RoleBinding "ci/team-a" of ClusterRole "deploy-scaler" to ServiceAccount "deployer/team-a"`},
		{"a same-named account elsewhere", res(&request.User{Name: "system:serviceaccount:team-b:deployer"},
			"patch", "apps", "deployments", "scale", "team-a", "web"), NoOpinion, ""},
		{"missing roles are the reason", res(carol, "get", "", "configmaps", "", "team-a", "c"), NoOpinion,
			`RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "missing" not found]`},
		{"one missing role", res(carol, "get", "", "nodes", "", "", "n"), NoOpinion,
			`RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found`},
		{"a Role is looked up in the binding's namespace", res(bob, "get", "", "configmaps", "", "team-b", "c"), NoOpinion,
			`RBAC: role.rbac.authorization.k8s.io "config-editor" not found`},
		{"no user", res(nil, "get", "", "pods", "", "default", "p"), NoOpinion, ""},
	}
	for _, tc := range tests {
		d, reason, err := az.Authorize(context.Background(), tc.a)
		if err != nil || d != tc.want || reason != tc.wantReason {
			t.Errorf("%s: got %v %q %v; want %v %q", tc.name, d, reason, err, tc.want, tc.wantReason)
		}
	}
}

// A ClusterRoleBinding to a Role is an error, not a grant.
func TestRBACClusterBindingToRole(t *testing.T) {
	t.Parallel()
	src := &staticRules{
		roles:               []*api.Role{{ObjectMeta: api.ObjectMeta{Name: "r"}, Rules: []api.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}},
		clusterRoleBindings: []*api.ClusterRoleBinding{{ObjectMeta: api.ObjectMeta{Name: "b"}, Subjects: []api.Subject{user("eve")}, RoleRef: roleRef("r")}},
	}
	d, reason, _ := NewRBAC(src).Authorize(context.Background(), res(&request.User{Name: "eve"}, "get", "", "pods", "", "default", "p"))
	if d != NoOpinion || reason != `RBAC: unsupported role reference kind: "Role"` {
		t.Errorf("got %v %q", d, reason)
	}
}
