package authz

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// testGraph holds fixed objects: the pods and volumes fill a NodeGraph,
// the other kinds answer NodeObjects.
type testGraph struct {
	pods    []*api.Pod
	volumes []*api.PersistentVolume
	// nodeOf maps "resource//name" or "resource/namespace/name" of the
	// other kinds to their spec.nodeName.
	nodeOf map[string]string
}

var _ NodeObjects = (*testGraph)(nil)

func (g *testGraph) NodeOf(resource, namespace, name string) (string, bool) {
	n, ok := g.nodeOf[resource+"/"+namespace+"/"+name]
	return n, ok
}

// authorizer returns a Node authorizer on g's objects, added one by one.
func (g *testGraph) authorizer() (*Node, *NodeGraph) {
	ng := NewNodeGraph()
	for _, p := range g.pods {
		ng.SetPod(p)
	}
	for _, pv := range g.volumes {
		ng.SetPersistentVolume(pv)
	}
	return NewNode(ng, g), ng
}

// newTestNode is a Node authorizer on newTestGraph's objects.
func newTestNode() *Node {
	az, _ := newTestGraph().authorizer()
	return az
}

func newTestGraph() *testGraph {
	return &testGraph{
		pods: []*api.Pod{
			{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web-a"}, Spec: api.PodSpec{NodeName: "node-a", ServiceAccountName: "web",
				ImagePullSecrets: []api.LocalObjectReference{{Name: "registry"}},
				Volumes: []api.Volume{{Name: "cfg", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{
					LocalObjectReference: api.LocalObjectReference{Name: "web-config"}}}},
					{Name: "data", VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "web-data"}}},
					{Name: "scratch", VolumeSource: api.VolumeSource{Ephemeral: json.RawMessage(`{"volumeClaimTemplate":{"spec":{}}}`)}}},
				Containers: []api.Container{{Name: "c", Env: []api.EnvVar{{Name: "PW", ValueFrom: &api.EnvVarSource{
					SecretKeyRef: &api.SecretKeySelector{LocalObjectReference: api.LocalObjectReference{Name: "db-password"}, Key: "pw"}}}}}},
			}},
			{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web-b"}, Spec: api.PodSpec{NodeName: "node-b", ServiceAccountName: "b-robot",
				Volumes: []api.Volume{{Name: "s", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "b-only"}}}},
			}},
			// A mirror pod relates only itself to its node.
			{ObjectMeta: api.ObjectMeta{Namespace: "kube-system", Name: "static-node-a", Annotations: map[string]string{api.MirrorPodAnnotationKey: "x"}},
				Spec: api.PodSpec{NodeName: "node-a", ServiceAccountName: "mirror-sa",
					Volumes: []api.Volume{{Name: "s", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "mirror-secret"}}}}}},
			{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "pending"}},
		},
		volumes: []*api.PersistentVolume{
			{ObjectMeta: api.ObjectMeta{Name: "pv-web"}, Spec: api.PersistentVolumeSpec{
				ClaimRef: &api.ObjectReference{Namespace: "default", Name: "web-data"},
				PersistentVolumeSource: api.PersistentVolumeSource{CSI: json.RawMessage(
					`{"driver":"d","volumeHandle":"h","nodePublishSecretRef":{"name":"csi-creds","namespace":"storage"},` +
						`"controllerPublishSecretRef":{"name":"controller-creds","namespace":"storage"}}`)}}},
			{ObjectMeta: api.ObjectMeta{Name: "pv-other"}, Spec: api.PersistentVolumeSpec{
				ClaimRef: &api.ObjectReference{Namespace: "default", Name: "other-data"}}},
			{ObjectMeta: api.ObjectMeta{Name: "pv-free"}},
		},
		nodeOf: map[string]string{
			"volumeattachments//va-a":                      "node-a",
			"volumeattachments//va-b":                      "node-b",
			"resourceslices//slice-a":                      "node-a",
			"resourceslices//slice-all":                    "",
			"podcertificaterequests/default/pcr-a":         "node-a",
			"podcertificaterequests/default/pcr-b":         "node-b",
			"podcertificaterequests/default/pcr-unrelated": "node-c",
		},
	}
}

