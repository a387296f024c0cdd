package authz

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// podGraph is a NodeGraph over fixed pods.
type podGraph []*api.Pod

var _ NodeGraph = podGraph(nil)

func (g podGraph) PodsOnNode(node string) []*api.Pod {
	var out []*api.Pod
	for _, p := range g {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

func (g podGraph) NodeForPod(namespace, name string) (string, bool) {
	for _, p := range g {
		if p.Namespace == namespace && p.Name == name {
			return p.Spec.NodeName, true
		}
	}
	return "", false
}

func testGraph() podGraph {
	return podGraph{
		{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web-a"}, Spec: api.PodSpec{NodeName: "node-a", ServiceAccountName: "web",
			ImagePullSecrets: []api.LocalObjectReference{{Name: "registry"}},
			Volumes: []api.Volume{{Name: "cfg", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{
				LocalObjectReference: api.LocalObjectReference{Name: "web-config"}}}},
				{Name: "data", VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "web-data"}}}},
			Containers: []api.Container{{Name: "c", Env: []api.EnvVar{{Name: "PW", ValueFrom: &api.EnvVarSource{
				SecretKeyRef: &api.SecretKeySelector{LocalObjectReference: api.LocalObjectReference{Name: "db-password"}, Key: "pw"}}}}}},
		}},
		{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web-b"}, Spec: api.PodSpec{NodeName: "node-b", ServiceAccountName: "b-robot",
			Volumes: []api.Volume{{Name: "s", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "b-only"}}}},
		}},
		{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "pending"}},
	}
}

