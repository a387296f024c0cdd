package admission

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
)

type fakeNodes map[string]*api.Node

func (f fakeNodes) GetNode(_ context.Context, name string) (*api.Node, bool, error) {
	if name == "broken" {
		return nil, false, errors.New("cache not synced")
	}
	n, ok := f[name]
	return n, ok, nil
}

func resourceInfo(t *testing.T, group, resource string) api.ResourceInfo {
	t.Helper()
	r, ok := api.LookupResource(group, resource)
	if !ok {
		t.Fatalf("no resource %s/%s", group, resource)
	}
	return r
}

func TestNodeRestriction(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	nodes := resourceInfo(t, "", "nodes")
	leases := resourceInfo(t, "coordination.k8s.io", "leases")
	configMaps := resourceInfo(t, "", "configmaps")
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	admin := &request.User{Name: "admin", Groups: []string{"system:masters"}}

	node := func(name string, labels map[string]string, taints ...api.Taint) *api.Node {
		return &api.Node{ObjectMeta: api.ObjectMeta{Name: name, UID: api.UID("uid-" + name), Labels: labels}, Spec: api.NodeSpec{Taints: taints}}
	}
	pod := func(name, nodeName string) *api.Pod {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": "web"}},
			Spec: api.PodSpec{NodeName: nodeName, Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	}
	yes := true
	mirror := func(mutate func(*api.Pod)) *api.Pod {
		p := pod("static-web-node-a", "node-a")
		p.Annotations = map[string]string{api.MirrorPodAnnotationKey: "hash"}
		p.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "uid-node-a", Controller: &yes}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	withStatus := func(p *api.Pod, phase api.PodPhase, labels map[string]string) *api.Pod {
		p = api.DeepCopy(p)
		p.Status.Phase = phase
		if labels != nil {
			p.Labels = labels
		}
		return p
	}
	lease := func(name string) *api.Lease {
		return &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: api.NamespaceNodeLease, Name: name}}
	}
	plugin := &NodeRestriction{Nodes: fakeNodes{"node-a": node("node-a", nil)}}

	notReady := api.Taint{Key: api.TaintNodeNotReady, Effect: api.TaintEffectNoSchedule}
	t0 := api.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name string
		a    Attributes
		// want is the whole error message, "" for admitted.
		want string
	}{
		// Other users are not restricted.
		{"admin updates any node", Attributes{Operation: Update, Resource: nodes, Name: "node-b", User: admin,
			Object: node("node-b", map[string]string{"node-restriction.kubernetes.io/x": "y"}), OldObject: node("node-b", nil)}, ""},
		{"not a node: name without the group", Attributes{Operation: Delete, Resource: nodes, Name: "node-a",
			User: &request.User{Name: "system:node:node-a"}, OldObject: node("node-a", nil)}, ""},
		{"a node without a name", Attributes{Operation: Update, Resource: nodes, Name: "x",
			User: &request.User{Name: "system:node:", Groups: []string{"system:nodes"}}, Object: node("x", nil), OldObject: node("x", nil)},
			`nodes "x" is forbidden: could not determine node from user "system:node:"`},

		// Nodes.
		{"register itself", Attributes{Operation: Create, Resource: nodes, Name: "node-a", User: nodeA,
			Object: node("node-a", map[string]string{api.LabelHostname: "node-a", api.LabelOSStable: "linux",
				"beta.kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "vm", "kubelet.kubernetes.io/x": "1",
				"example.com/rack": "r1", "unprefixed": "ok"})}, ""},
		{"register another node", Attributes{Operation: Create, Resource: nodes, Name: "node-b", User: nodeA, Object: node("node-b", nil)},
			`nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`},
		{"register with restricted labels", Attributes{Operation: Create, Resource: nodes, Name: "node-a", User: nodeA,
			Object: node("node-a", map[string]string{"node-restriction.kubernetes.io/gpu": "yes", "kubernetes.io/role": "master",
				"foo.node-restriction.kubernetes.io/x": "1", "k8s.io/y": "2", "topology.kubernetes.io/zone": "z1"})},
			`nodes "node-a" is forbidden: node "node-a" is not allowed to set the following labels: foo.node-restriction.kubernetes.io/x, k8s.io/y, kubernetes.io/role, node-restriction.kubernetes.io/gpu`},
		{"update itself", Attributes{Operation: Update, Resource: nodes, Name: "node-a", User: nodeA,
			Object:    node("node-a", map[string]string{"example.com/x": "2", api.LabelHostname: "node-a"}, notReady),
			OldObject: node("node-a", map[string]string{"example.com/x": "1"}, notReady)}, ""},
		{"update its status", Attributes{Operation: Update, Resource: nodes, Subresource: "status", Name: "node-a", User: nodeA,
			Object: node("node-a", nil), OldObject: node("node-a", nil)}, ""},
		{"update another node", Attributes{Operation: Update, Resource: nodes, Name: "node-b", User: nodeA,
			Object: node("node-b", nil), OldObject: node("node-b", nil)},
			`nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`},
		{"another node's status", Attributes{Operation: Update, Resource: nodes, Subresource: "status", Name: "node-b", User: nodeA,
			Object: node("node-b", nil), OldObject: node("node-b", nil)},
			`nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`},
		{"add a restricted label", Attributes{Operation: Update, Resource: nodes, Name: "node-a", User: nodeA,
			Object: node("node-a", map[string]string{"node-restriction.kubernetes.io/dedicated": "db"}), OldObject: node("node-a", nil)},
			`nodes "node-a" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/dedicated`},
		{"remove a restricted label", Attributes{Operation: Update, Resource: nodes, Name: "node-a", User: nodeA,
			Object: node("node-a", nil), OldObject: node("node-a", map[string]string{"node-role.kubernetes.io/control-plane": ""})},
			`nodes "node-a" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane`},
		{"keep a restricted label", Attributes{Operation: Update, Resource: nodes, Name: "node-a", User: nodeA,
			Object:    node("node-a", map[string]string{"node-restriction.kubernetes.io/dedicated": "db"}),
			OldObject: node("node-a", map[string]string{"node-restriction.kubernetes.io/dedicated": "db"})}, ""},
		{"lift a taint", Attributes{Operation: Update, Resource: nodes, Name: "node-a", User: nodeA,
			Object: node("node-a", nil), OldObject: node("node-a", nil, notReady)},
			`nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints`},
		{"same taint, same instant", Attributes{Operation: Update, Resource: nodes, Name: "node-a", User: nodeA,
			Object:    node("node-a", nil, api.Taint{Key: "k", Effect: api.TaintEffectNoExecute, TimeAdded: &t0}),
			OldObject: node("node-a", nil, api.Taint{Key: "k", Effect: api.TaintEffectNoExecute, TimeAdded: &api.Time{Time: t0.Local()}})}, ""},
		{"delete itself", Attributes{Operation: Delete, Resource: nodes, Name: "node-a", User: nodeA, OldObject: node("node-a", nil)},
			`nodes "node-a" is forbidden: node "node-a" is not allowed to delete node "node-a"`},
		{"delete another node", Attributes{Operation: Delete, Resource: nodes, Name: "node-b", User: nodeA, OldObject: node("node-b", nil)},
			`nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`},

		// Pods.
		{"status of its pod", Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "web", User: nodeA,
			Object: withStatus(pod("web", "node-a"), api.PodRunning, nil), OldObject: pod("web", "node-a")}, ""},
		{"status of a pod elsewhere", Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "web", User: nodeA,
			Object: withStatus(pod("web", "node-b"), api.PodRunning, nil), OldObject: pod("web", "node-b")},
			`pods "web" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself`},
		{"labels through status", Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "web", User: nodeA,
			Object: withStatus(pod("web", "node-a"), api.PodRunning, map[string]string{"app": "db"}), OldObject: pod("web", "node-a")},
			`pods "web" is forbidden: node "node-a" cannot update labels through pod status`},
		{"delete its pod", Attributes{Operation: Delete, Resource: pods, Namespace: "default", Name: "web", User: nodeA,
			OldObject: pod("web", "node-a")}, ""},
		{"delete a pod elsewhere", Attributes{Operation: Delete, Resource: pods, Namespace: "default", Name: "web", User: nodeA,
			OldObject: pod("web", "node-b")},
			`pods "web" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself`},
		{"update a pod", Attributes{Operation: Update, Resource: pods, Namespace: "default", Name: "web", User: nodeA,
			Object: pod("web", "node-a"), OldObject: pod("web", "node-a")},
			`pods "web" is forbidden: unexpected operation "UPDATE", node "node-a" can only create and delete mirror pods`},
		{"bind a pod", Attributes{Operation: Update, Resource: pods, Subresource: "binding", Namespace: "default", Name: "web", User: nodeA,
			Object: pod("web", "node-a"), OldObject: pod("web", "")},
			`pods "web" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`},
		{"evict its pod", Attributes{Operation: Create, Resource: pods, Subresource: "eviction", Namespace: "default", Name: "web", User: nodeA,
			OldObject: pod("web", "node-a")}, ""},
		{"evict a pod elsewhere", Attributes{Operation: Create, Resource: pods, Subresource: "eviction", Namespace: "default", Name: "web", User: nodeA,
			OldObject: pod("web", "node-b")},
			`pods "web" is forbidden: node node-a can only evict pods with spec.nodeName set to itself`},
		{"mirror pod", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(nil)}, ""},
		{"a regular pod", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "web", User: nodeA, Object: pod("web", "node-a")},
			`pods "web" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods`},
		{"mirror pod for another node", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.Spec.NodeName = "node-b" })},
			`pods "static-web-node-a" is forbidden: node "node-a" can only create pods with spec.nodeName set to itself`},
		{"mirror pod without owner", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.OwnerReferences = nil })},
			`pods "static-web-node-a" is forbidden: node "node-a" can only create pods with an owner reference set to itself`},
		{"mirror pod owned by another node", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.OwnerReferences[0].Name = "node-b" })},
			`pods "static-web-node-a" is forbidden: node "node-a" can only create pods with an owner reference set to itself`},
		{"mirror pod, owner not controller", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.OwnerReferences[0].Controller = nil })},
			`pods "static-web-node-a" is forbidden: node "node-a" can only create pods with a controller owner reference set to itself`},
		{"mirror pod, blocking owner", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.OwnerReferences[0].BlockOwnerDeletion = &yes })},
			`pods "static-web-node-a" is forbidden: node "node-a" must not set blockOwnerDeletion on an owner reference`},
		{"mirror pod, stale node UID", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.OwnerReferences[0].UID = "old" })},
			`pods "static-web-node-a" is forbidden: node node-a UID mismatch: expected old got uid-node-a`},
		{"mirror pod with a secret", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) {
				p.Spec.Volumes = []api.Volume{{Name: "s", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "db"}}}}
			})},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference secrets`},
		{"mirror pod with a config map", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) {
				p.Spec.Containers[0].EnvFrom = []api.EnvFromSource{{ConfigMapRef: &api.ConfigMapEnvSource{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}}}}
			})},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference configmaps`},
		{"mirror pod with a service account", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.Spec.ServiceAccountName = "default" })},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference serviceaccounts`},
		{"mirror pod with a claim", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) {
				p.Spec.Volumes = []api.Volume{{Name: "d", VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
			})},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference persistentvolumeclaims`},
		{"mirror pod with a hostPath and an emptyDir", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) {
				p.Spec.Volumes = []api.Volume{{Name: "h", VolumeSource: api.VolumeSource{HostPath: &api.HostPathVolumeSource{Path: "/etc"}}},
					{Name: "e", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}}
			})}, ""},
		{"mirror pod with a projected token", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) {
				p.Spec.Volumes = []api.Volume{{Name: "t", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{
					Sources: []api.VolumeProjection{{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token"}}}}}}}
			})},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference serviceaccounts (via projected volumes)`},
		{"mirror pod with an ephemeral volume", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) {
				p.Spec.Volumes = []api.Volume{{Name: "x", VolumeSource: api.VolumeSource{Ephemeral: []byte(`{"volumeClaimTemplate":{}}`)}}}
			})},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference persistentvolumeclaims (via ephemeral volumes)`},
		{"mirror pod with a resource claim", Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "static-web-node-a", User: nodeA,
			Object: mirror(func(p *api.Pod) { p.Spec.ResourceClaims = []api.PodResourceClaim{{Name: "gpu"}} })},
			`pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference resourceclaims`},

		// Leases.
		{"create its lease", Attributes{Operation: Create, Resource: leases, Namespace: api.NamespaceNodeLease, Name: "node-a", User: nodeA,
			Object: lease("node-a")}, ""},
		{"renew its lease", Attributes{Operation: Update, Resource: leases, Namespace: api.NamespaceNodeLease, Name: "node-a", User: nodeA,
			Object: lease("node-a"), OldObject: lease("node-a")}, ""},
		{"create another's lease", Attributes{Operation: Create, Resource: leases, Namespace: api.NamespaceNodeLease, Name: "node-b", User: nodeA,
			Object: lease("node-b")},
			`leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node`},
		{"delete another's lease", Attributes{Operation: Delete, Resource: leases, Namespace: api.NamespaceNodeLease, Name: "node-b", User: nodeA,
			OldObject: lease("node-b")},
			`leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node`},
		{"a lease elsewhere", Attributes{Operation: Create, Resource: leases, Namespace: "kube-system", Name: "node-a", User: nodeA,
			Object: &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: "kube-system", Name: "node-a"}}},
			`leases.coordination.k8s.io "node-a" is forbidden: can only access leases in the "kube-node-lease" system namespace`},

		// Everything else is for authorization to decide.
		{"config maps", Attributes{Operation: Create, Resource: configMaps, Namespace: "default", Name: "c", User: nodeA,
			Object: &api.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "c"}}}, ""},
	}
	for _, tc := range tests {
		if !plugin.Handles(tc.a.Operation) {
			t.Errorf("%s: %s not handled", tc.name, tc.a.Operation)
			continue
		}
		err := plugin.Validate(context.Background(), &tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: admitted", tc.name)
		case tc.want != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.want):
			t.Errorf("%s:\n  got  %v (forbidden=%t)\n  want %s", tc.name, err, apierrors.IsForbidden(err), tc.want)
		}
	}
}

