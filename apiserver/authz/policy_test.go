package authz

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/request"
)

func bootstrapSource() *staticRules {
	roles, bindings := BootstrapPolicy()
	return &staticRules{clusterRoles: roles, clusterRoleBindings: bindings}
}

// Every default object is valid, uniquely named, labelled, and every
// binding points at a default role.
func TestBootstrapPolicyValid(t *testing.T) {
	t.Parallel()
	roles, bindings := BootstrapPolicy()
	names := map[string]bool{}
	for _, r := range roles {
		if errs := validation.ValidateClusterRole(r); len(errs) > 0 {
			t.Errorf("cluster role %s: %v", r.Name, errs)
		}
		if names[r.Name] {
			t.Errorf("cluster role %s twice", r.Name)
		}
		names[r.Name] = true
		if r.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || r.Annotations[api.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("cluster role %s lacks the bootstrap metadata: %+v", r.Name, r.ObjectMeta)
		}
	}
	seen := map[string]bool{}
	for _, b := range bindings {
		if errs := validation.ValidateClusterRoleBinding(b); len(errs) > 0 {
			t.Errorf("binding %s: %v", b.Name, errs)
		}
		if seen[b.Name] {
			t.Errorf("binding %s twice", b.Name)
		}
		seen[b.Name] = true
		if !names[b.RoleRef.Name] {
			t.Errorf("binding %s refers to the unknown role %s", b.Name, b.RoleRef.Name)
		}
	}
	for _, want := range []string{"cluster-admin", "system:discovery", "system:basic-user", "system:public-info-viewer",
		"system:node", "system:node-bootstrapper", "system:kube-scheduler", "system:kube-controller-manager",
		"system:certificates.k8s.io:certificatesigningrequests:nodeclient", "system:controller:replicaset-controller"} {
		if !names[want] {
			t.Errorf("no cluster role %s", want)
		}
	}
	// Callers may change what they get without changing the next call's.
	roles[0].Rules[0].Verbs[0] = "changed"
	again, _ := BootstrapPolicy()
	if again[0].Rules[0].Verbs[0] == "changed" {
		t.Error("BootstrapPolicy shares its rules between calls")
	}
}

