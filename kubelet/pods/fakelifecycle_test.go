package pods

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// The pod lifecycle on the fake runtime: each test runs in well under a
// second, without root or containerd; kubelet/pods' other tests cover the
// same paths on a real containerd.

func TestFakeStartsPodInOrder(t *testing.T) {
	init := api.Container{Name: "setup"}
	pod := fakePod("web", api.Container{Name: "main"})
	pod.Spec.InitContainers = []api.Container{init}
	pod.Spec.InitContainers[0].Image, pod.Spec.InitContainers[0].ImagePullPolicy = "busybox:1.36", api.PullIfNotPresent
	n := newFakeNode(t, nil, pod)
	n.wait("init container started", func() bool { return n.rt.Running("web", "setup") != nil })
	if p := n.pod("web"); p != nil && p.Status.Phase != "" && p.Status.Phase != api.PodPending {
		t.Fatalf("phase %s while the init container runs", p.Status.Phase)
	}
	n.rt.Exit(n.rt.Running("web", "setup").ID, 0, "Completed")
	p := n.waitPod("web", "Running", isRunning)
	want := []string{"RunSandbox web/POD", "CreateContainer web/setup", "StartContainer web/setup", "CreateContainer web/main", "StartContainer web/main"}
	if got := n.rt.Actions(); !slices.Equal(got, want) {
		t.Errorf("runtime calls %q, want %q", got, want)
	}
	if p.Status.PodIP != "10.88.0.2" || p.Status.HostIP != "192.0.2.10" {
		t.Errorf("podIP %q hostIP %q", p.Status.PodIP, p.Status.HostIP)
	}
	if s := statusOf(p, "setup"); s.State.Terminated == nil || s.State.Terminated.Reason != "Completed" {
		t.Errorf("init status %+v", s.State)
	}
	for _, e := range []string{`Normal Pulled Container image "busybox:1.36" already present on machine`, "Normal Created Created container: main", "Normal Started Started container main"} {
		if !n.hasEvent(e) {
			t.Errorf("no event %q in %q", e, n.rec.Events())
		}
	}
}