// The node of a mirror pod must exist and be readable; without a node
// getter the plugin refuses rather than skipping the check.
func TestNodeRestrictionNodeLookup(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	yes := true
	mirrorFor := func(node string) *Attributes {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "m", Annotations: map[string]string{api.MirrorPodAnnotationKey: "h"},
			OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: "u", Controller: &yes}}},
			Spec: api.PodSpec{NodeName: node}}
		return &Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "m", Object: p,
			User: &request.User{Name: "system:node:" + node, Groups: []string{"system:nodes"}}}
	}
	ctx := context.Background()
	p := &NodeRestriction{Nodes: fakeNodes{}}
	if err := p.Validate(ctx, mirrorFor("gone")); !apierrors.IsNotFound(err) || err.Error() != `nodes "gone" not found` {
		t.Errorf("unknown node: %v", err)
	}
	if err := p.Validate(ctx, mirrorFor("broken")); !apierrors.IsForbidden(err) ||
		err.Error() != `pods "m" is forbidden: error looking up node broken to verify uid: cache not synced` {
		t.Errorf("lookup error: %v", err)
	}
	if err := (&NodeRestriction{}).Validate(ctx, mirrorFor("node-a")); !apierrors.IsInternalError(err) {
		t.Errorf("no getter: %v", err)
	}
}
