package pods

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/staticpods"
)

func (w *worker) getWaiting(name string) *api.ContainerStateWaiting {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waiting[name]
}

func (w *worker) setWaiting(name string, s *api.ContainerStateWaiting) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s == nil {
		delete(w.waiting, name)
		return
	}
	w.waiting[name] = s
}

func (w *worker) pullFailedAt(name string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pullFailed[name]
}

func (w *worker) setPullFailed(name string, t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pullFailed == nil {
		w.pullFailed = map[string]time.Time{}
	}
	w.pullFailed[name] = t
}

// containerID is the ID kube reports for a container: the runtime's type
// as the scheme ("containerd://ID").
func (m *Manager) containerID(c *runtime.Container) string { return m.rt.Type() + "://" + c.ID }

// terminated is the terminated state of an exited instance of container
// spec, with its termination message.
func (m *Manager) terminated(pod *api.Pod, spec *api.Container, c *runtime.Container) *api.ContainerStateTerminated {
	return &api.ContainerStateTerminated{
		ExitCode: c.ExitCode, Reason: c.Reason, StartedAt: api.NewTime(c.StartedAt),
		FinishedAt: api.NewTime(c.FinishedAt), ContainerID: m.containerID(c),
		Message: m.terminationMessage(pod, spec, c),
	}
}

// containerStatus is the status of one (init or app) container.
func (m *Manager) containerStatus(w *worker, pod *api.Pod, c *api.Container, init bool, cs []runtime.Container, defaultWaiting string) api.ContainerStatus {
	st := api.ContainerStatus{Name: c.Name, Image: c.Image}
	f := false
	st.Started = &f
	inst := instances(cs, c.Name, init)
	waiting := w.getWaiting(c.Name)
	if len(inst) == 0 {
		if waiting == nil {
			waiting = &api.ContainerStateWaiting{Reason: defaultWaiting}
		}
		st.State.Waiting = waiting
		return st
	}
	last := inst[0]
	sidecar := init && isSidecar(c)
	st.RestartCount = int32(last.RestartCount)
	st.ImageID = last.ImageID
	st.ContainerID = m.containerID(last)
	if len(inst) > 1 && inst[1].State == runtime.StateExited {
		st.LastTerminationState.Terminated = m.terminated(pod, c, inst[1])
	}
	switch last.State {
	case runtime.StateRunning:
		st.State.Running = &api.ContainerStateRunning{StartedAt: api.NewTime(last.StartedAt)}
		started := true
		if !init || sidecar {
			started = m.started(pod, c, last)
		}
		st.Started = &started
		if init && !sidecar {
			st.Ready = false
		} else if c.ReadinessProbe != nil {
			st.Ready = started && m.probes.Result(string(pod.UID), c.Name, last.ID, probes.Readiness) == probes.Success
		} else {
			st.Ready = started
		}
	case runtime.StateExited:
		if waiting != nil && waiting.Reason == "CrashLoopBackOff" || waiting != nil && (sidecar || shouldRestart(pod.Spec.RestartPolicy, last.ExitCode)) {
			st.State.Waiting = waiting
			st.LastTerminationState = api.ContainerState{Terminated: m.terminated(pod, c, last)}
		} else {
			st.State.Terminated = m.terminated(pod, c, last)
			if init && last.ExitCode == 0 {
				st.Ready = true
			}
		}
	default:
		st.State.Waiting = &api.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	// As kube's kubelet (1.37, RestartAllContainersOnContainerExits): the
	// count never goes below the one reported, and the last state
	// reported for this instance stays once the runtime has removed the
	// previous instance (a pod restarted in a new sandbox after a node
	// reboot, whose old sandbox went with the containers in it).
	if prev := prevContainerStatus(w, pod, c.Name, init); prev != nil {
		if prev.RestartCount > st.RestartCount {
			st.RestartCount = prev.RestartCount
		}
		if st.LastTerminationState.Terminated == nil && st.State.Terminated == nil &&
			prev.ContainerID == st.ContainerID && prev.LastTerminationState.Terminated != nil {
			st.LastTerminationState.Terminated = prev.LastTerminationState.Terminated
		}
	}
	return st
}

// prevContainerStatus is the status last reported for container name:
// the one this kubelet last wrote, else the pod's.
func prevContainerStatus(w *worker, pod *api.Pod, name string, init bool) *api.ContainerStatus {
	ps := &pod.Status
	if w.lastStatus != nil {
		ps = w.lastStatus
	} else if staticpods.IsStatic(pod) {
		return nil // its status is its mirror pod's
	}
	list := ps.ContainerStatuses
	if init {
		list = ps.InitContainerStatuses
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	for i := range ps.EphemeralContainerStatuses {
		if !init && ps.EphemeralContainerStatuses[i].Name == name {
			return &ps.EphemeralContainerStatuses[i]
		}
	}
	return nil
}

// computeStatus builds the pod's status from the runtime's view, following
// the kubelet's phase and condition rules.
func (m *Manager) computeStatus(w *worker, pod *api.Pod, cs []runtime.Container, alloc allocation) api.PodStatus {
	if w.rejected == nil && pod.Status.Phase == api.PodFailed && strings.HasPrefix(pod.Status.Message, rejectedPrefix) {
		// Rejected by a previous kubelet: keep saying why.
		w.rejected = &rejection{reason: pod.Status.Reason, message: pod.Status.Message}
	}
	if w.rejected != nil {
		return rejectedStatus(w, pod)
	}
	st := api.PodStatus{
		ObservedGeneration: pod.Generation,
		HostIP:             m.hostIP(),
		StartTime:          w.startTime,
		QOSClass:           api.ComputePodQOS(pod),
		NominatedNodeName:  pod.Status.NominatedNodeName,
	}
	if st.HostIP != "" {
		st.HostIPs = []api.HostIP{{IP: st.HostIP}}
	}
	if ip := m.podIP(w, pod, cs); ip != "" {
		st.PodIP = ip
		st.PodIPs = []api.PodIP{{IP: ip}}
	}
	inits := m.initStatuses(w, pod, cs)
	defWaiting := "ContainerCreating"
	if !inits.done {
		defWaiting = "PodInitializing"
	}
	apps := m.appStatuses(w, pod, cs, defWaiting)
	st.InitContainerStatuses, st.ContainerStatuses = inits.statuses, apps.statuses
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i].Container
		es := m.containerStatus(w, pod, ec, false, cs, "ContainerCreating")
		es.Ready = false // ephemeral containers are never ready
		st.EphemeralContainerStatuses = append(st.EphemeralContainerStatuses, es)
	}
	setStatusResources(pod, alloc, cs, &st)
	st.Phase = podPhase(pod, w, inits, apps)
	if w.networkErr != "" && st.Phase == api.PodPending {
		st.Message = w.networkErr
	}
	st.Conditions = podConditions(w, pod, cs, st.Phase, inits, apps)
	return st
}

