package authz

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/apiserver/request"
)

// TestNetworkPolicyAgentRole: kube-proxy's credentials, which the nodes'
// service proxy and network policy enforcer use, may read every Pod,
// Namespace and NetworkPolicy through minik8s:network-policy-agent, and
// nothing more than that role and system:node-proxier give; a node's own
// credentials may not read policies.
func TestNetworkPolicyAgentRole(t *testing.T) {
	t.Parallel()
	chain := Union(newTestNode(), NewRBAC(bootstrapSource()))
	proxy := &request.User{Name: KubeProxy, Groups: []string{AllAuthenticated}}
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{NodesGroup, AllAuthenticated}}
	tests := []struct {
		name string
		a    Attributes
		want Decision
	}{
		{"kube-proxy: list network policies", res(proxy, "list", "networking.k8s.io", "networkpolicies", "", "", ""), Allow},
		{"kube-proxy: watch network policies", res(proxy, "watch", "networking.k8s.io", "networkpolicies", "", "", ""), Allow},
		{"kube-proxy: list pods", res(proxy, "list", "", "pods", "", "", ""), Allow},
		{"kube-proxy: watch namespaces", res(proxy, "watch", "", "namespaces", "", "", ""), Allow},
		{"kube-proxy: still services", res(proxy, "watch", "", "services", "", "", ""), Allow},
		{"kube-proxy: no policy writes", res(proxy, "create", "networking.k8s.io", "networkpolicies", "", "x", ""), NoOpinion},
		{"kube-proxy: no pod writes", res(proxy, "delete", "", "pods", "", "x", "a"), NoOpinion},
		{"kube-proxy: no secrets", res(proxy, "list", "", "secrets", "", "", ""), NoOpinion},
		{"node: no network policies", res(nodeA, "list", "networking.k8s.io", "networkpolicies", "", "", ""), NoOpinion},
	}
	for _, tc := range tests {
		d, reason, err := chain.Authorize(context.Background(), tc.a)
		if err != nil || d != tc.want {
			t.Errorf("%s: got %v (%q, %v), want %v", tc.name, d, reason, err, tc.want)
		}
	}
}