func TestFakeCrashLoopBackOff(t *testing.T) {
	n := newFakeNode(t, nil, fakePod("crash", api.Container{Name: "main"}))
	n.waitPod("crash", "Running", isRunning)
	n.rt.Exit(n.rt.Running("crash", "main").ID, 1, "Error")
	n.waitPod("crash", "restarted once", func(p *api.Pod) bool { return isRunning(p) && statusOf(p, "main").RestartCount == 1 })
	n.rt.Exit(n.rt.Running("crash", "main").ID, 1, "Error")
	p := n.waitPod("crash", "in CrashLoopBackOff", func(p *api.Pod) bool {
		w := statusOf(p, "main").State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	if last := statusOf(p, "main").LastTerminationState.Terminated; last == nil || last.ExitCode != 1 {
		t.Errorf("lastState %+v, want the exit 1", statusOf(p, "main").LastTerminationState)
	}
	if !n.hasEvent("Warning BackOff Back-off restarting failed container main in pod crash_default(" + string(p.UID) + ")") {
		t.Errorf("no BackOff event in %q", n.rec.Events())
	}
	n.waitPod("crash", "restarted after the back-off", func(p *api.Pod) bool { return isRunning(p) && statusOf(p, "main").RestartCount == 2 })
}

func TestFakeGracefulDeletion(t *testing.T) {
	pod := fakePod("gone", api.Container{Name: "main"})
	// The finalizer holds the object while it is being deleted, as the
	// apiserver holds a bound pod for its kubelet.
	pod.Finalizers = []string{"test.minik8s.io/hold"}
	n := newFakeNode(t, nil, pod)
	n.waitPod("gone", "Running", isRunning)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	grace := int64(7)
	pods := client.Resource[api.Pod](n.api.Client()).Namespace("default")
	if err := pods.Delete(ctx, "gone", &api.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	p := n.pod("gone")
	n.wait("the pod's containers stopped", func() bool {
		return slices.Contains(n.rt.Actions(), "RemoveContainer gone/POD")
	})
	n.wait("the final delete", func() bool {
		for _, a := range n.api.Actions() {
			if a.Verb == "delete" && a.Resource == "pods" && strings.Contains(string(a.Body), `"gracePeriodSeconds":0`) {
				return true
			}
		}
		return false
	})
	acts := n.rt.Actions()
	if !slices.Contains(acts, "StopContainer gone/main grace=7s") || !slices.Contains(acts, "RemoveContainer gone/POD") {
		t.Errorf("runtime calls %q: want main stopped with the deletion's grace and the sandbox removed", acts)
	}
	if !slices.ContainsFunc(n.net.Actions(), func(a string) bool { return strings.HasPrefix(a, "TearDown gone ") }) {
		t.Errorf("network %q: want the pod torn down", n.net.Actions())
	}
	if !n.hasEvent("Normal Killing Stopping container main") {
		t.Errorf("no Killing event in %q", n.rec.Events())
	}
	var del string
	for _, a := range n.api.Actions() {
		if a.Verb == "delete" && a.Resource == "pods" {
			del = string(a.Body) // the last: the kubelet's
		}
	}
	if !strings.Contains(del, `"gracePeriodSeconds":0`) || !strings.Contains(del, `"uid":"`+string(p.UID)+`"`) {
		t.Errorf("final delete body %q: want grace 0 and a UID precondition", del)
	}
}

// A restarted kubelet re-attaches to the running containers and starts
// nothing new.
func TestFakeKubeletRestartReadopts(t *testing.T) {
	pod := fakePod("kept", api.Container{Name: "main"})
	seed := func(n *fakeNode) {
		rt, now, uid := n.rt, time.Now(), string(n.pod("kept").UID)
		rt.Add(runtime.Container{ID: "sb", PodUID: uid, PodNamespace: "default", PodName: "kept", Name: runtime.SandboxName,
			Kind: runtime.KindSandbox, State: runtime.StateRunning, PodIP: "10.88.0.9", CreatedAt: now})
		rt.Add(runtime.Container{ID: "main-0", PodUID: uid, PodNamespace: "default", PodName: "kept", Name: "main",
			Kind: runtime.KindContainer, State: runtime.StateRunning, RestartCount: 3, Hash: containerHash(&pod.Spec.Containers[0]),
			CreatedAt: now, StartedAt: now})
	}
	n := newFakeNode(t, seed, pod)
	p := n.waitPod("kept", "Running", isRunning)
	if s := statusOf(p, "main"); s.RestartCount != 3 || s.ContainerID != "fake://main-0" || p.Status.PodIP != "10.88.0.9" {
		t.Errorf("status %+v podIP %s: want the same container, restarts and IP", s, p.Status.PodIP)
	}
	time.Sleep(300 * time.Millisecond) // a few resyncs
	if got := n.rt.Actions(); !slices.Equal(got, []string{"Adopt kept/POD", "Adopt kept/main"}) && !slices.Equal(got, []string{"Adopt kept/main", "Adopt kept/POD"}) {
		t.Errorf("runtime calls %q, want only the two adoptions", got)
	}
}

// After a reboot (every task lost) the pod restarts in place in a new
// sandbox: restartCount + 1, lastState Unknown/255.
func TestFakeRebootRestartsInPlace(t *testing.T) {
	n := newFakeNode(t, nil, fakePod("boot", api.Container{Name: "main"}))
	before := n.waitPod("boot", "Running", isRunning)
	n.rt.Reboot()
	n.mgr.kick(string(before.UID))
	p := n.waitPod("boot", "restarted", func(p *api.Pod) bool { return isRunning(p) && statusOf(p, "main").RestartCount == 1 })
	last := statusOf(p, "main").LastTerminationState.Terminated
	if last == nil || last.Reason != "Unknown" || last.ExitCode != 255 {
		t.Errorf("lastState %+v, want Unknown 255", statusOf(p, "main").LastTerminationState)
	}
	if p.Status.PodIP == before.Status.PodIP {
		t.Errorf("pod IP %s unchanged: want the new sandbox's", p.Status.PodIP)
	}
	acts := n.rt.Actions()
	if slices.Index(acts, "RemoveContainer boot/POD") > slices.Index(acts[1:], "RunSandbox boot/POD")+1 {
		t.Errorf("runtime calls %q: want the dead sandbox removed before the new one runs", acts)
	}
}

func TestFakeLivenessProbeRestarts(t *testing.T) {
	pod := fakePod("live", api.Container{Name: "main", LivenessProbe: &api.Probe{
		ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"check"}}}, PeriodSeconds: 1, FailureThreshold: 1}})
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetExecCode("main", 1) }, pod)
	n.waitPod("live", "restarted by its liveness probe", func(p *api.Pod) bool { return statusOf(p, "main").RestartCount >= 1 })
	if !n.hasEvent("Normal Killing Container main failed liveness probe, will be restarted") {
		t.Errorf("no Killing event in %q", n.rec.Events())
	}
	if !n.hasEvent("Warning Unhealthy Liveness probe failed") {
		t.Errorf("no Unhealthy event in %q", n.rec.Events())
	}
}

func TestFakeImagePullBackOff(t *testing.T) {
	pod := fakePod("pull", api.Container{Name: "main"})
	pod.Spec.Containers[0].Image = "registry.invalid/app:v1"
	n := newFakeNode(t, func(n *fakeNode) { n.rt.FailPulls(errFake("registry unreachable")) }, pod)
	n.waitPod("pull", "ImagePullBackOff", func(p *api.Pod) bool {
		w := statusOf(p, "main").State.Waiting
		return w != nil && w.Reason == "ImagePullBackOff"
	})
	for _, e := range []string{`Normal Pulling Pulling image "registry.invalid/app:v1"`,
		`Warning Failed Failed to pull image "registry.invalid/app:v1": registry unreachable`, "Warning Failed Error: ErrImagePull",
		`Normal BackOff Back-off pulling image "registry.invalid/app:v1"`, "Warning Failed Error: ImagePullBackOff"} {
		if !n.hasEvent(e) {
			t.Errorf("no event %q in %q", e, n.rec.Events())
		}
	}
}

