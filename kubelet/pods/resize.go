package pods

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// In-place pod resize, as kube v1.37's kubelet does it (InPlacePodVerticalScaling, GA).
//
// A pod's containers run with the resources the kubelet *allocated* them:
// at admission, the spec's; after a change of spec.containers[].resources
// (pods/resize), the new ones once they fit on the node next to the other
// pods' allocations (allocate). Until then the pod carries the condition
// PodResizePending (reason Deferred). Allocated resources are applied to the
// running containers in place (the runtime's UpdateContainerResources), or
// by restarting a container whose resizePolicy says RestartContainer for a
// resource that changed (resizeRunning); while a running container's cgroup
// settings differ from its allocation the pod carries PodResizeInProgress.
// The containers' statuses report both: allocatedResources (the allocated
// requests) and resources (the allocation with the values the runtime
// reports for what it applies).
//
// Allocations survive kubelet restarts in the pod's directory, as kube's
// allocation checkpoint. Pod-level resources (spec.resources) are not
// resized: this kubelet does not set pod-level cgroup limits.

// allocation is the resources the kubelet allocated to a pod's init and
// app containers, by container name.
type allocation map[string]api.ResourceRequirements

// specAllocation is the allocation a pod asks for: its containers'
// resources as the spec has them.
func specAllocation(pod *api.Pod) allocation {
	a := allocation{}
	for i := range pod.Spec.InitContainers {
		a[pod.Spec.InitContainers[i].Name] = *api.DeepCopy(&pod.Spec.InitContainers[i].Resources)
	}
	for i := range pod.Spec.Containers {
		a[pod.Spec.Containers[i].Name] = *api.DeepCopy(&pod.Spec.Containers[i].Resources)
	}
	return a
}

// equal: both allocate the same quantities (semantically: 1000m is 1).
func (a allocation) equal(b allocation) bool {
	if len(a) != len(b) {
		return false
	}
	for name, r := range a {
		o, ok := b[name]
		if !ok || !resourceListsEqual(r.Requests, o.Requests) || !resourceListsEqual(r.Limits, o.Limits) {
			return false
		}
	}
	return true
}

func resourceListsEqual(a, b api.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		o, ok := b[k]
		if !ok || !q.Equal(o) {
			return false
		}
	}
	return true
}

// apply returns pod with its containers' resources replaced by the
// allocation (pod itself when they are the same).
func (a allocation) apply(pod *api.Pod) *api.Pod {
	if a == nil || a.equal(specAllocation(pod)) {
		return pod
	}
	out := api.DeepCopy(pod)
	for _, list := range [][]api.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			if r, ok := a[list[i].Name]; ok {
				list[i].Resources = *api.DeepCopy(&r)
			}
		}
	}
	return out
}

// allocationFile is where a pod's allocation is kept across kubelet
// restarts.
func (m *Manager) allocationFile(uid string) string {
	return filepath.Join(m.podDir(uid), "allocated_resources.json")
}

// loadAllocation reads the allocation a previous kubelet made for the pod
// (nil: none).
func (m *Manager) loadAllocation(uid string) allocation {
	b, err := os.ReadFile(m.allocationFile(uid))
	if err != nil {
		return nil
	}
	var a allocation
	if err := json.Unmarshal(b, &a); err != nil {
		m.log.Warn("unreadable pod resource allocation, using the spec", "podUID", uid, "err", err)
		return nil
	}
	return a
}

// saveAllocation keeps a pod's allocation for a restarted kubelet.
func (m *Manager) saveAllocation(uid string, a allocation) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	path := m.allocationFile(uid)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// allocated is the allocation of an admitted pod (nil: not admitted).
func (m *Manager) allocated(uid string) allocation {
	m.admitMu.Lock()
	defer m.admitMu.Unlock()
	if a := m.admissions[uid]; a != nil && a.rejected == nil {
		return a.allocated
	}
	return nil
}

