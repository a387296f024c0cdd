package pods

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// sidecarPod is a pod with the app container main and the given sidecars
// (init containers with restartPolicy Always), in order.
func sidecarPod(name string, policy api.RestartPolicy, sidecars ...api.Container) *api.Pod {
	pod := fakePod(name, api.Container{Name: "main"})
	pod.Spec.RestartPolicy = policy
	always := api.ContainerRestartPolicyAlways
	for _, c := range sidecars {
		c.Image, c.ImagePullPolicy, c.RestartPolicy = "busybox:1.36", api.PullIfNotPresent, &always
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	return pod
}

func execProbe(name string) *api.Probe {
	return &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"true", name}}},
		PeriodSeconds: 1, FailureThreshold: 60}
}

// started reports whether the runtime was asked to start container name.
func (n *fakeNode) startedContainer(pod, name string) bool {
	return slices.Contains(n.rt.Actions(), "StartContainer "+pod+"/"+name)
}

func TestFakeSidecarStartupProbeGatesApps(t *testing.T) {
	pod := sidecarPod("sc", api.RestartPolicyAlways, api.Container{Name: "proxy", StartupProbe: execProbe("proxy")})
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetExecCode("proxy", 1) }, pod)
	n.wait("sidecar running", func() bool { return n.rt.Running("sc", "proxy") != nil })
	p := n.waitPod("sc", "reported with the sidecar running", func(p *api.Pod) bool {
		return statusOf(p, "proxy").State.Running != nil
	})
	if s := statusOf(p, "proxy"); s.Started == nil || *s.Started || s.Ready {
		t.Errorf("sidecar before its startup probe: started %v ready %v, want false, false", s.Started, s.Ready)
	}
	if p.Status.Phase != api.PodPending {
		t.Errorf("phase %s before the sidecar started, want Pending", p.Status.Phase)
	}
	time.Sleep(1500 * time.Millisecond) // many resyncs, at least one failed probe
	if n.startedContainer("sc", "main") {
		t.Fatalf("main started before the sidecar's startup probe succeeded: %q", n.rt.Actions())
	}
	n.rt.SetExecCode("proxy", 0)
	p = n.waitPod("sc", "Running", isRunning)
	if s := statusOf(p, "proxy"); s.Started == nil || !*s.Started || !s.Ready || s.State.Running == nil {
		t.Errorf("sidecar status %+v, want started, ready, running", s)
	}
	if len(p.Status.InitContainerStatuses) != 1 || len(p.Status.ContainerStatuses) != 1 {
		t.Errorf("statuses init %d app %d, want 1 and 1", len(p.Status.InitContainerStatuses), len(p.Status.ContainerStatuses))
	}
	n.waitPod("sc", "Initialized and Ready", func(p *api.Pod) bool {
		return condStatus(p, api.PodInitialized) == api.ConditionTrue && condStatus(p, api.PodReady) == api.ConditionTrue
	})
}

func condStatus(p *api.Pod, t api.PodConditionType) api.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func TestFakeSidecarRestartedWhenItExits(t *testing.T) {
	n := newFakeNode(t, nil, sidecarPod("rs", api.RestartPolicyNever, api.Container{Name: "proxy"}))
	n.waitPod("rs", "Running", isRunning)
	main := n.rt.Running("rs", "main")
	n.rt.Exit(n.rt.Running("rs", "proxy").ID, 1, "Error")
	p := n.waitPod("rs", "sidecar restarted", func(p *api.Pod) bool {
		s := statusOf(p, "proxy")
		return s.RestartCount == 1 && s.State.Running != nil
	})
	if p.Status.Phase != api.PodRunning {
		t.Errorf("phase %s, want Running", p.Status.Phase)
	}
	if last := statusOf(p, "proxy").LastTerminationState.Terminated; last == nil || last.ExitCode != 1 {
		t.Errorf("sidecar lastState %+v, want the exit 1", statusOf(p, "proxy").LastTerminationState)
	}
	if r := n.rt.Running("rs", "main"); r == nil || r.ID != main.ID {
		t.Errorf("main was restarted or stopped with its sidecar: %q", n.rt.Actions())
	}
}

func TestFakeSidecarLivenessRestart(t *testing.T) {
	pod := sidecarPod("lv", api.RestartPolicyAlways, api.Container{Name: "proxy", LivenessProbe: execProbe("proxy")})
	pod.Spec.InitContainers[0].LivenessProbe.FailureThreshold = 1
	n := newFakeNode(t, nil, pod)
	n.waitPod("lv", "Running", isRunning)
	n.rt.SetExecCode("proxy", 1)
	n.waitPod("lv", "sidecar restarted after its liveness probe failed", func(p *api.Pod) bool {
		return statusOf(p, "proxy").RestartCount >= 1
	})
	if !n.hasEvent("Normal Killing Container proxy failed liveness probe, will be restarted") {
		t.Errorf("no Killing event in %q", n.rec.Events())
	}
}

