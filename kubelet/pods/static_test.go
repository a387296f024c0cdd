package pods

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/runtime/fake"
	"github.com/minik8s/minik8s/kubelet/staticpods"
)

// staticManifest is a static pod of the fake node as the file source
// makes it.
func staticManifest(t *testing.T, name, command string) *api.Pod {
	t.Helper()
	m := `apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: kube-system}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: "busybox:1.36", imagePullPolicy: IfNotPresent, command: [sh, -c, "` + command + `"]}
`
	p, err := staticpods.Decode([]byte(m), "/etc/kubernetes/manifests/"+name+".yaml", fakeNodeName)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newStaticFakeNode is newFakeNode with static pods given before the
// manager starts; apiDown, while true, fails every list and watch.
func newStaticFakeNode(t *testing.T, static []*api.Pod, apiDown *atomic.Bool) *fakeNode {
	t.Helper()
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName}, Spec: api.NodeSpec{PodCIDR: "10.88.0.0/24"}}
	n := &fakeNode{t: t, api: clienttest.NewServer(t, node), rt: fake.New(), net: &fakeNetwork{}, rec: &events.FakeRecorder{}}
	if apiDown != nil {
		n.api.PrependReactor("*", "*", func(a clienttest.Action) (bool, any, error) {
			if apiDown.Load() {
				return true, nil, apierrors.NewServiceUnavailable("the apiserver is down")
			}
			return false, nil, nil
		})
	}
	n.rt.AddImage(fakeImage)
	dir := t.TempDir()
	n.mgr = New(n.api.Client(), n.rt, n.net, n.rec, Options{
		NodeName: fakeNodeName, NodeIP: "192.0.2.10", RootDir: dir + "/root", LogsDir: dir + "/logs",
		ResyncPeriod: 100 * time.Millisecond, BackoffInitial: 200 * time.Millisecond, BackoffMax: 400 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	n.mgr.SetStaticPods(static)
	n.rt.SetOnExit(n.mgr.OnContainerExit)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.mgr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("pod manager did not stop")
		}
	})
	return n
}

func (n *fakeNode) mirror(name string) *api.Pod {
	var p api.Pod
	if !n.api.Object(api.ResourceInfo{Resource: "pods", Namespaced: true}, "kube-system", name, &p) {
		return nil
	}
	return &p
}

func (n *fakeNode) waitMirror(name, what string, cond func(*api.Pod) bool) *api.Pod {
	n.t.Helper()
	var p *api.Pod
	n.wait("mirror pod "+name+" "+what, func() bool {
		p = n.mirror(name)
		return cond(p)
	})
	return p
}

func countActions(actions []string, prefix string) int {
	c := 0
	for _, a := range actions {
		if strings.HasPrefix(a, prefix) {
			c++
		}
	}
	return c
}