// allocate is kube's handlePodResourcesResize: when the spec asks for
// other resources than the pod's allocation, the new ones are allocated if
// the pod fits on the node with them next to the other pods' allocations
// (PodResizeInProgress until they are applied), else the resize waits
// (PodResizePending, Deferred) and is tried again on later passes. It
// leaves the allocation in s.alloc.
func (s *podSync) allocate(ctx context.Context) {
	m, w, pod := s.m, s.w, s.pod
	uid := string(pod.UID)
	want := specAllocation(pod)
	m.admitMu.Lock()
	a := m.admissions[uid]
	if a == nil || a.rejected != nil {
		m.admitMu.Unlock()
		return
	}
	if a.allocated.equal(want) {
		s.alloc = a.allocated
		m.admitMu.Unlock()
		w.clearResizePending()
		return
	}
	node := m.node()
	reason, msg := "", ""
	if node == nil {
		reason, msg = api.PodReasonDeferred, "the node is not known yet"
	} else {
		reason, msg, _ = admitOnNode(pod, node, m.activeAdmitted(pod))
	}
	if msg == "" {
		if err := m.saveAllocation(uid, want); err != nil {
			// Allocating without the record would lose it on a restart.
			reason, msg = api.PodReasonDeferred, fmt.Sprintf("record the allocation: %v", err)
		}
	}
	if msg != "" {
		s.alloc = a.allocated
		m.admitMu.Unlock()
		s.log.Info("pod resize deferred", "reason", reason, "message", msg)
		if w.setResizePending(api.PodReasonDeferred, msg, pod.Generation) {
			m.rec.Eventf(pod, api.EventTypeWarning, "ResizeDeferred", "%s",
				resizeMessage(pod, pod.Generation, msg, "Pod resize "+api.PodReasonDeferred))
		}
		s.after(retrySoon * 5)
		return
	}
	a.allocated = want
	s.alloc = want
	m.admitMu.Unlock()
	w.clearResizePending()
	w.startResize(pod.Generation)
	s.log.Info("pod resize allocated", "generation", pod.Generation)
	m.rec.Eventf(pod, api.EventTypeNormal, "ResizeStarted", "%s", resizeMessage(pod, pod.Generation, "", "Pod resize started"))
}

// allocatedFor is the allocated resources of container c (its spec's for
// an ephemeral container, or before any allocation).
func (s *podSync) allocatedFor(c *api.Container) api.ResourceRequirements {
	if r, ok := s.alloc[c.Name]; ok {
		return r
	}
	return c.Resources
}

// errResizeUnsupported: the runtime cannot change a running container's
// resources.
var errResizeUnsupported = errors.New("the container runtime cannot resize containers in place")

// resizeRunning brings the running instance inst of container c to its
// allocated resources: it returns false when nothing was to be done. A
// resource whose value changes and whose resizePolicy is RestartContainer
// restarts the container (with the next restart count, whatever the
// pod's restartPolicy, as kube's computePodResizeAction); the others are
// applied in place. A failure is reported on PodResizeInProgress (reason
// Error) and tried again.
func (s *podSync) resizeRunning(ctx context.Context, c *api.Container, inst []*runtime.Container) (time.Duration, bool) {
	m, pod, last := s.m, s.pod, inst[0]
	alloc := s.allocatedFor(c)
	want := cgroupResources(alloc)
	if last.Resources == nil || *last.Resources == want {
		// (A container whose settings the runtime does not know, made by
		// a kubelet that did not record them, keeps them until it is
		// restarted.)
		return 0, false
	}
	have := *last.Resources
	cpuChanged := have.CPUShares != want.CPUShares || have.CPUQuota != want.CPUQuota || have.CPUPeriod != want.CPUPeriod
	memChanged := have.MemoryLimit != want.MemoryLimit
	if cpuChanged && resizeRestarts(c, api.ResourceCPU) || memChanged && resizeRestarts(c, api.ResourceMemory) {
		// The new instance starts with the allocation (startContainer).
		s.restartRunning(ctx, c, inst, fmt.Sprintf("Container %s resize requires restart", c.Name))
		return 0, true
	}
	up, ok := m.rt.(runtime.ResourceUpdater)
	err := errResizeUnsupported
	if ok {
		err = up.UpdateContainerResources(ctx, last.ID, want)
	}
	if err != nil {
		msg := fmt.Sprintf("failed to update resources of container %q: %v", c.Name, err)
		s.log.Warn("resize container", "container", c.Name, "err", err)
		if gen, updated := s.w.setResizeInProgress(api.PodReasonError, msg, pod.Generation); updated {
			m.rec.Eventf(pod, api.EventTypeWarning, "ResizeError", "%s", resizeMessage(s.allocatedPod(), gen, msg, "Pod resize error"))
		}
		return 2 * retrySoon, true
	}
	s.log.Info("container resized", "container", c.Name, "cpuShares", want.CPUShares, "cpuQuota", want.CPUQuota, "memoryLimit", want.MemoryLimit)
	return 0, true
}