func TestNodeAuthorizer(t *testing.T) {
	t.Parallel()
	az := NewNode(testGraph())
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{NodesGroup, AllAuthenticated}}
	tests := []struct {
		name       string
		a          Attributes
		want       Decision
		wantReason string
	}{
		// Not a node: no opinion, whatever the request.
		{"not a node", res(alice(), "get", "", "secrets", "", "default", "db-password"), NoOpinion, ""},
		{"node name without the group", res(&request.User{Name: "system:node:node-a"}, "get", "", "nodes", "", "", "node-a"), NoOpinion, ""},
		{"unknown node name", res(&request.User{Name: "system:node:", Groups: []string{NodesGroup}}, "get", "", "nodes", "", "", "x"),
			NoOpinion, `unknown node for user "system:node:"`},

		// Nodes.
		{"read any node", res(nodeA, "get", "", "nodes", "", "", "node-b"), Allow, ""},
		{"list nodes", res(nodeA, "watch", "", "nodes", "", "", ""), Allow, ""},
		{"register", res(nodeA, "create", "", "nodes", "", "", ""), Allow, ""},
		{"update its own node", res(nodeA, "update", "", "nodes", "", "", "node-a"), Allow, ""},
		{"patch its own status", res(nodeA, "patch", "", "nodes", "status", "", "node-a"), Allow, ""},
		{"update another node", res(nodeA, "update", "", "nodes", "", "", "node-b"), Deny, `node "node-a" is not allowed to modify node "node-b"`},
		{"patch another node's status", res(nodeA, "patch", "", "nodes", "status", "", "node-b"), Deny, `node "node-a" is not allowed to modify node "node-b"`},
		{"delete its own node", res(nodeA, "delete", "", "nodes", "", "", "node-a"), NoOpinion, ""},

		// Service accounts of its pods, and their tokens.
		{"token of its pod's account", res(nodeA, "create", "", "serviceaccounts", "token", "default", "web"), Allow, ""},
		{"get its pod's account", res(nodeA, "get", "", "serviceaccounts", "", "default", "web"), Allow, ""},
		{"token of another node's account", res(nodeA, "create", "", "serviceaccounts", "token", "default", "b-robot"), NoOpinion,
			"no relationship found between node 'node-a' and this object"},
		{"token in another namespace", res(nodeA, "create", "", "serviceaccounts", "token", "other", "web"), NoOpinion,
			"no relationship found between node 'node-a' and this object"},
		{"create an account", res(nodeA, "create", "", "serviceaccounts", "", "default", ""), NoOpinion,
			"can only create tokens for individual service accounts"},
		{"update an account", res(nodeA, "update", "", "serviceaccounts", "", "default", "web"), NoOpinion,
			"can only create tokens for individual service accounts"},

		// Leases.
		{"get its lease", res(nodeA, "get", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-a"), Allow, ""},
		{"create a lease", res(nodeA, "create", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), Allow, ""},
		{"renew its lease", res(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-a"), Allow, ""},
		{"renew another's lease", res(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-b"), Deny,
			"can only access node lease with the same name as the requesting node"},
		{"read another's lease", res(nodeA, "get", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-b"), NoOpinion,
			"can only access node lease with the same name as the requesting node"},
		{"leases elsewhere", res(nodeA, "get", "coordination.k8s.io", "leases", "", "kube-system", "node-a"), NoOpinion,
			`can only access leases in the "kube-node-lease" system namespace`},
		{"list leases", res(nodeA, "list", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), NoOpinion,
			"can only get, create, update, patch, or delete a node lease"},

		// Pods.
		{"list pods", res(nodeA, "list", "", "pods", "", "", ""), Allow, ""},
		{"get a pod elsewhere", res(nodeA, "get", "", "pods", "", "default", "web-b"), Allow, ""},
		{"create a mirror pod", res(nodeA, "create", "", "pods", "", "default", ""), Allow, ""},
		{"status of its pod", res(nodeA, "patch", "", "pods", "status", "default", "web-a"), Allow, ""},
		{"status of a pod elsewhere", res(nodeA, "update", "", "pods", "status", "default", "web-b"), Deny,
			`node "node-a" can only update pod status for pods with spec.nodeName set to itself`},
		{"status of an unscheduled pod", res(nodeA, "update", "", "pods", "status", "default", "pending"), Deny,
			`node "node-a" can only update pod status for pods with spec.nodeName set to itself`},
		{"status of a pod not seen yet is left to admission", res(nodeA, "update", "", "pods", "status", "default", "new"), Allow, ""},
		{"delete its pod", res(nodeA, "delete", "", "pods", "", "default", "web-a"), Allow, ""},
		{"delete a pod elsewhere", res(nodeA, "delete", "", "pods", "", "default", "web-b"), Deny,
			`node "node-a" can only delete pods with spec.nodeName set to itself`},
		{"delete all pods", res(nodeA, "deletecollection", "", "pods", "", "default", ""), NoOpinion, ""},
		{"update a pod's spec", res(nodeA, "update", "", "pods", "", "default", "web-a"), NoOpinion, ""},
		{"bind a pod", res(nodeA, "create", "", "pods", "binding", "default", "pending"), NoOpinion, ""},

		// What its pods reference.
		{"secret of its pod", res(nodeA, "get", "", "secrets", "", "default", "db-password"), Allow, ""},
		{"pull secret of its pod", res(nodeA, "get", "", "secrets", "", "default", "registry"), Allow, ""},
		{"secret of another node's pod", res(nodeA, "get", "", "secrets", "", "default", "b-only"), NoOpinion,
			"no relationship found between node 'node-a' and this object"},
		{"same name, other namespace", res(nodeA, "get", "", "secrets", "", "other", "db-password"), NoOpinion,
			"no relationship found between node 'node-a' and this object"},
		{"list secrets", res(nodeA, "list", "", "secrets", "", "default", ""), NoOpinion, "No Object name found"},
		{"write a secret", res(nodeA, "update", "", "secrets", "", "default", "db-password"), NoOpinion, "can only read resources of this type"},
		{"secrets cluster-wide", res(nodeA, "watch", "", "secrets", "", "", ""), NoOpinion, "can only read namespaced object of this type"},
		{"config map of its pod", res(nodeA, "get", "", "configmaps", "", "default", "web-config"), Allow, ""},
		{"claim of its pod", res(nodeA, "get", "", "persistentvolumeclaims", "", "default", "web-data"), Allow, ""},
		{"volumes", res(nodeA, "get", "", "persistentvolumes", "", "", "pv1"), NoOpinion,
			"no relationship found between node 'node-a' and this object"},

		// The static rules.
		{"events", res(nodeA, "create", "", "events", "", "default", ""), Allow, ""},
		{"events.k8s.io", res(nodeA, "patch", "events.k8s.io", "events", "", "default", "e"), Allow, ""},
		{"services", res(nodeA, "watch", "", "services", "", "", ""), Allow, ""},
		{"endpoint slices", res(nodeA, "list", "discovery.k8s.io", "endpointslices", "", "", ""), Allow, ""},
		{"CSR", res(nodeA, "create", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), Allow, ""},
		{"CSR approval", res(nodeA, "update", "certificates.k8s.io", "certificatesigningrequests", "approval", "", "c"), NoOpinion, ""},
		{"deployments", res(nodeA, "get", "apps", "deployments", "", "default", "d"), NoOpinion, ""},
		{"namespaces", res(nodeA, "delete", "", "namespaces", "", "default", "default"), NoOpinion, ""},
		{"non-resource", path(nodeA, "get", "/api"), NoOpinion, ""},
	}
	for _, tc := range tests {
		d, reason, err := az.Authorize(context.Background(), tc.a)
		if err != nil || d != tc.want || reason != tc.wantReason {
			t.Errorf("%s: got %v %q %v; want %v %q", tc.name, d, reason, err, tc.want, tc.wantReason)
		}
	}
}
