package pods

import (
	"errors"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

var errBoom = errors.New("boom")

func reqs(kv ...string) api.ResourceList {
	if len(kv) == 0 {
		return nil
	}
	l := api.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[api.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// resize changes the resources of the pod's containers in the apiserver,
// as a pods/resize request does.
func (n *fakeNode) resize(name string, res map[string]api.ResourceRequirements) {
	n.t.Helper()
	cur := n.pod(name)
	for i := range cur.Spec.Containers {
		if r, ok := res[cur.Spec.Containers[i].Name]; ok {
			cur.Spec.Containers[i].Resources = r
		}
	}
	if _, err := client.Resource[api.Pod](n.api.Client()).Namespace("default").Update(n.t.Context(), cur); err != nil {
		n.t.Fatal(err)
	}
}

// resized: the kubelet reported the pod's current generation with no
// resize condition left.
func resized(p *api.Pod) bool {
	if p.Status.ObservedGeneration != p.Generation || !isRunning(p) {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodResizePending || c.Type == api.PodResizeInProgress {
			return false
		}
	}
	return true
}

func condition(p *api.Pod, t api.PodConditionType) *api.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// checkStatusResources compares a container's status.resources and
// status.allocatedResources with want, as the conformance specs do.
func checkStatusResources(t *testing.T, p *api.Pod, name string, want api.ResourceRequirements) {
	t.Helper()
	st := statusOf(p, name)
	if st.Resources == nil {
		t.Fatalf("%s: no status.resources", name)
	}
	if !resourceListsEqual(st.Resources.Requests, want.Requests) || (st.Resources.Requests == nil) != (want.Requests == nil) ||
		!resourceListsEqual(st.Resources.Limits, want.Limits) || (st.Resources.Limits == nil) != (want.Limits == nil) {
		t.Errorf("%s: status.resources %+v, want %+v", name, *st.Resources, want)
	}
	if !resourceListsEqual(st.AllocatedResources, want.Requests) || (st.AllocatedResources == nil) != (want.Requests == nil) {
		t.Errorf("%s: status.allocatedResources %v, want %v", name, st.AllocatedResources, want.Requests)
	}
}

// TestFakeResizeInPlace is the shape of the conformance spec "Pod InPlace
// Resize Container burstable pods - extended 6 containers - various
// operations performed": requests and limits added, raised and lowered on
// running containers are applied in place (no restart), and the statuses
// report them.
func TestFakeResizeInPlace(t *testing.T) {
	orig := map[string]api.ResourceRequirements{
		"c1": {Requests: reqs("cpu", "20m")},
		"c2": {Requests: reqs("memory", "35Mi")},
		"c3": {Requests: reqs("cpu", "20m", "memory", "35Mi")},
	}
	pod := fakePod("rs", api.Container{Name: "c1", Resources: orig["c1"]}, api.Container{Name: "c2", Resources: orig["c2"]},
		api.Container{Name: "c3", Resources: orig["c3"]})
	pod.Generation = 1
	n := newFakeNode(t, nil, admitNode("2", 10), pod)
	p := n.waitPod("rs", "Running", isRunning)
	for name, r := range orig {
		checkStatusResources(t, p, name, r)
	}
	if got := *n.rt.Running("rs", "c1").Resources; got != (runtime.Resources{CPUShares: 20}) {
		t.Errorf("c1 runs with %+v", got)
	}

	want := map[string]api.ResourceRequirements{
		"c1": {Requests: reqs("cpu", "25m"), Limits: reqs("cpu", "35m")},
		"c2": {Requests: reqs("memory", "30Mi"), Limits: reqs("memory", "50Mi")},
		"c3": {Requests: reqs("cpu", "20m", "memory", "30Mi")},
	}
	ids := map[string]string{}
	for name := range want {
		ids[name] = n.rt.Running("rs", name).ID
	}
	n.resize("rs", want)
	p = n.waitPod("rs", "resized", func(p *api.Pod) bool {
		return resized(p) && statusOf(p, "c1").Resources.Limits != nil && statusOf(p, "c2").Resources.Limits != nil
	})
	if p.Generation != 2 {
		t.Errorf("generation %d, want 2", p.Generation)
	}
	for name, r := range want {
		checkStatusResources(t, p, name, r)
		if st := statusOf(p, name); st.RestartCount != 0 {
			t.Errorf("%s restarted: %d", name, st.RestartCount)
		}
		if got := n.rt.Running("rs", name); got == nil || got.ID != ids[name] {
			t.Errorf("%s is another container after the resize: %+v", name, got)
		}
	}
	for name, res := range map[string]runtime.Resources{
		"c1": {CPUShares: 25, CPUQuota: 3500, CPUPeriod: 100000},
		"c2": {CPUShares: 2, MemoryLimit: 50 << 20},
		"c3": {CPUShares: 20},
	} {
		if got := *n.rt.Running("rs", name).Resources; got != res {
			t.Errorf("%s runs with %+v, want %+v", name, got, res)
		}
	}
	var updates []string
	for _, a := range n.rt.Actions() {
		if strings.HasPrefix(a, "UpdateContainerResources") {
			updates = append(updates, a)
		}
	}
	// c3's memory request is no cgroup setting: nothing to apply.
	if len(updates) != 2 {
		t.Errorf("updates %q, want c1's and c2's", updates)
	}
	for _, e := range []string{"Normal ResizeStarted Pod resize started: ", "Normal ResizeCompleted Pod resize completed: "} {
		if !n.hasEvent(e) {
			t.Errorf("no event %q in %q", e, n.rec.Events())
		}
	}
	if !n.hasEvent(`"generation":2`) {
		t.Errorf("events do not name generation 2: %q", n.rec.Events())
	}
}

// TestFakeResizeRestartContainer: a resource whose resizePolicy is
// RestartContainer restarts the container with its new resources (restart
// count + 1); a NotRequired one does not.
func TestFakeResizeRestartContainer(t *testing.T) {
	orig := api.ResourceRequirements{Requests: reqs("cpu", "100m", "memory", "64Mi"), Limits: reqs("cpu", "100m", "memory", "64Mi")}
	pod := fakePod("rr",
		api.Container{Name: "mem", Resources: orig, ResizePolicy: []api.ContainerResizePolicy{
			{ResourceName: api.ResourceCPU, RestartPolicy: api.NotRequired}, {ResourceName: api.ResourceMemory, RestartPolicy: api.RestartContainer}}},
		api.Container{Name: "cpu", Resources: orig, ResizePolicy: []api.ContainerResizePolicy{
			{ResourceName: api.ResourceCPU, RestartPolicy: api.NotRequired}, {ResourceName: api.ResourceMemory, RestartPolicy: api.RestartContainer}}})
	pod.Spec.RestartPolicy = api.RestartPolicyOnFailure
	n := newFakeNode(t, nil, admitNode("2", 10), pod)
	n.waitPod("rr", "Running", isRunning)
	memBigger := api.ResourceRequirements{Requests: reqs("cpu", "100m", "memory", "128Mi"), Limits: reqs("cpu", "100m", "memory", "128Mi")}
	cpuBigger := api.ResourceRequirements{Requests: reqs("cpu", "200m", "memory", "64Mi"), Limits: reqs("cpu", "200m", "memory", "64Mi")}
	n.resize("rr", map[string]api.ResourceRequirements{"mem": memBigger, "cpu": cpuBigger})
	p := n.waitPod("rr", "resized", func(p *api.Pod) bool { return resized(p) && statusOf(p, "mem").RestartCount == 1 })
	if got := statusOf(p, "cpu").RestartCount; got != 0 {
		t.Errorf("cpu container restarted %d times, want 0", got)
	}
	checkStatusResources(t, p, "mem", memBigger)
	checkStatusResources(t, p, "cpu", cpuBigger)
	if got := *n.rt.Running("rr", "mem").Resources; got.MemoryLimit != 128<<20 {
		t.Errorf("mem runs with %+v", got)
	}
	if st := statusOf(p, "mem"); st.LastTerminationState.Terminated == nil {
		t.Errorf("mem has no lastState after its restart: %+v", st)
	}
	if !n.hasEvent("Normal Killing Container mem resize requires restart") {
		t.Errorf("no Killing event in %q", n.rec.Events())
	}
}

// TestFakeResizeDeferred: a resize the node cannot fit next to the other
// pods' allocations waits with PodResizePending (Deferred, kube's message),
// the containers keep their resources, and it goes through once the other
// pod is gone.
func TestFakeResizeDeferred(t *testing.T) {
	a := requesting("a", "cpu", "500m")
	b := requesting("b", "cpu", "400m")
	n := newFakeNode(t, nil, admitNode("1", 10), a, b)
	n.waitPod("a", "Running", isRunning)
	n.waitPod("b", "Running", isRunning)
	n.resize("a", map[string]api.ResourceRequirements{"main": {Requests: reqs("cpu", "700m")}})
	p := n.waitPod("a", "PodResizePending", func(p *api.Pod) bool { return condition(p, api.PodResizePending) != nil })
	c := condition(p, api.PodResizePending)
	if c.Status != api.ConditionTrue || c.Reason != api.PodReasonDeferred || c.ObservedGeneration != p.Generation ||
		c.Message != "Node didn't have enough resource: cpu, requested: 700, used: 400, capacity: 1000" {
		t.Errorf("condition %+v", *c)
	}
	checkStatusResources(t, p, "main", api.ResourceRequirements{Requests: reqs("cpu", "500m")})
	if got := n.rt.Running("a", "main").Resources.CPUShares; got != 512 {
		t.Errorf("shares %d while deferred, want 512", got)
	}
	if !n.hasEvent("Warning ResizeDeferred Pod resize Deferred: ") {
		t.Errorf("no ResizeDeferred event in %q", n.rec.Events())
	}
	if err := client.Resource[api.Pod](n.api.Client()).Namespace("default").Delete(t.Context(), "b", nil); err != nil {
		t.Fatal(err)
	}
	p = n.waitPod("a", "resized", func(p *api.Pod) bool {
		return resized(p) && statusOf(p, "main").AllocatedResources.Cpu().MilliValue() == 700
	})
	checkStatusResources(t, p, "main", api.ResourceRequirements{Requests: reqs("cpu", "700m")})
}

// TestFakeResizeError: a resize the runtime fails to apply is reported on
// PodResizeInProgress (reason Error) with a ResizeError event, and applied
// when the runtime recovers.
func TestFakeResizeError(t *testing.T) {
	pod := requesting("e", "cpu", "100m")
	n := newFakeNode(t, nil, admitNode("2", 10), pod)
	n.waitPod("e", "Running", isRunning)
	n.rt.FailUpdates(errBoom)
	n.resize("e", map[string]api.ResourceRequirements{"main": {Requests: reqs("cpu", "200m")}})
	p := n.waitPod("e", "PodResizeInProgress Error", func(p *api.Pod) bool {
		c := condition(p, api.PodResizeInProgress)
		return c != nil && c.Reason == api.PodReasonError
	})
	if c := condition(p, api.PodResizeInProgress); c.Message != `failed to update resources of container "main": boom` || c.ObservedGeneration != p.Generation {
		t.Errorf("condition %+v", *c)
	}
	// The allocation is made; what runs is reported.
	st := statusOf(p, "main")
	if st.AllocatedResources.Cpu().MilliValue() != 200 || st.Resources.Requests.Cpu().MilliValue() != 100 {
		t.Errorf("allocated %v, resources %v", st.AllocatedResources, st.Resources.Requests)
	}
	if !n.hasEvent("Warning ResizeError Pod resize error: ") {
		t.Errorf("no ResizeError event in %q", n.rec.Events())
	}
	n.rt.FailUpdates(nil)
	p = n.waitPod("e", "resized", resized)
	checkStatusResources(t, p, "main", api.ResourceRequirements{Requests: reqs("cpu", "200m")})
}

// TestStatusResources: kube's conversions back from cgroup settings, and
// the values at or below the cgroups' least kept as allocated.
func TestStatusResources(t *testing.T) {
	for _, tc := range []struct {
		name         string
		alloc        api.ResourceRequirements
		actual       *runtime.Resources
		wantRequests api.ResourceList
		wantLimits   api.ResourceList
	}{
		{"not running", api.ResourceRequirements{Requests: reqs("cpu", "15m")}, nil, reqs("cpu", "15m"), nil},
		{"round trip", api.ResourceRequirements{Requests: reqs("cpu", "15m", "memory", "30Mi"), Limits: reqs("cpu", "25m", "memory", "40Mi")},
			&runtime.Resources{CPUShares: 15, CPUQuota: 2500, CPUPeriod: 100000, MemoryLimit: 40 << 20},
			reqs("cpu", "15m", "memory", "30Mi"), reqs("cpu", "25m", "memory", "40Mi")},
		{"tiny kept", api.ResourceRequirements{Requests: reqs("cpu", "1m"), Limits: reqs("cpu", "5m")},
			&runtime.Resources{CPUShares: 2, CPUQuota: 1000, CPUPeriod: 100000}, reqs("cpu", "1m"), reqs("cpu", "5m")},
		{"applied differs", api.ResourceRequirements{Requests: reqs("cpu", "200m"), Limits: reqs("memory", "50Mi")},
			&runtime.Resources{CPUShares: 102, MemoryLimit: 45 << 20}, reqs("cpu", "100m"), reqs("memory", "45Mi")},
		{"no cpu request", api.ResourceRequirements{Requests: reqs("memory", "35Mi")}, &runtime.Resources{CPUShares: 2}, reqs("memory", "35Mi"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statusResources(tc.alloc, tc.actual)
			if !resourceListsEqual(got.Requests, tc.wantRequests) || !resourceListsEqual(got.Limits, tc.wantLimits) ||
				(got.Limits == nil) != (tc.wantLimits == nil) {
				t.Errorf("got %+v, want requests %v limits %v", *got, tc.wantRequests, tc.wantLimits)
			}
		})
	}
}