func TestFakeNetworkNotReady(t *testing.T) {
	n := newFakeNode(t, func(n *fakeNode) { n.net.notReady = errFake("no podCIDR yet") }, fakePod("wait", api.Container{Name: "main"}))
	n.wait("NetworkNotReady", func() bool {
		return n.hasEvent("Warning NetworkNotReady network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:no podCIDR yet")
	})
	n.net.mu.Lock()
	n.net.notReady = nil
	n.net.mu.Unlock()
	n.waitPod("wait", "Running once the network is ready", isRunning)
}

type errFake string

func (e errFake) Error() string { return string(e) }

// A container whose definition changes (its image patched) is killed and
// its next instance started in one pass, as kube's SyncPod does: no status
// written in between shows it dead, so the pod stays Ready throughout
// ('Pods should run through the lifecycle of Pods and PodStatus' reads
// Ready and ContainersReady True right after the patch).
func TestFakeDefinitionChangeRestartsInOnePass(t *testing.T) {
	n := newFakeNode(t, nil, fakePod("patched", api.Container{Name: "main"}))
	p := n.waitPod("patched", "Ready", func(p *api.Pod) bool { return isRunning(p) && podReady(p) })
	var notReady atomic.Bool
	n.api.PrependReactor("update", "pods", func(a clienttest.Action) (bool, any, error) {
		var sent api.Pod
		if a.Subresource == "status" && json.Unmarshal(a.Body, &sent) == nil && !podReady(&sent) {
			notReady.Store(true)
		}
		return false, nil, nil
	})
	p.Spec.Containers[0].Image = "busybox:1.37"
	n.rt.AddImage("docker.io/library/busybox:1.37")
	if _, err := client.Resource[api.Pod](n.api.Client()).Namespace("default").Update(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	n.waitPod("patched", "restarted with the new image", func(p *api.Pod) bool {
		s := statusOf(p, "main")
		return s.RestartCount == 1 && s.State.Running != nil && podReady(p)
	})
	if !n.hasEvent("Normal Killing Container main definition changed, will be restarted") {
		t.Errorf("no Killing event in %q", n.rec.Events())
	}
	if notReady.Load() {
		t.Errorf("a status written between the kill and the start said Ready False")
	}
}

func podReady(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// An evicted pod (DisruptionTarget set, then deleted with its grace) gets
// its terminal status before the kubelet's final delete, as kube's status
// manager writes it: phase Failed, the killed container terminated, Ready
// False, the eviction's condition kept. A Job with a pod failure policy
// counts the pod only once it is Failed, and removes its finalizer then.
func TestFakeDeletionWritesTerminalStatus(t *testing.T) {
	pod := fakePod("evicted", api.Container{Name: "main"})
	pod.Spec.RestartPolicy = api.RestartPolicyNever
	pod.Finalizers = []string{"batch.kubernetes.io/job-tracking"}
	n := newFakeNode(t, nil, pod)
	p := n.waitPod("evicted", "Running", isRunning)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pods := client.Resource[api.Pod](n.api.Client()).Namespace("default")
	p.Status.Conditions = append(p.Status.Conditions, api.PodCondition{Type: api.DisruptionTarget, Status: api.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
	if _, err := pods.UpdateStatus(ctx, p); err != nil {
		t.Fatal(err)
	}
	grace := int64(1)
	if err := pods.Delete(ctx, "evicted", &api.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	finalDelete := func() int {
		for i, a := range n.api.Actions() {
			if a.Verb == "delete" && a.Resource == "pods" && strings.Contains(string(a.Body), `"gracePeriodSeconds":0`) {
				return i
			}
		}
		return -1
	}
	n.wait("the final delete", func() bool { return finalDelete() >= 0 })
	p = n.pod("evicted")
	if p.Status.Phase != api.PodFailed {
		t.Errorf("phase %q, want Failed", p.Status.Phase)
	}
	if term := statusOf(p, "main").State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("container state %+v, want terminated with exit 137", statusOf(p, "main").State)
	}
	conds := map[api.PodConditionType]api.PodCondition{}
	for _, c := range p.Status.Conditions {
		conds[c.Type] = c
	}
	if c := conds[api.DisruptionTarget]; c.Status != api.ConditionTrue || c.Reason != "EvictionByEvictionAPI" {
		t.Errorf("DisruptionTarget %+v, want the eviction's", c)
	}
	if c := conds[api.PodReady]; c.Status != api.ConditionFalse || c.Reason != "PodCompleted" {
		t.Errorf("Ready %+v, want False/PodCompleted", c)
	}
	lastStatus := -1
	for i, a := range n.api.Actions() {
		if a.Verb == "update" && a.Resource == "pods" && a.Subresource == "status" && strings.Contains(string(a.Body), `"phase":"Failed"`) {
			lastStatus = i
		}
	}
	if lastStatus < 0 || lastStatus > finalDelete() {
		t.Errorf("the Failed status (action %d) must be written before the final delete (action %d)", lastStatus, finalDelete())
	}
}