func TestFakeSidecarPhaseNever(t *testing.T) {
	n := newFakeNode(t, nil, sidecarPod("done", api.RestartPolicyNever, api.Container{Name: "proxy"}))
	n.waitPod("done", "Running", isRunning)
	n.rt.Exit(n.rt.Running("done", "main").ID, 0, "Completed")
	p := n.waitPod("done", "Succeeded", func(p *api.Pod) bool { return p.Status.Phase == api.PodSucceeded })
	if n.rt.Running("done", "proxy") != nil {
		t.Errorf("the sidecar still runs in a Succeeded pod: %q", n.rt.Actions())
	}
	if !slices.ContainsFunc(n.rt.Actions(), func(a string) bool { return strings.HasPrefix(a, "StopContainer done/proxy ") }) {
		t.Errorf("runtime calls %q: want the sidecar stopped", n.rt.Actions())
	}
	if s := statusOf(p, "proxy"); s.State.Terminated == nil || s.RestartCount != 0 {
		t.Errorf("sidecar status %+v, want terminated, not restarted", s)
	}
}

func TestFakeSidecarTerminationOrder(t *testing.T) {
	pod := sidecarPod("order", api.RestartPolicyAlways, api.Container{Name: "first"}, api.Container{Name: "second"})
	pod.Spec.Containers[0].Lifecycle = &api.Lifecycle{PreStop: &api.LifecycleHandler{Exec: &api.ExecAction{Command: []string{"stop"}}}}
	pod.Finalizers = []string{"test.minik8s.io/hold"}
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetExecCode("main", 1) }, pod)
	n.waitPod("order", "Running", isRunning)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	grace := int64(5)
	if err := client.Resource[api.Pod](n.api.Client()).Namespace("default").Delete(ctx, "order", &api.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	n.wait("the sandbox removed", func() bool { return slices.Contains(n.rt.Actions(), "RemoveContainer order/POD") })
	var stops []string
	for _, a := range n.rt.Actions() {
		// The sandbox (order/POD) stops after them all.
		if strings.HasPrefix(a, "StopContainer order/") && !strings.HasPrefix(a, "StopContainer order/POD ") {
			stops = append(stops, strings.Fields(a)[1])
		}
	}
	if want := []string{"order/main", "order/second", "order/first"}; !slices.Equal(stops, want) {
		t.Errorf("stopped %q, want %q (apps, then sidecars last first)", stops, want)
	}
	if !n.hasEvent("Warning FailedPreStopHook PreStopHook failed") {
		t.Errorf("main's preStop hook did not run (no FailedPreStopHook event): %q", n.rec.Events())
	}
}

func TestFakePostStartHookFailure(t *testing.T) {
	pod := fakePod("hook", api.Container{Name: "main", Lifecycle: &api.Lifecycle{
		PostStart: &api.LifecycleHandler{Exec: &api.ExecAction{Command: []string{"false"}}}}})
	pod.Spec.RestartPolicy = api.RestartPolicyNever
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetExecCode("main", 1) }, pod)
	n.wait("FailedPostStartHook", func() bool { return n.hasEvent("Warning FailedPostStartHook PostStartHook failed") })
	n.wait("main killed", func() bool {
		return slices.ContainsFunc(n.rt.Actions(), func(a string) bool { return strings.HasPrefix(a, "StopContainer hook/main ") })
	})
	if !n.hasEvent("Normal Killing FailedPostStartHook") {
		t.Errorf("no Killing event in %q", n.rec.Events())
	}
	p := n.waitPod("hook", "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	if s := statusOf(p, "main"); s.State.Running != nil {
		t.Errorf("main reported running after its postStart hook failed: %+v", s)
	}
}

func TestFakeSidecarReadiness(t *testing.T) {
	pod := sidecarPod("rd", api.RestartPolicyAlways, api.Container{Name: "proxy", ReadinessProbe: execProbe("proxy")})
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetExecCode("proxy", 1) }, pod)
	p := n.waitPod("rd", "Running", isRunning)
	time.Sleep(300 * time.Millisecond)
	p = n.pod("rd")
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady && (c.Status != api.ConditionFalse || c.Message != "containers with unready status: [proxy]") {
			t.Errorf("Ready condition %+v, want False for the unready sidecar", c)
		}
	}
	n.rt.SetExecCode("proxy", 0)
	n.waitPod("rd", "Ready", func(p *api.Pod) bool { return condStatus(p, api.PodReady) == api.ConditionTrue })
}