// resizeRestarts: the container's resizePolicy restarts it when resource
// name changes (the default is NotRequired).
func resizeRestarts(c *api.Container, name api.ResourceName) bool {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == name {
			return p.RestartPolicy == api.RestartContainer
		}
	}
	return false
}

// allocatedPod is the pod with its allocated resources.
func (s *podSync) allocatedPod() *api.Pod { return s.alloc.apply(s.pod) }

// resizeInProgress: a running container's cgroup settings are not yet
// those of its allocation (kube's IsPodResizeInProgress).
func resizeInProgress(pod *api.Pod, alloc allocation, cs []runtime.Container) bool {
	check := func(c *api.Container, init bool) bool {
		inst := instances(cs, c.Name, init)
		if len(inst) == 0 || inst[0].State != runtime.StateRunning || inst[0].Resources == nil {
			return false
		}
		r, ok := alloc[c.Name]
		if !ok {
			r = c.Resources
		}
		return *inst[0].Resources != cgroupResources(r)
	}
	for i := range pod.Spec.InitContainers {
		if check(&pod.Spec.InitContainers[i], true) {
			return true
		}
	}
	for i := range pod.Spec.Containers {
		if check(&pod.Spec.Containers[i], false) {
			return true
		}
	}
	return false
}

// trackResize sets or clears PodResizeInProgress from the runtime's view,
// as kube's SyncPod before it writes the status: cleared (with a
// ResizeCompleted event) once every running container has its allocation;
// a finished pod has no resize conditions.
func (m *Manager) trackResize(w *worker, pod *api.Pod, alloc allocation, cs []runtime.Container, terminal bool) {
	if terminal {
		w.clearResizePending()
		w.clearResizeInProgress()
		return
	}
	if resizeInProgress(pod, alloc, cs) {
		w.setResizeInProgress("", "", pod.Generation)
		return
	}
	if gen, cleared := w.clearResizeInProgress(); cleared {
		m.rec.Eventf(pod, api.EventTypeNormal, "ResizeCompleted", "%s", resizeMessage(alloc.apply(pod), gen, "", "Pod resize completed"))
	}
}