// The default chain kube-apiserver runs: Node, then RBAC over the default
// policy (system:masters reaches everything through cluster-admin).
func TestDefaultPolicy(t *testing.T) {
	t.Parallel()
	chain := Union(newTestNode(), NewRBAC(bootstrapSource()))
	admin := &request.User{Name: "kubernetes-admin", Groups: []string{SystemPrivilegedGroup, AllAuthenticated}}
	sched := &request.User{Name: KubeScheduler, Groups: []string{AllAuthenticated}}
	kcm := &request.User{Name: KubeControllerManager, Groups: []string{AllAuthenticated}}
	boot := &request.User{Name: "system:bootstrap:abcdef", Groups: []string{BootstrappersGroup, AllAuthenticated}}
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{NodesGroup, AllAuthenticated}}
	anon := &request.User{Name: "system:anonymous", Groups: []string{AllUnauthenticated}}
	someone := alice()
	csr := func(u *request.User, verb, sub, name string) Attributes {
		return res(u, verb, api.CertificatesGroupName, "certificatesigningrequests", sub, "", name)
	}
	tests := []struct {
		name string
		a    Attributes
		want Decision
	}{
		{"admin: anything", res(admin, "delete", "", "namespaces", "", "kube-system", "kube-system"), Allow},
		{"admin: any path", path(admin, "get", "/metrics"), Allow},

		{"authenticated: discovery", path(someone, "get", "/apis/apps/v1"), Allow},
		{"authenticated: openapi", path(someone, "get", "/openapi/v3/api/v1"), Allow},
		{"authenticated: nothing else", res(someone, "list", "", "pods", "", "default", ""), NoOpinion},
		{"anonymous: health", path(anon, "get", "/healthz"), Allow},
		{"anonymous: version", path(anon, "get", "/version"), Allow},
		{"anonymous: no discovery", path(anon, "get", "/api"), NoOpinion},

		{"scheduler: watch pods", res(sched, "watch", "", "pods", "", "", ""), Allow},
		{"scheduler: bind", res(sched, "create", "", "pods", "binding", "default", "p"), Allow},
		{"scheduler: pod conditions", res(sched, "patch", "", "pods", "status", "default", "p"), Allow},
		{"scheduler: preempt", res(sched, "delete", "", "pods", "", "default", "p"), Allow},
		{"scheduler: nodes", res(sched, "list", "", "nodes", "", "", ""), Allow},
		{"scheduler: no node writes", res(sched, "update", "", "nodes", "", "", "n"), NoOpinion},
		{"scheduler: events", res(sched, "create", "events.k8s.io", "events", "", "default", ""), Allow},
		{"scheduler: its lease", res(sched, "update", "coordination.k8s.io", "leases", "", "kube-system", "kube-scheduler"), Allow},
		{"scheduler: not another lease", res(sched, "update", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager"), NoOpinion},
		{"scheduler: replica sets", res(sched, "list", "apps", "replicasets", "", "", ""), Allow},
		{"scheduler: no secrets", res(sched, "get", "", "secrets", "", "default", "s"), NoOpinion},

		{"controller-manager: create pods", res(kcm, "create", "", "pods", "", "default", ""), Allow},
		{"controller-manager: replica set status", res(kcm, "update", "apps", "replicasets", "status", "default", "rs"), Allow},
		{"controller-manager: write replica sets", res(kcm, "create", "apps", "replicasets", "", "default", ""), Allow},
		{"controller-manager: deployment status", res(kcm, "update", "apps", "deployments", "status", "default", "d"), Allow},
		{"controller-manager: job status", res(kcm, "update", "batch", "jobs", "status", "default", "j"), Allow},
		{"controller-manager: endpoints", res(kcm, "update", "", "endpoints", "", "default", "svc"), Allow},
		{"controller-manager: endpoint slices", res(kcm, "create", "discovery.k8s.io", "endpointslices", "", "default", ""), Allow},
		{"controller-manager: taint nodes", res(kcm, "patch", "", "nodes", "", "", "n"), Allow},
		{"controller-manager: node status", res(kcm, "update", "", "nodes", "status", "", "n"), Allow},
		{"controller-manager: delete nodes", res(kcm, "delete", "", "nodes", "", "", "n"), Allow},
		{"controller-manager: evict pods", res(kcm, "delete", "", "pods", "", "default", "p"), Allow},
		{"controller-manager: empty namespaces", res(kcm, "deletecollection", "apps", "deployments", "", "ns", ""), Allow},
		{"controller-manager: finalize namespaces", res(kcm, "update", "", "namespaces", "finalize", "ns", "ns"), Allow},
		{"controller-manager: garbage collect", res(kcm, "delete", "batch", "jobs", "", "ns", "j"), Allow},
		{"controller-manager: approve CSRs", csr(kcm, "update", "approval", "c"), Allow},
		{"controller-manager: sign CSRs", csr(kcm, "update", "status", "c"), Allow},
		{"controller-manager: approve for the kubelet signer",
			res(kcm, "approve", api.CertificatesGroupName, "signers", "", "", api.KubeAPIServerClientKubeletSignerName), Allow},
		{"controller-manager: not for others",
			res(kcm, "approve", api.CertificatesGroupName, "signers", "", "", api.KubeletServingSignerName), NoOpinion},
		{"controller-manager: bootstrap token secrets", res(kcm, "delete", "", "secrets", "", "kube-system", "bootstrap-token-abcdef"), Allow},
		{"controller-manager: its lease", res(kcm, "get", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager"), Allow},
		{"controller-manager: not everything", res(kcm, "create", api.RBACGroupName, "clusterrolebindings", "", "", ""), NoOpinion},

		{"bootstrap token: file a CSR", csr(boot, "create", "", ""), Allow},
		{"bootstrap token: watch it", csr(boot, "watch", "", ""), Allow},
		{"bootstrap token: auto-approval", csr(boot, "create", "nodeclient", ""), Allow},
		{"bootstrap token: not approve", csr(boot, "update", "approval", "c"), NoOpinion},
		{"bootstrap token: nothing else", res(boot, "list", "", "pods", "", "", ""), NoOpinion},
		{"bootstrap token: not a node", res(boot, "create", "", "nodes", "", "", ""), NoOpinion},

		{"node: renewal auto-approval", csr(nodeA, "create", "selfnodeclient", ""), Allow},
		{"node: its node", res(nodeA, "patch", "", "nodes", "status", "", "node-a"), Allow},
		{"node: another node", res(nodeA, "get", "", "nodes", "", "", "node-b"), NoOpinion},
		{"node: every pod", res(nodeA, "list", "", "pods", "", "", ""), NoOpinion},
		{"node: delete itself", res(nodeA, "delete", "", "nodes", "", "", "node-a"), NoOpinion},
		{"node: a pod elsewhere", res(nodeA, "get", "", "pods", "", "default", "web-b"), NoOpinion},
		{"node: unrelated secret", res(nodeA, "get", "", "secrets", "", "default", "b-only"), NoOpinion},
		{"node: discovery", path(nodeA, "get", "/api/v1"), Allow},
	}
	for _, tc := range tests {
		d, reason, err := chain.Authorize(context.Background(), tc.a)
		if err != nil || d != tc.want {
			t.Errorf("%s: got %v (%q, %v), want %v", tc.name, d, reason, err, tc.want)
		}
	}
}