// podIP is the pod's address: its running sandbox's, else (a finished pod)
// the last one it had; a host-network pod's follows the node's.
func (m *Manager) podIP(w *worker, pod *api.Pod, cs []runtime.Container) string {
	ip := w.podIP
	if sb := runningSandbox(cs); sb != nil {
		ip = m.sandboxIP(pod, sb)
	} else if isTerminal(pod.Status.Phase) || w.terminal != "" {
		ip = pod.Status.PodIP
		if ip == "" {
			ip = w.podIP
		}
	}
	if ip == "" {
		return ""
	}
	return m.currentPodIP(pod, ip)
}

// initProgress is the init containers' statuses and what they add up to.
type initProgress struct {
	statuses []api.ContainerStatus
	// done: every init container succeeded and every sidecar started, or
	// an app container was created; failed: one failed for good
	// (restartPolicy Never).
	done, failed bool
	incomplete   []string
	// sidecarsRunning counts running sidecars; unreadySidecars are those
	// not ready, which keep the pod from being Ready.
	sidecarsRunning int
	unreadySidecars []string
}

func (m *Manager) initStatuses(w *worker, pod *api.Pod, cs []runtime.Container) initProgress {
	p := initProgress{done: true}
	init := initialized(pod, cs)
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cst := m.containerStatus(w, pod, c, true, cs, "PodInitializing")
		if isSidecar(c) {
			if !cst.Ready {
				p.unreadySidecars = append(p.unreadySidecars, c.Name)
			}
			if cst.State.Running != nil {
				p.sidecarsRunning++
			}
			if !init && (cst.Started == nil || !*cst.Started) {
				p.done = false
				p.incomplete = append(p.incomplete, c.Name)
			}
		} else if t := cst.State.Terminated; t != nil && t.ExitCode == 0 {
			cst.Ready = true
		} else {
			p.done = false
			p.incomplete = append(p.incomplete, c.Name)
			if t != nil && pod.Spec.RestartPolicy == api.RestartPolicyNever {
				p.failed = true
			}
		}
		p.statuses = append(p.statuses, cst)
	}
	return p
}