// resizeMessage is the message of kube's resize events: a prefix, then the
// containers' resources, the generation and an error as JSON.
func resizeMessage(pod *api.Pod, generation int64, errMsg, prefix string) string {
	type containerAllocation struct {
		Name      string                   `json:"name"`
		Resources api.ResourceRequirements `json:"resources,omitempty"`
	}
	summary := struct {
		InitContainers []containerAllocation `json:"initContainers,omitempty"`
		Containers     []containerAllocation `json:"containers,omitempty"`
		Generation     int64                 `json:"generation"`
		Error          string                `json:"error,omitempty"`
	}{Generation: generation, Error: errMsg}
	for _, c := range pod.Spec.InitContainers {
		summary.InitContainers = append(summary.InitContainers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		summary.Containers = append(summary.Containers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	b, err := json.Marshal(summary)
	if err != nil {
		return prefix
	}
	return prefix + ": " + string(b)
}

// The resize conditions a worker keeps between passes (kube's status
// manager's podResizeConditions).

// setResizePending sets PodResizePending; true when its reason or
// observedGeneration changed (an event is due).
func (w *worker) setResizePending(reason, msg string, gen int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.resizePending
	w.resizePending = resizeCondition(api.PodResizePending, old, reason, msg, gen)
	return old == nil || old.Reason != reason || old.ObservedGeneration != gen
}

func (w *worker) clearResizePending() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resizePending = nil
}

// startResize marks a newly allocated resize in progress, for generation
// gen (an earlier error is forgotten).
func (w *worker) startResize(gen int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resizeInProgress = resizeCondition(api.PodResizeInProgress, nil, "", "", gen)
}

// setResizeInProgress sets PodResizeInProgress, keeping the generation of
// a condition already there and its reason unless a new one is given. It
// returns the condition's generation and whether it changed.
func (w *worker) setResizeInProgress(reason, msg string, gen int64) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.resizeInProgress
	if old != nil {
		if reason == "" && msg == "" {
			reason, msg = old.Reason, old.Message
		}
		gen = old.ObservedGeneration
	}
	w.resizeInProgress = resizeCondition(api.PodResizeInProgress, old, reason, msg, gen)
	return gen, old == nil || old.Reason != reason || old.Message != msg
}

// clearResizeInProgress drops PodResizeInProgress; it returns the
// generation it had and whether there was one.
func (w *worker) clearResizeInProgress() (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.resizeInProgress
	w.resizeInProgress = nil
	if old == nil {
		return 0, false
	}
	return old.ObservedGeneration, true
}

// resizeConditions are the pod's resize conditions, for its status.
func (w *worker) resizeConditions() []api.PodCondition {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []api.PodCondition
	for _, c := range []*api.PodCondition{w.resizePending, w.resizeInProgress} {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// backfillResizeConditions takes the resize conditions a previous kubelet
// wrote (kube's BackfillPodResizeConditions).
func (w *worker) backfillResizeConditions(pod *api.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range pod.Status.Conditions {
		switch c.Type {
		case api.PodResizePending:
			w.resizePending = resizeCondition(c.Type, nil, c.Reason, c.Message, c.ObservedGeneration)
		case api.PodResizeInProgress:
			w.resizeInProgress = resizeCondition(c.Type, nil, c.Reason, c.Message, c.ObservedGeneration)
		}
	}
}

// resizeCondition is kube's updatedPodResizeCondition: True, probed now,
// its transition time kept while the reason stays.
func resizeCondition(t api.PodConditionType, old *api.PodCondition, reason, msg string, gen int64) *api.PodCondition {
	now := api.Now()
	transition := now
	if old != nil && old.Reason == reason {
		transition = old.LastTransitionTime
	}
	return &api.PodCondition{Type: t, Status: api.ConditionTrue, LastProbeTime: now, LastTransitionTime: transition,
		ObservedGeneration: gen, Reason: reason, Message: msg}
}

// Kube's conversions between resources and cgroup settings
// (pkg/kubelet/cm: MinShares, SharesPerCPU, QuotaPeriod, MinQuotaPeriod).
const (
	minShares        = 2
	sharesPerCPU     = 1024
	quotaPeriod      = 100000
	minQuota         = 1000
	minMilliCPULimit = minQuota * 1000 / quotaPeriod
)

// cgroupResources are the cgroup settings of a container with resources
// r, kube's: shares from the CPU request (the limit when there is no
// request; 2 without either), the CFS quota of the CPU limit over a
// 100ms period (at least 1ms), the memory limit in bytes.
func cgroupResources(r api.ResourceRequirements) runtime.Resources {
	var out runtime.Resources
	cpuReq, hasReq := r.Requests[api.ResourceCPU]
	cpuLim, hasLim := r.Limits[api.ResourceCPU]
	if !hasReq && hasLim {
		cpuReq, hasReq = cpuLim, true
	}
	out.CPUShares = minShares
	if hasReq {
		out.CPUShares = max(uint64(cpuReq.MilliValue()*sharesPerCPU/1000), minShares)
	}
	if hasLim {
		out.CPUQuota = max(cpuLim.MilliValue()*quotaPeriod/1000, minQuota)
		out.CPUPeriod = quotaPeriod
	}
	if ml, ok := r.Limits[api.ResourceMemory]; ok {
		out.MemoryLimit = ml.Value()
	}
	return out
}

// statusResources is a running container's status.resources, as kube's
// convertContainerStatusResources: its allocation, with the CPU request,
// CPU limit and memory limit the runtime reports it runs with (converted
// back from shares and quota), except where both the allocated and the
// applied CPU values are at or below the least the cgroups can express.
func statusResources(alloc api.ResourceRequirements, actual *runtime.Resources) *api.ResourceRequirements {
	res := *api.DeepCopy(&alloc)
	out := &res
	if actual == nil {
		return out
	}
	if res.Limits != nil {
		if actual.CPUPeriod > 0 && actual.CPUQuota > 0 {
			milli := actual.CPUQuota * 1000 / int64(actual.CPUPeriod)
			allocLim := res.Limits[api.ResourceCPU]
			if milli > minMilliCPULimit || allocLim.MilliValue() > minMilliCPULimit {
				res.Limits[api.ResourceCPU] = *resource.NewMilliQuantity(milli, resource.DecimalSI)
			}
		}
		if actual.MemoryLimit > 0 {
			res.Limits[api.ResourceMemory] = *resource.NewQuantity(actual.MemoryLimit, resource.BinarySI)
		}
	}
	if res.Requests != nil && actual.CPUShares >= minShares {
		milli := int64(math.Ceil(float64(actual.CPUShares*1000) / sharesPerCPU))
		allocReq := res.Requests[api.ResourceCPU]
		if milli > minShares || allocReq.MilliValue() > minShares {
			res.Requests[api.ResourceCPU] = *resource.NewMilliQuantity(milli, resource.DecimalSI)
		}
	}
	return out
}

// setStatusResources fills the containers' allocatedResources and
// resources, as kube's convertToAPIContainerStatuses: for each container
// the runtime has an instance of, its allocated requests, and its
// resources (the allocation; for a running instance, what it runs with).
func setStatusResources(pod *api.Pod, alloc allocation, cs []runtime.Container, st *api.PodStatus) {
	set := func(statuses []api.ContainerStatus, specs []api.Container, init bool) {
		for i := range statuses {
			c := containerByName(specs, statuses[i].Name)
			if c == nil {
				continue
			}
			inst := instances(cs, c.Name, init)
			if len(inst) == 0 {
				continue
			}
			r, ok := alloc[c.Name]
			if !ok {
				r = c.Resources
			}
			var actual *runtime.Resources
			if inst[0].State == runtime.StateRunning {
				actual = inst[0].Resources
			}
			statuses[i].Resources = statusResources(r, actual)
			statuses[i].AllocatedResources = api.DeepCopy(&r).Requests
		}
	}
	set(st.InitContainerStatuses, pod.Spec.InitContainers, true)
	set(st.ContainerStatuses, pod.Spec.Containers, false)
	ephemeral := make([]api.Container, 0, len(pod.Spec.EphemeralContainers))
	for _, ec := range pod.Spec.EphemeralContainers {
		ephemeral = append(ephemeral, ec.Container)
	}
	set(st.EphemeralContainerStatuses, ephemeral, false)
}

func containerByName(list []api.Container, name string) *api.Container {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