// A static pod runs from its manifest; its mirror pod is created owned by
// the Node and carries the status; a mirror pod deleted through the API
// comes back and the pod keeps running.
func TestStaticPodMirror(t *testing.T) {
	static := staticManifest(t, "etcd", "sleep 3600")
	n := newStaticFakeNode(t, []*api.Pod{static}, nil)
	n.wait("the static pod running", func() bool { return n.rt.Running("etcd-node-a", "main") != nil })
	m := n.waitMirror("etcd-node-a", "Running", func(p *api.Pod) bool { return p != nil && isRunning(p) })
	if m.Annotations[staticpods.ConfigMirrorAnnotationKey] != string(static.UID) || m.Annotations[staticpods.ConfigSourceAnnotationKey] != "file" {
		t.Errorf("mirror annotations %v, want config.mirror=%s and config.source=file", m.Annotations, static.UID)
	}
	if m.UID == static.UID {
		t.Errorf("the mirror pod has the static pod's UID %s: the apiserver gives its own", m.UID)
	}
	var node api.Node
	n.api.Object(api.ResourceInfo{Resource: "nodes"}, "", fakeNodeName, &node)
	if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "Node" || m.OwnerReferences[0].APIVersion != "v1" ||
		m.OwnerReferences[0].Name != fakeNodeName || m.OwnerReferences[0].UID != node.UID ||
		m.OwnerReferences[0].Controller == nil || !*m.OwnerReferences[0].Controller {
		t.Errorf("mirror owner references %+v, want the Node %s (%s) as controller", m.OwnerReferences, fakeNodeName, node.UID)
	}
	if m.Spec.NodeName != fakeNodeName {
		t.Errorf("mirror nodeName %q", m.Spec.NodeName)
	}
	if p, ok := n.mgr.GetPodByName("kube-system", "etcd-node-a"); !ok || p.UID != static.UID {
		t.Errorf("GetPodByName gives %v, want the static pod", p)
	}
	if got := n.mgr.GetPods(); len(got) != 1 || got[0].UID != static.UID {
		t.Errorf("GetPods gives %d pods, want the static pod alone", len(got))
	}

	// Deleted through the API: it comes back, and the pod is not touched.
	zero := int64(0)
	if err := client.Resource[api.Pod](n.api.Client()).Namespace("kube-system").Delete(context.Background(), "etcd-node-a",
		&api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	again := n.waitMirror("etcd-node-a", "re-created and Running", func(p *api.Pod) bool { return p != nil && p.UID != m.UID && isRunning(p) })
	if again.Annotations[staticpods.ConfigMirrorAnnotationKey] != string(static.UID) {
		t.Errorf("re-created mirror annotations %v", again.Annotations)
	}
	acts := n.rt.Actions()
	if c := countActions(acts, "StartContainer etcd-node-a/main"); c != 1 || countActions(acts, "StopContainer") != 0 {
		t.Errorf("runtime calls %q: want the container started once and never stopped", acts)
	}
}

// A changed manifest (a new hash) replaces the pod: the old one stops
// before the new one starts, and the mirror pod is replaced; a removed
// one stops and its mirror pod goes.
func TestStaticPodChangeAndRemove(t *testing.T) {
	v1 := staticManifest(t, "web", "sleep 3600")
	n := newStaticFakeNode(t, []*api.Pod{v1}, nil)
	m1 := n.waitMirror("web-node-a", "Running", func(p *api.Pod) bool { return p != nil && isRunning(p) })
	first := n.rt.Running("web-node-a", "main")

	v2 := staticManifest(t, "web", "sleep 7200")
	if v2.UID == v1.UID {
		t.Fatal("the changed manifest has the same UID")
	}
	n.mgr.SetStaticPods([]*api.Pod{v2})
	m2 := n.waitMirror("web-node-a", "replaced", func(p *api.Pod) bool {
		return p != nil && p.Annotations[staticpods.ConfigMirrorAnnotationKey] == string(v2.UID) && isRunning(p)
	})
	if m2.UID == m1.UID {
		t.Error("the mirror pod was not replaced")
	}
	second := n.rt.Running("web-node-a", "main")
	if second == nil || second.ID == first.ID || second.PodUID != string(v2.UID) {
		t.Fatalf("running container %+v, want a new one of pod %s", second, v2.UID)
	}
	acts := n.rt.Actions()
	stop := slices.IndexFunc(acts, func(a string) bool { return strings.HasPrefix(a, "StopContainer web-node-a/main") })
	start := slices.Index(acts[1:], "RunSandbox web-node-a/POD") + 1
	if stop < 0 || start < 1 || start < stop {
		t.Errorf("runtime calls %q: want the old container stopped before the new sandbox", acts)
	}

	n.mgr.SetStaticPods(nil)
	n.wait("the static pod stopped", func() bool { return n.rt.Running("web-node-a", "main") == nil })
	n.waitMirror("web-node-a", "deleted", func(p *api.Pod) bool { return p == nil })
}

// Static pods start while the apiserver cannot be reached; their mirror
// pod is made once it can, and API pods wait for it.
func TestStaticPodWithoutAPI(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	static := staticManifest(t, "apiserver", "sleep 3600")
	n := newStaticFakeNode(t, []*api.Pod{static}, &down)
	n.wait("the static pod running without the API", func() bool { return n.rt.Running("apiserver-node-a", "main") != nil })
	down.Store(false)
	n.waitMirror("apiserver-node-a", "Running", func(p *api.Pod) bool { return p != nil && isRunning(p) })
	if c := countActions(n.rt.Actions(), "StartContainer apiserver-node-a/main"); c != 1 {
		t.Errorf("the container started %d times, want once", c)
	}
}

// A mirror pod left by a static pod that is gone is deleted; an API pod's
// mirror-looking twin is never run.
func TestOrphanedMirrorPodDeleted(t *testing.T) {
	n := newStaticFakeNode(t, nil, nil)
	yes := true
	orphan := fakePod("old-node-a", api.Container{Name: "main"})
	orphan.Namespace = "kube-system"
	orphan.Annotations = map[string]string{staticpods.ConfigMirrorAnnotationKey: "abc", staticpods.ConfigSourceAnnotationKey: "file"}
	orphan.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: fakeNodeName, Controller: &yes}}
	if err := n.api.Add(orphan); err != nil {
		t.Fatal(err)
	}
	n.waitMirror("old-node-a", "deleted", func(p *api.Pod) bool { return p == nil })
	if acts := n.rt.Actions(); countActions(acts, "RunSandbox") != 0 {
		t.Errorf("runtime calls %q: a mirror pod was run", acts)
	}
}
