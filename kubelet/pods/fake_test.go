package pods

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// fakeRuntime is an in-memory container runtime that records what the pod
// manager asks of it ("Verb pod/container" strings) and lets a test make
// containers exit or lose every task as a reboot does.
type fakeRuntime struct {
	mu         sync.Mutex
	containers map[string]*runtime.Container
	seq        int
	actions    []string
	// images present; pulls of others fail with pullErr (nil: succeed).
	images  map[string]bool
	pullErr error
	// execCode is what Exec returns, by container name.
	execCode map[string]int
	onExit   func(podUID, id string)
}

var (
	_ Runtime       = (*fakeRuntime)(nil)
	_ Adopter       = (*fakeRuntime)(nil)
	_ Execer        = (*fakeRuntime)(nil)
	_ CgroupCleaner = (*fakeRuntime)(nil)
)

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{containers: map[string]*runtime.Container{}, images: map[string]bool{}, execCode: map[string]int{}}
}

func (f *fakeRuntime) record(verb string, c *runtime.Container) {
	f.actions = append(f.actions, verb+" "+c.PodName+"/"+c.Name)
}

// Actions returns the calls so far, in order.
func (f *fakeRuntime) Actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.actions)
}

func (f *fakeRuntime) ListPodContainers(_ context.Context, podUID string) ([]runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []runtime.Container
	for _, id := range slices.Sorted(maps.Keys(f.containers)) {
		if c := f.containers[id]; podUID == "" || c.PodUID == podUID {
			out = append(out, *c)
		}
	}
	return out, nil
}

func (f *fakeRuntime) RunSandbox(_ context.Context, cfg runtime.SandboxConfig) (runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	now := time.Now()
	c := &runtime.Container{ID: fmt.Sprintf("sandbox-%d", f.seq), PodUID: cfg.PodUID, PodNamespace: cfg.PodNamespace, PodName: cfg.PodName,
		Name: runtime.SandboxName, Kind: runtime.KindSandbox, HostNetwork: cfg.HostNetwork, State: runtime.StateRunning,
		CreatedAt: now, StartedAt: now}
	f.containers[c.ID] = c
	f.record("RunSandbox", c)
	return *c, nil
}

func (f *fakeRuntime) SetSandboxIP(_ context.Context, id, ip string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("no sandbox %s", id)
	}
	c.PodIP = ip
	return nil
}

func (f *fakeRuntime) CreateContainer(_ context.Context, cfg runtime.ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	c := &runtime.Container{ID: fmt.Sprintf("%s-%d", cfg.Name, f.seq), PodUID: cfg.PodUID, PodNamespace: cfg.PodNamespace, PodName: cfg.PodName,
		Name: cfg.Name, Kind: runtime.KindContainer, Init: cfg.Init, RestartCount: cfg.RestartCount, Hash: cfg.Hash, Image: cfg.Image,
		State: runtime.StateCreated, CreatedAt: time.Now()}
	f.containers[c.ID] = c
	f.record("CreateContainer", c)
	return c.ID, nil
}

func (f *fakeRuntime) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("no container %s", id)
	}
	c.State, c.StartedAt = runtime.StateRunning, time.Now()
	f.record("StartContainer", c)
	return nil
}

func (f *fakeRuntime) StopContainer(_ context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		f.mu.Unlock()
		return nil
	}
	f.actions = append(f.actions, fmt.Sprintf("StopContainer %s/%s grace=%s", c.PodName, c.Name, grace))
	f.mu.Unlock()
	f.exit(id, 137, "Error")
	return nil
}

func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok {
		f.record("RemoveContainer", c)
		delete(f.containers, id)
	}
	return nil
}

func (f *fakeRuntime) ImagePresent(_ context.Context, ref string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "sha256:" + ref, f.images[ref], nil
}

func (f *fakeRuntime) PullImage(_ context.Context, ref string) (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, "PullImage "+ref)
	if f.pullErr != nil {
		return "", 0, f.pullErr
	}
	f.images[ref] = true
	return "sha256:" + ref, 1 << 20, nil
}

func (f *fakeRuntime) Adopt(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok {
		f.record("Adopt", c)
	}
	return nil
}

func (f *fakeRuntime) Exec(_ context.Context, id string, cmd []string, _ bool, _ io.Reader, _, _ io.Writer, _ <-chan runtime.TerminalSize) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		return -1, fmt.Errorf("container %s is not running", id)
	}
	return f.execCode[c.Name], nil
}

func (f *fakeRuntime) RemovePodCgroups(podUID string) {}

// exit makes a running container exit with code, as its task would.
func (f *fakeRuntime) exit(id string, code int32, reason string) {
	f.mu.Lock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		f.mu.Unlock()
		return
	}
	c.State, c.ExitCode, c.Reason, c.FinishedAt = runtime.StateExited, code, reason, time.Now()
	uid, onExit := c.PodUID, f.onExit
	f.mu.Unlock()
	if onExit != nil {
		onExit(uid, id)
	}
}

// running returns the running instance of container name of pod podName.
func (f *fakeRuntime) running(podName, name string) *runtime.Container {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.containers {
		if c.PodName == podName && c.Name == name && c.State == runtime.StateRunning {
			cp := *c
			return &cp
		}
	}
	return nil
}

// reboot loses every task, as a node restart does: sandboxes are no
// longer running, and started containers report the lost task as CRI
// runtimes do (exited, 255, Unknown).
func (f *fakeRuntime) reboot() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.containers {
		if c.State != runtime.StateRunning {
			continue
		}
		c.State = runtime.StateExited
		if c.Kind == runtime.KindContainer {
			c.ExitCode, c.Reason, c.FinishedAt = 255, "Unknown", time.Now()
		}
	}
}

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
	rt  *fakeRuntime
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
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName}, Spec: api.NodeSpec{PodCIDR: "10.88.0.0/24"}}
	n := &fakeNode{t: t, api: clienttest.NewServer(t, append([]api.Object{node}, objs...)...), rt: newFakeRuntime(),
		net: &fakeNetwork{}, rec: &events.FakeRecorder{}}
	n.rt.images[fakeImage] = true
	if seed != nil {
		seed(n)
	}
	dir := t.TempDir()
	n.mgr = New(n.api.Client(), n.rt, n.net, n.rec, Options{
		NodeName: fakeNodeName, NodeIP: "192.0.2.10", RootDir: dir + "/root", LogsDir: dir + "/logs",
		ResyncPeriod: 100 * time.Millisecond, BackoffInitial: 200 * time.Millisecond, BackoffMax: 400 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	n.rt.onExit = n.mgr.OnContainerExit
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