// appProgress is the app containers' statuses and how many are in which
// state (a container waiting to restart counts by its last exit).
type appProgress struct {
	statuses                                     []api.ContainerStatus
	unready                                      []string
	running, waiting, stopped, succeeded, failed int
}

func (m *Manager) appStatuses(w *worker, pod *api.Pod, cs []runtime.Container, defWaiting string) appProgress {
	var p appProgress
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cst := m.containerStatus(w, pod, c, false, cs, defWaiting)
		if !cst.Ready {
			p.unready = append(p.unready, c.Name)
		}
		switch {
		case cst.State.Running != nil:
			p.running++
		case cst.State.Terminated != nil:
			p.stopped++
			if cst.State.Terminated.ExitCode == 0 {
				p.succeeded++
			} else {
				p.failed++
			}
		case cst.State.Waiting != nil && cst.LastTerminationState.Terminated != nil:
			p.stopped++
			if cst.LastTerminationState.Terminated.ExitCode != 0 {
				p.failed++
			} else {
				p.succeeded++
			}
		default:
			p.waiting++
		}
		p.statuses = append(p.statuses, cst)
	}
	return p
}

// podPhase is the kubelet's phase rule; a terminal phase never goes back.
func podPhase(pod *api.Pod, w *worker, inits initProgress, apps appProgress) api.PodPhase {
	if isTerminal(pod.Status.Phase) {
		return pod.Status.Phase
	}
	if w.terminal != "" {
		return w.terminal
	}
	switch {
	case inits.failed:
		return api.PodFailed
	case !inits.done, apps.waiting > 0:
		return api.PodPending
	case apps.running+inits.sidecarsRunning > 0:
		// Running sidecars keep the pod Running until they are stopped
		// (kube's getPhase); run stops them once the apps are done.
		return api.PodRunning
	case apps.stopped > 0:
		switch {
		case pod.Spec.RestartPolicy == api.RestartPolicyAlways || pod.Spec.RestartPolicy == "":
			return api.PodRunning
		case apps.stopped == apps.succeeded:
			return api.PodSucceeded
		case pod.Spec.RestartPolicy == api.RestartPolicyOnFailure:
			return api.PodRunning
		default:
			return api.PodFailed
		}
	}
	return api.PodPending
}

