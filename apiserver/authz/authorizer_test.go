package authz

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

func alice() *request.User {
	return &request.User{Name: "alice", Groups: []string{"devs", AllAuthenticated}}
}

// res builds the attributes of a resource request.
func res(u *request.User, verb, group, resource, sub, ns, name string) Attributes {
	return Attributes{User: u, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: sub,
		Namespace: ns, Name: name, IsResourceRequest: true}
}

func path(u *request.User, verb, p string) Attributes {
	return Attributes{User: u, Verb: verb, Path: p}
}

func TestRulesAllow(t *testing.T) {
	t.Parallel()
	u := alice()
	tests := []struct {
		name string
		rule api.PolicyRule
		a    Attributes
		want bool
	}{
		{"exact", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			res(u, "get", "", "pods", "", "default", "web"), true},
		{"other verb", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			res(u, "list", "", "pods", "", "default", ""), false},
		{"verb wildcard", api.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			res(u, "deletecollection", "", "pods", "", "default", ""), true},
		{"other group", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"deployments"}},
			res(u, "get", "apps", "deployments", "", "default", "d"), false},
		{"group wildcard", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"deployments"}},
			res(u, "get", "apps", "deployments", "", "default", "d"), true},
		{"resource wildcard covers subresources", api.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"*"}},
			res(u, "update", "", "pods", "status", "default", "p"), true},
		{"the resource does not cover its subresources", api.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			res(u, "update", "", "pods", "status", "default", "p"), false},
		{"resource/subresource", api.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"pods/status"}},
			res(u, "update", "", "pods", "status", "default", "p"), true},
		{"resource/subresource is not the resource", api.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"pods/status"}},
			res(u, "update", "", "pods", "", "default", "p"), false},
		{"*/scale", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}},
			res(u, "get", "apps", "deployments", "scale", "default", "d"), true},
		{"*/scale is not */status", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}},
			res(u, "get", "apps", "deployments", "status", "default", "d"), false},
		{"*/scale is not the main resource", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}},
			res(u, "get", "apps", "deployments", "", "default", "d"), false},
		{"resource names: get", api.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}},
			res(u, "get", "", "configmaps", "", "default", "cfg"), true},
		{"resource names: other name", api.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}},
			res(u, "get", "", "configmaps", "", "default", "other"), false},
		{"resource names: list has no name", api.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}},
			res(u, "list", "", "configmaps", "", "default", ""), false},
		{"resource names: create has no name", api.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}},
			res(u, "create", "", "configmaps", "", "default", ""), false},
		{"non-resource exact", api.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
			path(u, "get", "/healthz"), true},
		{"non-resource exact is exact", api.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
			path(u, "get", "/healthz/etcd"), false},
		{"non-resource glob", api.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api/*"}},
			path(u, "get", "/api/v1"), true},
		{"non-resource glob needs its prefix", api.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api/*"}},
			path(u, "get", "/apis"), false},
		{"non-resource wildcard", api.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
			path(u, "post", "/anything"), true},
		{"non-resource verb", api.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}},
			path(u, "post", "/logs"), false},
		{"resource rules do not cover paths", api.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			path(u, "get", "/healthz"), false},
		{"path rules do not cover resources", api.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
			res(u, "get", "", "pods", "", "default", "p"), false},
	}
	for _, tc := range tests {
		if got := RulesAllow(tc.a, tc.rule); got != tc.want {
			t.Errorf("%s: RulesAllow = %t, want %t", tc.name, got, tc.want)
		}
	}
	if RulesAllow(res(u, "get", "", "pods", "", "", "p")) {
		t.Error("no rules allowed a request")
	}
}

func TestForbiddenMessage(t *testing.T) {
	t.Parallel()
	u := alice()
	tests := []struct {
		a      Attributes
		reason string
		want   string
	}{
		{res(u, "list", "", "pods", "", "default", ""), "",
			`User "alice" cannot list resource "pods" in API group "" in the namespace "default"`},
		{res(u, "get", "apps", "deployments", "scale", "web", "d"), "",
			`User "alice" cannot get resource "deployments/scale" in API group "apps" in the namespace "web"`},
		{res(u, "list", "", "nodes", "", "", ""), "",
			`User "alice" cannot list resource "nodes" in API group "" at the cluster scope`},
		{path(u, "get", "/metrics"), "",
			`User "alice" cannot get path "/metrics"`},
		{res(u, "get", "", "pods", "", "default", "p"), `RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`,
			`User "alice" cannot get resource "pods" in API group "" in the namespace "default": RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`},
		{path(&request.User{Name: "<b>&"}, "get", "/x"), "", `User "&lt;b&gt;&amp;" cannot get path "/x"`},
		{path(nil, "get", "/x"), "", `User "" cannot get path "/x"`},
	}
	for _, tc := range tests {
		if got := ForbiddenMessage(tc.a, tc.reason); got != tc.want {
			t.Errorf("ForbiddenMessage(%+v) =\n  %s\nwant\n  %s", tc.a, got, tc.want)
		}
	}
}

func TestAttributesFrom(t *testing.T) {
	t.Parallel()
	u := alice()
	for _, tc := range []struct {
		method, url string
		want        Attributes
	}{
		{"GET", "/api/v1/namespaces/default/pods/web", res(u, "get", "", "pods", "", "default", "web")},
		{"PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale", res(u, "update", "apps", "deployments", "scale", "ns", "d")},
		// A namespace is in itself, as in kube-apiserver.
		{"GET", "/api/v1/namespaces/team-a", res(u, "get", "", "namespaces", "", "team-a", "team-a")},
		{"PUT", "/api/v1/namespaces/team-a/finalize", res(u, "update", "", "namespaces", "finalize", "team-a", "team-a")},
		{"GET", "/api/v1/namespaces", res(u, "list", "", "namespaces", "", "", "")},
		{"GET", "/healthz", Attributes{User: u, Verb: "get", Path: "/healthz"}},
	} {
		info := request.ParseInfo(httptest.NewRequest(tc.method, tc.url, nil))
		got := AttributesFrom(info, u)
		tc.want.Path = info.Path
		if !tc.want.IsResourceRequest {
			tc.want.APIVersion = ""
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: got %+v, want %+v", tc.method, tc.url, got, tc.want)
		}
	}
}

func TestUnion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := res(alice(), "get", "", "pods", "", "default", "p")
	fixed := func(d Decision, reason string, err error) Authorizer {
		return AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return d, reason, err })
	}
	boom := errors.New("boom")
	tests := []struct {
		name       string
		chain      []Authorizer
		want       Decision
		wantReason string
		wantErr    bool
	}{
		{"empty", nil, NoOpinion, "", false},
		{"first allow wins", []Authorizer{fixed(NoOpinion, "a", nil), fixed(Allow, "b", nil), fixed(Deny, "c", nil)}, Allow, "b", false},
		{"deny stops", []Authorizer{fixed(Deny, "no", nil), AlwaysAllow}, Deny, "no", false},
		{"no opinions join reasons", []Authorizer{fixed(NoOpinion, "a", nil), fixed(NoOpinion, "", nil), fixed(NoOpinion, "b", nil)}, NoOpinion, "a\nb", false},
		{"errors are kept", []Authorizer{fixed(NoOpinion, "", boom), fixed(NoOpinion, "x", nil)}, NoOpinion, "x", true},
		{"an allow after an error", []Authorizer{fixed(NoOpinion, "", boom), AlwaysAllow}, Allow, "", false},
		// kube-apiserver's union puts each authorizer's name before its
		// reasons of no opinion ("node: ..."), not before a decision's.
		{"named no opinions", []Authorizer{Named("node", fixed(NoOpinion, "a", nil)), Named("rbac", fixed(NoOpinion, "", nil)), fixed(NoOpinion, "b", nil)},
			NoOpinion, "node: a\nb", false},
		{"a named decision", []Authorizer{Named("node", fixed(NoOpinion, "a", nil)), Named("rbac", fixed(Allow, "RBAC: allowed", nil))}, Allow, "RBAC: allowed", false},
	}
	for _, tc := range tests {
		d, reason, err := Union(tc.chain...).Authorize(ctx, a)
		if d != tc.want || reason != tc.wantReason || (err != nil) != tc.wantErr {
			t.Errorf("%s: got %v %q %v", tc.name, d, reason, err)
		}
	}
	if d, reason, _ := AlwaysDeny.Authorize(ctx, a); d != Deny || reason == "" {
		t.Errorf("AlwaysDeny = %v %q", d, reason)
	}
}

func TestPrivilegedGroups(t *testing.T) {
	t.Parallel()
	az := PrivilegedGroups(SystemPrivilegedGroup)
	admin := &request.User{Name: "admin", Groups: []string{SystemPrivilegedGroup, AllAuthenticated}}
	if d, _, _ := az.Authorize(context.Background(), path(admin, "delete", "/anything")); d != Allow {
		t.Errorf("system:masters: %v", d)
	}
	if d, _, _ := az.Authorize(context.Background(), path(alice(), "get", "/anything")); d != NoOpinion {
		t.Errorf("alice: %v", d)
	}
	if d, _, _ := az.Authorize(context.Background(), path(nil, "get", "/anything")); d != NoOpinion {
		t.Errorf("no user: %v", d)
	}
}

func TestNodeIdentity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		user   *request.User
		name   string
		isNode bool
	}{
		{&request.User{Name: "system:node:node-a", Groups: []string{NodesGroup}}, "node-a", true},
		{&request.User{Name: "system:node:", Groups: []string{NodesGroup}}, "", true},
		{&request.User{Name: "system:node:node-a"}, "", false},
		{&request.User{Name: "node-a", Groups: []string{NodesGroup}}, "", false},
		{nil, "", false},
	} {
		name, isNode := NodeIdentity(tc.user)
		if name != tc.name || isNode != tc.isNode {
			t.Errorf("NodeIdentity(%+v) = %q %t", tc.user, name, isNode)
		}
	}
}