// fromURL builds the attributes of a request as the authorization filter
// does, from its method and URL, so selectors are parsed as in a server.
func fromURL(u *request.User, method, url string) Attributes {
	return AttributesFrom(request.ParseInfo(httptest.NewRequest(method, url, nil)), u)
}

// TestNodeAuthorizer checks the decisions and reasons of Kubernetes v1.37's
// Node authorizer (plugin/pkg/auth/authorizer/node, node_authorizer_test.go
// and the code): NoOpinion, never Deny, with the same reason strings.
func TestNodeAuthorizer(t *testing.T) {
	t.Parallel()
	az, _ := newTestGraph().authorizer()
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{NodesGroup, AllAuthenticated}}
	const noRel = "no relationship found between node 'node-a' and this object"
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

		// Nodes: only its own is readable; writes go to NodeRestriction.
		{"get its node", fromURL(nodeA, "GET", "/api/v1/nodes/node-a"), Allow, ""},
		{"get its node before it exists", res(nodeA, "get", "", "nodes", "", "", "node-a"), Allow, ""},
		{"get another node", fromURL(nodeA, "GET", "/api/v1/nodes/node-b"), NoOpinion, "node 'node-a' cannot read 'node-b', only its own Node object"},
		{"list nodes", fromURL(nodeA, "GET", "/api/v1/nodes"), NoOpinion, "node 'node-a' cannot read all nodes, only its own Node object"},
		{"watch nodes", fromURL(nodeA, "GET", "/api/v1/nodes?watch=true"), NoOpinion, "node 'node-a' cannot read all nodes, only its own Node object"},
		{"list its node by name", fromURL(nodeA, "GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a"), Allow, ""},
		{"watch its node by name", fromURL(nodeA, "GET", "/api/v1/nodes?watch=1&fieldSelector=metadata.name%3D%3Dnode-a"), Allow, ""},
		{"list another node by name", fromURL(nodeA, "GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dnode-b"), NoOpinion,
			"node 'node-a' cannot read 'node-b', only its own Node object"},
		{"list nodes but its own", fromURL(nodeA, "GET", "/api/v1/nodes?fieldSelector=metadata.name%21%3Dnode-a"), NoOpinion,
			"node 'node-a' cannot read all nodes, only its own Node object"},
		{"register", res(nodeA, "create", "", "nodes", "", "", ""), Allow, ""},
		{"update a node", res(nodeA, "update", "", "nodes", "", "", "node-b"), Allow, ""},
		{"patch a node's status", res(nodeA, "patch", "", "nodes", "status", "", "node-b"), Allow, ""},
		{"delete its own node", res(nodeA, "delete", "", "nodes", "", "", "node-a"), NoOpinion, ""},
		{"get its node's status", res(nodeA, "get", "", "nodes", "status", "", "node-a"), NoOpinion, ""},

		// Pods: list and watch only of its own, get of the pods bound to it.
		{"list pods", fromURL(nodeA, "GET", "/api/v1/pods"), NoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"list pods in a namespace", fromURL(nodeA, "GET", "/api/v1/namespaces/default/pods"), NoOpinion,
			"can only list/watch pods with spec.nodeName field selector"},
		{"list its pods", fromURL(nodeA, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a"), Allow, ""},
		{"watch its pods", fromURL(nodeA, "GET", "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3D%3Dnode-a"), Allow, ""},
		{"list its pods, narrowed", fromURL(nodeA, "GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning,spec.nodeName%3Dnode-a"), Allow, ""},
		{"list another node's pods", fromURL(nodeA, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b"), NoOpinion,
			"can only list/watch pods with spec.nodeName field selector"},
		{"list pods not on it", fromURL(nodeA, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%21%3Dnode-a"), NoOpinion,
			"can only list/watch pods with spec.nodeName field selector"},
		{"bad selector allows nothing", fromURL(nodeA, "GET", "/api/v1/pods?fieldSelector=spec.nodeName"), NoOpinion,
			"can only list/watch pods with spec.nodeName field selector"},
		{"legacy watch path ignores selectors", fromURL(nodeA, "GET", "/api/v1/watch/pods?fieldSelector=spec.nodeName%3Dnode-a"), NoOpinion,
			"can only list/watch pods with spec.nodeName field selector"},
		{"list its pod by name", fromURL(nodeA, "GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb-a"), Allow, ""},
		{"list another node's pod by name", fromURL(nodeA, "GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb-b"), NoOpinion, noRel},
		{"get its pod", fromURL(nodeA, "GET", "/api/v1/namespaces/default/pods/web-a"), Allow, ""},
		{"get its mirror pod", res(nodeA, "get", "", "pods", "", "kube-system", "static-node-a"), Allow, ""},
		{"get a pod elsewhere", fromURL(nodeA, "GET", "/api/v1/namespaces/default/pods/web-b"), NoOpinion, noRel},
		{"get an unscheduled pod", res(nodeA, "get", "", "pods", "", "default", "pending"), NoOpinion, noRel},
		{"get an unknown pod", res(nodeA, "get", "", "pods", "", "default", "nope"), NoOpinion, noRel},
		{"get a pod's log", res(nodeA, "get", "", "pods", "log", "default", "web-a"), NoOpinion, ""},
		{"create a mirror pod", res(nodeA, "create", "", "pods", "", "default", ""), Allow, ""},
		{"delete a pod", res(nodeA, "delete", "", "pods", "", "default", "web-b"), Allow, ""},
		{"status of a pod", res(nodeA, "update", "", "pods", "status", "default", "web-b"), Allow, ""},
		{"evict a pod", res(nodeA, "create", "", "pods", "eviction", "default", "web-a"), Allow, ""},
		{"delete all pods", res(nodeA, "deletecollection", "", "pods", "", "default", ""), NoOpinion, ""},
		{"update a pod's spec", res(nodeA, "update", "", "pods", "", "default", "web-a"), NoOpinion, ""},
		{"bind a pod", res(nodeA, "create", "", "pods", "binding", "default", "pending"), NoOpinion, ""},

		// Service accounts of its pods, and their tokens.
		{"token of its pod's account", res(nodeA, "create", "", "serviceaccounts", "token", "default", "web"), Allow, ""},
		{"get its pod's account", res(nodeA, "get", "", "serviceaccounts", "", "default", "web"), Allow, ""},
		{"list its pod's account by name", fromURL(nodeA, "GET", "/api/v1/namespaces/default/serviceaccounts?fieldSelector=metadata.name%3Dweb"), NoOpinion,
			"can only create tokens for individual service accounts"},
		{"mirror pod's account", res(nodeA, "create", "", "serviceaccounts", "token", "kube-system", "mirror-sa"), NoOpinion, noRel},
		{"token of another node's account", res(nodeA, "create", "", "serviceaccounts", "token", "default", "b-robot"), NoOpinion, noRel},
		{"token in another namespace", res(nodeA, "create", "", "serviceaccounts", "token", "other", "web"), NoOpinion, noRel},
		{"create an account", res(nodeA, "create", "", "serviceaccounts", "", "default", ""), NoOpinion,
			"can only create tokens for individual service accounts"},
		{"update an account", res(nodeA, "update", "", "serviceaccounts", "", "default", "web"), NoOpinion,
			"can only create tokens for individual service accounts"},
		{"an account's other subresource", res(nodeA, "create", "", "serviceaccounts", "other", "default", "web"), NoOpinion,
			"can only create token subresource of serviceaccount"},

		// Leases.
		{"get its lease", res(nodeA, "get", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-a"), Allow, ""},
		{"create a lease", res(nodeA, "create", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), Allow, ""},
		{"renew its lease", res(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-a"), Allow, ""},
		{"renew another's lease", res(nodeA, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-b"), NoOpinion,
			"can only access node lease with the same name as the requesting node"},
		{"leases elsewhere", res(nodeA, "get", "coordination.k8s.io", "leases", "", "kube-system", "node-a"), NoOpinion,
			`can only access leases in the "kube-node-lease" system namespace`},
		{"list leases", res(nodeA, "list", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), NoOpinion,
			"can only get, create, update, patch, or delete a node lease"},

		// What its pods reference.
		{"secret of its pod", res(nodeA, "get", "", "secrets", "", "default", "db-password"), Allow, ""},
		{"pull secret of its pod", res(nodeA, "get", "", "secrets", "", "default", "registry"), Allow, ""},
		{"watch a secret of its pod by name", fromURL(nodeA, "GET", "/api/v1/namespaces/default/secrets?watch=true&fieldSelector=metadata.name%3Ddb-password"), Allow, ""},
		{"secret of another node's pod", res(nodeA, "get", "", "secrets", "", "default", "b-only"), NoOpinion, noRel},
		{"secret of its mirror pod", res(nodeA, "get", "", "secrets", "", "kube-system", "mirror-secret"), NoOpinion, noRel},
		{"same name, other namespace", res(nodeA, "get", "", "secrets", "", "other", "db-password"), NoOpinion, noRel},
		{"CSI secret of its claim's volume", res(nodeA, "get", "", "secrets", "", "storage", "csi-creds"), Allow, ""},
		{"controller secret of its claim's volume", res(nodeA, "get", "", "secrets", "", "storage", "controller-creds"), NoOpinion, noRel},
		{"list secrets", fromURL(nodeA, "GET", "/api/v1/namespaces/default/secrets"), NoOpinion, "No Object name found"},
		{"write a secret", res(nodeA, "update", "", "secrets", "", "default", "db-password"), NoOpinion, "can only read resources of this type"},
		{"secrets cluster-wide", res(nodeA, "watch", "", "secrets", "", "", ""), NoOpinion, "can only read namespaced object of this type"},
		{"config map of its pod", res(nodeA, "get", "", "configmaps", "", "default", "web-config"), Allow, ""},
		{"claim of its pod", res(nodeA, "get", "", "persistentvolumeclaims", "", "default", "web-data"), Allow, ""},
		{"ephemeral claim of its pod", res(nodeA, "get", "", "persistentvolumeclaims", "", "default", "web-a-scratch"), Allow, ""},
		{"list claims", res(nodeA, "list", "", "persistentvolumeclaims", "", "default", "web-data"), NoOpinion,
			"can only get individual resources of this type"},
		{"status of its claim", res(nodeA, "patch", "", "persistentvolumeclaims", "status", "default", "web-data"), Allow, ""},
		{"status of another claim", res(nodeA, "patch", "", "persistentvolumeclaims", "status", "default", "other-data"), NoOpinion, noRel},
		{"get a claim's status", res(nodeA, "get", "", "persistentvolumeclaims", "status", "default", "web-data"), NoOpinion,
			"can only get/update/patch this type"},
		{"volume of its claim", res(nodeA, "get", "", "persistentvolumes", "", "", "pv-web"), Allow, ""},
		{"volume of another claim", res(nodeA, "get", "", "persistentvolumes", "", "", "pv-other"), NoOpinion, noRel},
		{"unbound volume", res(nodeA, "get", "", "persistentvolumes", "", "", "pv-free"), NoOpinion, noRel},
		{"resource claim", res(nodeA, "get", "resource.k8s.io", "resourceclaims", "", "default", "c"), NoOpinion, noRel},

		// Objects naming the node.
		{"its volume attachment", res(nodeA, "get", "storage.k8s.io", "volumeattachments", "", "", "va-a"), Allow, ""},
		{"another's volume attachment", res(nodeA, "get", "storage.k8s.io", "volumeattachments", "", "", "va-b"), NoOpinion, noRel},
		{"list volume attachments", res(nodeA, "list", "storage.k8s.io", "volumeattachments", "", "", ""), NoOpinion,
			"can only get individual resources of this type"},
		{"its slice", res(nodeA, "get", "resource.k8s.io", "resourceslices", "", "", "slice-a"), Allow, ""},
		{"a slice for all nodes", res(nodeA, "update", "resource.k8s.io", "resourceslices", "", "", "slice-all"), NoOpinion, noRel},
		{"create a slice", res(nodeA, "create", "resource.k8s.io", "resourceslices", "", "", ""), Allow, ""},
		{"list slices", fromURL(nodeA, "GET", "/apis/resource.k8s.io/v1/resourceslices"), NoOpinion,
			"can only list/watch/deletecollection resourceslices with nodeName field selector"},
		{"delete its slices", fromURL(nodeA, "DELETE", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dnode-a"), Allow, ""},
		{"its pod certificate request", res(nodeA, "get", "certificates.k8s.io", "podcertificaterequests", "", "default", "pcr-a"), Allow, ""},
		{"another's pod certificate request", res(nodeA, "get", "certificates.k8s.io", "podcertificaterequests", "", "default", "pcr-b"), NoOpinion, noRel},
		{"watch its pod certificate requests", fromURL(nodeA, "GET", "/apis/certificates.k8s.io/v1/podcertificaterequests?watch=true&fieldSelector=spec.nodeName%3Dnode-a"), Allow, ""},
		{"list pod certificate requests", fromURL(nodeA, "GET", "/apis/certificates.k8s.io/v1/podcertificaterequests"), NoOpinion,
			"can only list/watch podcertificaterequests with nodeName field selector"},
		{"delete a pod certificate request", res(nodeA, "delete", "certificates.k8s.io", "podcertificaterequests", "", "default", "pcr-a"), NoOpinion,
			"nodes may not delete podcertificaterequests"},
		{"its CSINode", res(nodeA, "update", "storage.k8s.io", "csinodes", "", "", "node-a"), Allow, ""},
		{"another CSINode", res(nodeA, "get", "storage.k8s.io", "csinodes", "", "", "node-b"), NoOpinion,
			"can only access CSINode with the same name as the requesting node"},
		{"CSINode status", res(nodeA, "update", "storage.k8s.io", "csinodes", "status", "", "node-a"), NoOpinion,
			"CSINode status access requires CSIVolumeHealth feature"},

		// The static rules.
		{"events", res(nodeA, "create", "", "events", "", "default", ""), Allow, ""},
		{"events.k8s.io", res(nodeA, "patch", "events.k8s.io", "events", "", "default", "e"), Allow, ""},
		{"services", res(nodeA, "watch", "", "services", "", "", ""), Allow, ""},
		{"endpoint slices", res(nodeA, "list", "discovery.k8s.io", "endpointslices", "", "", ""), Allow, ""},
		{"CSI drivers", res(nodeA, "list", "storage.k8s.io", "csidrivers", "", "", ""), Allow, ""},
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

// TestAttributesSelectors checks that list, watch and deletecollection
// carry their parsed selectors to the authorizers, as kube-apiserver's
// GetAuthorizerAttributes does, and that other requests carry none.
func TestAttributesSelectors(t *testing.T) {
	t.Parallel()
	u := alice()
	tests := []struct {
		name, method, url          string
		wantFields, wantLabels     int
		wantFieldErr, wantLabelErr bool
	}{
		{"list", "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1,status.phase%21%3DFailed&labelSelector=app%3Dweb", 2, 1, false, false},
		{"watch", "GET", "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1", 1, 0, false, false},
		{"deletecollection", "DELETE", "/api/v1/namespaces/default/pods?labelSelector=app+in+(a,b)", 0, 1, false, false},
		{"empty selectors", "GET", "/api/v1/pods?fieldSelector=&labelSelector=", 0, 0, false, false},
		{"bad field selector", "GET", "/api/v1/pods?fieldSelector=spec.nodeName", 0, 0, true, false},
		{"bad label selector", "GET", "/api/v1/pods?labelSelector=a+in+b", 0, 0, false, true},
		{"get ignores selectors", "GET", "/api/v1/namespaces/default/pods/p?fieldSelector=spec.nodeName%3Dn1", 0, 0, false, false},
		{"legacy watch path ignores selectors", "GET", "/api/v1/watch/pods?fieldSelector=spec.nodeName%3Dn1", 0, 0, false, false},
	}
	for _, tc := range tests {
		a := fromURL(u, tc.method, tc.url)
		if len(a.FieldSelector) != tc.wantFields || len(a.LabelSelector) != tc.wantLabels ||
			(a.FieldSelectorErr != nil) != tc.wantFieldErr || (a.LabelSelectorErr != nil) != tc.wantLabelErr {
			t.Errorf("%s: fields %v (%v), labels %v (%v); want %d fields (error %v), %d labels (error %v)", tc.name,
				a.FieldSelector, a.FieldSelectorErr, a.LabelSelector, a.LabelSelectorErr, tc.wantFields, tc.wantFieldErr, tc.wantLabels, tc.wantLabelErr)
		}
	}
}