// podConditions are PodScheduled (kept), PodReadyToStartContainers,
// Initialized, ContainersReady and Ready, each keeping its transition time
// while its status does not change.
func podConditions(w *worker, pod *api.Pod, cs []runtime.Container, phase api.PodPhase, inits initProgress, apps appProgress) []api.PodCondition {
	prev := pod.Status.Conditions
	if w.lastStatus != nil {
		// The cache may not show our last write yet.
		prev = w.lastStatus.Conditions
	}
	var out []api.PodCondition
	cond := func(t api.PodConditionType, ok bool, reason, msg string) {
		c := api.PodCondition{Type: t, Status: api.ConditionFalse, Reason: reason, Message: msg}
		if ok {
			c.Status, c.Reason, c.Message = api.ConditionTrue, "", ""
		}
		c.LastTransitionTime = api.Now()
		for _, old := range prev {
			if old.Type == t && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	scheduled := false
	for _, old := range pod.Status.Conditions {
		if old.Type == api.PodScheduled {
			out = append(out, old)
			scheduled = true
		}
	}
	if !scheduled {
		cond(api.PodScheduled, true, "", "")
	}
	out = append(out, foreignConditions(pod.Status.Conditions)...)
	if !isTerminal(phase) {
		out = append(out, w.resizeConditions()...)
	}
	cond(api.PodReadyToStartContainers, runningSandbox(cs) != nil, "", "")
	cond(api.PodInitialized, inits.done, "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(inits.incomplete, " ")))
	terminal := isTerminal(phase)
	unready := append(slices.Clone(inits.unreadySidecars), apps.unready...)
	ready := len(unready) == 0 && !terminal
	msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	reason := "ContainersNotReady"
	if terminal {
		reason, msg = "PodCompleted", ""
	}
	cond(api.ContainersReady, ready, reason, msg)
	cond(api.PodReady, ready, reason, msg)
	return out
}

// kubeletConditions are the pod conditions the kubelet owns (kube's
// PodConditionsByKubelet); PodScheduled is the scheduler's but kept as is.
var kubeletConditions = map[api.PodConditionType]bool{
	api.PodScheduled: true, api.PodReadyToStartContainers: true, api.PodInitialized: true,
	api.ContainersReady: true, api.PodReady: true, api.PodResizePending: true, api.PodResizeInProgress: true,
}

// foreignConditions are the conditions others own (DisruptionTarget from a
// preemption or an eviction, readiness gates' types), which a status
// written by the kubelet keeps as kube's mergePodStatus does.
func foreignConditions(cs []api.PodCondition) []api.PodCondition {
	var out []api.PodCondition
	for _, c := range cs {
		if !kubeletConditions[c.Type] {
			out = append(out, c)
		}
	}
	return out
}

// withForeignConditions returns st with its foreign conditions replaced by
// those of cur (the pod as the apiserver has it now).
func withForeignConditions(st api.PodStatus, cur []api.PodCondition) api.PodStatus {
	var scheduled, rest []api.PodCondition
	for _, c := range st.Conditions {
		switch {
		case c.Type == api.PodScheduled:
			scheduled = append(scheduled, c)
		case kubeletConditions[c.Type]:
			rest = append(rest, c)
		}
	}
	st.Conditions = append(append(scheduled, foreignConditions(cur)...), rest...)
	return st
}

// writeStatus writes status through /status when it differs from what the
// pod has and from what this worker last wrote.
func (m *Manager) writeStatus(ctx context.Context, w *worker, pod *api.Pod, st api.PodStatus) error {
	target := pod
	if staticpods.IsStatic(pod) {
		// A static pod's status goes to its mirror pod, once there is
		// one (kube's status manager translates the UID).
		if target = m.mirrorOf(pod); target == nil {
			return nil
		}
	}
	b, _ := json.Marshal(st)
	cur, _ := json.Marshal(target.Status)
	if string(b) == string(cur) || (string(b) == w.lastSent && w.lastSentTo == target.UID) {
		return nil
	}
	pods := client.Resource[api.Pod](m.client).Namespace(pod.Namespace)
	p := api.DeepCopy(target)
	for range 3 {
		p.Status = st
		_, err := pods.UpdateStatus(ctx, p)
		if err == nil {
			w.lastSent, w.lastSentTo = string(b), target.UID
			w.lastStatus = &st
			return nil
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh, err := pods.Get(ctx, pod.Name)
		if err != nil {
			return err
		}
		if fresh.UID != target.UID {
			return nil
		}
		p = fresh
		// Conditions others added meanwhile (a preemption's
		// DisruptionTarget) must survive the retry.
		st = withForeignConditions(st, fresh.Status.Conditions)
		b, _ = json.Marshal(st)
	}
	return fmt.Errorf("update status of %s/%s: repeated conflicts", pod.Namespace, pod.Name)
}

// syncProbes starts and stops the probe workers of running containers.
func (m *Manager) syncProbes(pod *api.Pod, cs []runtime.Container, st api.PodStatus) {
	running := map[string]probes.Running{}
	add := func(c *api.Container, init bool) {
		inst := instances(cs, c.Name, init)
		if len(inst) > 0 && inst[0].State == runtime.StateRunning {
			running[c.Name] = probes.Running{ContainerID: inst[0].ID, StartedAt: inst[0].StartedAt}
		}
	}
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			add(&pod.Spec.InitContainers[i], true)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i], false)
	}
	m.probes.Sync(pod, st.PodIP, running)
}
