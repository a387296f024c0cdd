package pods

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime/fake"
)

// fakeNetwork is a pod network that hands out addresses in order and
// records attachments.
type fakeNetwork struct {
	mu       sync.Mutex
	notReady error
	seq      int
	actions  []string
}

var _ Network = (*fakeNetwork)(nil)

func (n *fakeNetwork) Ready() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.notReady
}

func (n *fakeNetwork) Configure(string) error { return nil }

func (n *fakeNetwork) SetUp(_ context.Context, p network.Pod) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	n.actions = append(n.actions, "SetUp "+p.Name)
	return fmt.Sprintf("10.88.0.%d", n.seq+1), nil
}

func (n *fakeNetwork) TearDown(_ context.Context, p network.Pod) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.actions = append(n.actions, "TearDown "+p.Name+" "+p.SandboxID)
	return nil
}

func (n *fakeNetwork) Actions() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.actions)
}

// fakeNode is a pod manager on the fakes and an in-memory apiserver.
type fakeNode struct {
	t   *testing.T
	api *clienttest.Server
	rt  *fake.Runtime
	net *fakeNetwork
	rec *events.FakeRecorder
	mgr *Manager
}

const (
	fakeNodeName = "node-a"
	fakeImage    = "docker.io/library/busybox:1.36"
)

// newFakeNode starts a pod manager on the fakes, seeded with objs; seed
// may prepare the runtime and network before the manager starts.
func newFakeNode(t *testing.T, seed func(*fakeNode), objs ...api.Object) *fakeNode {
	t.Helper()
	// objs may hold the Node (with a status, labels, taints); else it is a
	// bare one with a podCIDR.
	if !slices.ContainsFunc(objs, func(o api.Object) bool { _, ok := o.(*api.Node); return ok }) {
		objs = append([]api.Object{&api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName}, Spec: api.NodeSpec{PodCIDR: "10.88.0.0/24"}}}, objs...)
	}
	n := &fakeNode{t: t, api: clienttest.NewServer(t, objs...), rt: fake.New(),
		net: &fakeNetwork{}, rec: &events.FakeRecorder{}}
	n.rt.AddImage(fakeImage)
	if seed != nil {
		seed(n)
	}
	dir := t.TempDir()
	n.mgr = New(n.api.Client(), n.rt, n.net, n.rec, Options{
		NodeName: fakeNodeName, NodeIP: "192.0.2.10", RootDir: dir + "/root", LogsDir: dir + "/logs",
		ResyncPeriod: 100 * time.Millisecond, BackoffInitial: 200 * time.Millisecond, BackoffMax: 400 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
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

func fakePod(name string, containers ...api.Container) *api.Pod {
	for i := range containers {
		containers[i].Image = "busybox:1.36"
		containers[i].ImagePullPolicy = api.PullIfNotPresent
	}
	grace := int64(3)
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       api.PodSpec{NodeName: fakeNodeName, Containers: containers, TerminationGracePeriodSeconds: &grace},
	}
}

// pod reads the pod back from the apiserver.
func (n *fakeNode) pod(name string) *api.Pod {
	var p api.Pod
	if !n.api.Object(api.ResourceInfo{Resource: "pods", Namespaced: true}, "default", name, &p) {
		return nil
	}
	return &p
}

// wait polls cond for up to 5 s.
func (n *fakeNode) wait(what string, cond func() bool) {
	n.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			n.t.Fatalf("timed out waiting for %s; runtime: %q; events: %q", what, n.rt.Actions(), n.rec.Events())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (n *fakeNode) waitPod(name, what string, cond func(*api.Pod) bool) *api.Pod {
	n.t.Helper()
	var p *api.Pod
	n.wait("pod "+name+" "+what, func() bool {
		p = n.pod(name)
		return p != nil && cond(p)
	})
	return p
}

func (n *fakeNode) hasEvent(substr string) bool {
	for _, e := range n.rec.Events() {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}

func statusOf(p *api.Pod, name string) api.ContainerStatus {
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if cs.Name == name {
			return cs
		}
	}
	return api.ContainerStatus{}
}

func isRunning(p *api.Pod) bool {
	if p.Status.Phase != api.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}
