package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

const rbacPath = "/apis/rbac.authorization.k8s.io/v1"

// TestRBACEscalationRefused is issue 26's RBAC escalation check: a user
// may write roles only with rules she holds and bindings only to roles
// whose rules she holds, unless she may escalate (roles) or bind
// (bindings); system:masters may do anything. Before the check, a user
// allowed only to create RoleBindings bound cluster-admin to herself.
func TestRBACEscalationRefused(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	as := func(user string, groups ...string) *tclient {
		return &tclient{t: t, base: s.SecureURL(), hc: userClient(t, s, user, groups...)}
	}
	admin.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "team"}})
	admin.must(201, "POST", "/api/v1/namespaces/team/secrets", map[string]any{"metadata": map[string]any{"name": "s"}})
	rule := func(group, resource string, verbs ...string) map[string]any {
		return map[string]any{"apiGroups": []string{group}, "resources": []string{resource}, "verbs": verbs}
	}
	grant := func(user, role string, rules ...map[string]any) {
		admin.must(201, "POST", rbacPath+"/namespaces/team/roles", map[string]any{"metadata": map[string]any{"name": role}, "rules": rules})
		admin.must(201, "POST", rbacPath+"/namespaces/team/rolebindings", map[string]any{
			"metadata": map[string]any{"name": role + "-" + user},
			"subjects": []any{map[string]any{"kind": "User", "name": user}},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}})
	}
	binding := func(name, user, kind, role string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name},
			"subjects": []any{map[string]any{"kind": "User", "name": user}},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role}}
	}
	role := func(name string, rules ...map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "rules": rules}
	}
	message := func(r response) string {
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m)
		msg, _ := m["message"].(string)
		return msg
	}
	// eventually waits for the RBAC caches to hold the grants: until then
	// the authorizer refuses the user with another message.
	eventually := func(c *tclient, code int, method, path string, body any, contentType string, contains string) response {
		t.Helper()
		var r response
		waitForState(t, 10*time.Second, func() bool {
			r = c.do(method, path, body, contentType)
			return r.Code == code && (contains == "" || strings.Contains(message(r), contains))
		}, func() string { return string(r.Body) })
		return r
	}
	const held = "is attempting to grant RBAC permissions not currently held:\n"

	// alice may only create RoleBindings in team: binding cluster-admin to
	// herself is an escalation.
	grant("alice", "rb-creator", rule("rbac.authorization.k8s.io", "rolebindings", "create"))
	alice := as("alice")
	r := eventually(alice, 403, "POST", rbacPath+"/namespaces/team/rolebindings", binding("alice-admin", "alice", "ClusterRole", "cluster-admin"), "", held)
	want := `rolebindings.rbac.authorization.k8s.io "alice-admin" is forbidden: user "alice" (groups=["system:authenticated"]) ` + held +
		`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}` + "\n" + `{NonResourceURLs:["*"], Verbs:["*"]}`
	if got := message(r); got != want {
		t.Errorf("escalating binding:\n got %q\nwant %q", got, want)
	}
	if o := r.obj(t); o["reason"] != "Forbidden" || o["details"].(map[string]any)["kind"] != "rolebindings" {
		t.Errorf("escalating binding status: %s", r.Body)
	}
	if got := alice.do("GET", "/api/v1/namespaces/team/secrets", nil, "").Code; got != 403 {
		t.Errorf("alice reads the secrets: %d", got)
	}
	// A binding to a role she holds is no escalation; to a missing role, NotFound.
	eventually(alice, 201, "POST", rbacPath+"/namespaces/team/rolebindings", binding("alice-self", "alice", "Role", "rb-creator"), "", "")
	if r := alice.do("POST", rbacPath+"/namespaces/team/rolebindings", binding("alice-none", "alice", "ClusterRole", "nothing"), ""); r.Code != 404 {
		t.Errorf("binding a missing role: %d %s", r.Code, r.Body)
	}
	// With bind on cluster-admin, she may.
	admin.must(201, "POST", rbacPath+"/clusterroles", role("bind-admin",
		map[string]any{"apiGroups": []string{"rbac.authorization.k8s.io"}, "resources": []string{"clusterroles"}, "verbs": []string{"bind"}, "resourceNames": []string{"cluster-admin"}}))
	admin.must(201, "POST", rbacPath+"/namespaces/team/rolebindings", binding("bind-admin-alice", "alice", "ClusterRole", "bind-admin"))
	eventually(alice, 201, "POST", rbacPath+"/namespaces/team/rolebindings", binding("alice-admin", "alice", "ClusterRole", "cluster-admin"), "", "")
	eventually(alice, 200, "GET", "/api/v1/namespaces/team/secrets", nil, "", "")

	// bob writes roles: with rules he holds, yes; beyond them, no, on
	// create, update and patch.
	grant("bob", "role-writer", rule("rbac.authorization.k8s.io", "roles", "create", "update", "patch", "get"), rule("", "pods", "get", "list"))
	bob := as("bob")
	eventually(bob, 201, "POST", rbacPath+"/namespaces/team/roles", role("pod-reader", rule("", "pods", "get")), "", "")
	r = bob.do("POST", rbacPath+"/namespaces/team/roles", role("secret-reader", rule("", "secrets", "get", "list"), rule("", "pods", "list")), "")
	want = `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "bob" (groups=["system:authenticated"]) ` + held +
		`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`
	if r.Code != 403 || message(r) != want {
		t.Errorf("escalating role: %d\n got %q\nwant %q", r.Code, message(r), want)
	}
	cur := bob.must(200, "GET", rbacPath+"/namespaces/team/roles/pod-reader", nil)
	cur["rules"] = []any{rule("", "pods", "get", "delete")}
	r = bob.do("PUT", rbacPath+"/namespaces/team/roles/pod-reader", cur, "")
	if r.Code != 403 || !strings.Contains(message(r), held+`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`) {
		t.Errorf("widening update: %d %s", r.Code, r.Body)
	}
	r = bob.do("PATCH", rbacPath+"/namespaces/team/roles/pod-reader", `{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["*"]}]}`, "application/merge-patch+json")
	if r.Code != 403 || !strings.Contains(message(r), `{APIGroups:[""], Resources:["pods"], Verbs:["*"]}`) {
		t.Errorf("widening patch: %d %s", r.Code, r.Body)
	}
	r = bob.do("PATCH", rbacPath+"/namespaces/team/roles/pod-reader?fieldManager=bob&force=true",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: pod-reader, namespace: team}\nrules: [{apiGroups: [''], resources: [pods, secrets], verbs: [get]}]\n",
		"application/apply-patch+yaml")
	if r.Code != 403 || !strings.Contains(message(r), held+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`) {
		t.Errorf("widening apply: %d %s", r.Code, r.Body)
	}
	r = bob.do("PATCH", rbacPath+"/namespaces/team/roles/applied?fieldManager=bob",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: applied, namespace: team}\nrules: [{apiGroups: [''], resources: [secrets], verbs: [get]}]\n",
		"application/apply-patch+yaml")
	if r.Code != 403 || !strings.Contains(message(r), held+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`) {
		t.Errorf("escalating apply that creates: %d %s", r.Code, r.Body)
	}
	bob.must(200, "PATCH", rbacPath+"/namespaces/team/roles/pod-reader", `{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]}`, "application/merge-patch+json")
	// An update of nothing but the garbage collector's fields passes
	// whatever the role grants (the admin widens it first).
	admin.must(201, "POST", rbacPath+"/namespaces/team/roles", role("wide", rule("", "secrets", "*")))
	eventually(bob, 200, "PATCH", rbacPath+"/namespaces/team/roles/wide", `{"metadata":{"finalizers":["example.com/keep"]}}`, "application/merge-patch+json", "")

	// carol may escalate roles.
	grant("carol", "escalator", rule("rbac.authorization.k8s.io", "roles", "create", "escalate"))
	eventually(as("carol"), 201, "POST", rbacPath+"/namespaces/team/roles", role("carol-secrets", rule("", "secrets", "*")), "", "")

	// dave creates ClusterRoleBindings: to what he holds, yes; to
	// cluster-admin, no.
	admin.must(201, "POST", rbacPath+"/clusterroles", role("crb-creator", rule("rbac.authorization.k8s.io", "clusterrolebindings", "create")))
	admin.must(201, "POST", rbacPath+"/clusterrolebindings", binding("crb-creator-dave", "dave", "ClusterRole", "crb-creator"))
	dave := as("dave")
	eventually(dave, 201, "POST", rbacPath+"/clusterrolebindings", binding("dave-self", "dave", "ClusterRole", "crb-creator"), "", "")
	r = dave.do("POST", rbacPath+"/clusterrolebindings", binding("dave-admin", "dave", "ClusterRole", "cluster-admin"), "")
	want = `clusterrolebindings.rbac.authorization.k8s.io "dave-admin" is forbidden: user "dave" (groups=["system:authenticated"]) ` + held +
		`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}` + "\n" + `{NonResourceURLs:["*"], Verbs:["*"]}`
	if r.Code != 403 || message(r) != want {
		t.Errorf("escalating cluster role binding: %d\n got %q\nwant %q", r.Code, message(r), want)
	}

	// system:masters is never refused.
	root := as("root", "system:masters")
	root.must(201, "POST", rbacPath+"/clusterrolebindings", binding("root-admin", "someone", "ClusterRole", "cluster-admin"))
	root.must(201, "POST", rbacPath+"/clusterroles", map[string]any{"metadata": map[string]any{"name": "agg"},
		"aggregationRule": map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]string{"a": "b"}}}}})
}

// waitForState is waitFor that says, on failure, the state last seen.
func waitForState(t *testing.T, d time.Duration, ok func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", d, state())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
