package pods

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
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

func terminated(c *runtime.Container) *api.ContainerStateTerminated {
	return &api.ContainerStateTerminated{
		ExitCode: c.ExitCode, Reason: c.Reason, StartedAt: api.NewTime(c.StartedAt),
		FinishedAt: api.NewTime(c.FinishedAt), ContainerID: "containerd://" + c.ID,
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
	st.RestartCount = int32(last.RestartCount)
	st.ImageID = last.ImageID
	st.ContainerID = "containerd://" + last.ID
	if len(inst) > 1 && inst[1].State == runtime.StateExited {
		st.LastTerminationState.Terminated = terminated(inst[1])
	}
	switch last.State {
	case runtime.StateRunning:
		st.State.Running = &api.ContainerStateRunning{StartedAt: api.NewTime(last.StartedAt)}
		started := true
		if c.StartupProbe != nil && !init {
			started = m.probes.Result(string(pod.UID), c.Name, last.ID, probes.Startup) == probes.Success
		}
		st.Started = &started
		if init {
			st.Ready = false
		} else if c.ReadinessProbe != nil {
			st.Ready = started && m.probes.Result(string(pod.UID), c.Name, last.ID, probes.Readiness) == probes.Success
		} else {
			st.Ready = started
		}
	case runtime.StateExited:
		if waiting != nil && waiting.Reason == "CrashLoopBackOff" || waiting != nil && shouldRestart(pod.Spec.RestartPolicy, last.ExitCode) {
			st.State.Waiting = waiting
			st.LastTerminationState = api.ContainerState{Terminated: terminated(last)}
		} else {
			st.State.Terminated = terminated(last)
			if init && last.ExitCode == 0 {
				st.Ready = true
			}
		}
	default:
		st.State.Waiting = &api.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return st
}

// computeStatus builds the pod's status from the runtime's view, following
// the kubelet's phase and condition rules.
func (m *Manager) computeStatus(w *worker, pod *api.Pod, cs []runtime.Container) api.PodStatus {
	st := api.PodStatus{
		ObservedGeneration: pod.Generation,
		HostIP:             m.hostIP(),
		StartTime:          w.startTime,
		QOSClass:           qosClass(pod),
		NominatedNodeName:  pod.Status.NominatedNodeName,
	}
	if st.HostIP != "" {
		st.HostIPs = []api.HostIP{{IP: st.HostIP}}
	}
	podIP := w.podIP
	if sb := runningSandbox(cs); sb != nil {
		podIP = sb.PodIP
	} else if isTerminal(pod.Status.Phase) || w.terminal != "" {
		podIP = pod.Status.PodIP
		if podIP == "" {
			podIP = w.podIP
		}
	}
	if podIP != "" {
		podIP = m.currentPodIP(pod, podIP)
	}
	if podIP != "" {
		st.PodIP = podIP
		st.PodIPs = []api.PodIP{{IP: podIP}}
	}
	// Init containers.
	initDone, initFailed := true, false
	var incomplete []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cst := m.containerStatus(w, pod, c, true, cs, "PodInitializing")
		if t := cst.State.Terminated; t != nil && t.ExitCode == 0 {
			cst.Ready = true
		} else {
			initDone = false
			incomplete = append(incomplete, c.Name)
			if t != nil && pod.Spec.RestartPolicy == api.RestartPolicyNever {
				initFailed = true
			}
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cst)
	}
	defWaiting := "ContainerCreating"
	if !initDone {
		defWaiting = "PodInitializing"
	}
	var unready []string
	running, waiting, stopped, succeeded, failed := 0, 0, 0, 0, 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cst := m.containerStatus(w, pod, c, false, cs, defWaiting)
		if !cst.Ready {
			unready = append(unready, c.Name)
		}
		switch {
		case cst.State.Running != nil:
			running++
		case cst.State.Terminated != nil:
			stopped++
			if cst.State.Terminated.ExitCode == 0 {
				succeeded++
			} else {
				failed++
			}
		case cst.State.Waiting != nil && cst.LastTerminationState.Terminated != nil:
			stopped++
			if cst.LastTerminationState.Terminated.ExitCode != 0 {
				failed++
			} else {
				succeeded++
			}
		default:
			waiting++
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cst)
	}
	switch {
	case initFailed:
		st.Phase = api.PodFailed
	case !initDone:
		st.Phase = api.PodPending
	case waiting > 0:
		st.Phase = api.PodPending
	case running > 0:
		st.Phase = api.PodRunning
	case stopped > 0:
		switch {
		case pod.Spec.RestartPolicy == api.RestartPolicyAlways || pod.Spec.RestartPolicy == "":
			st.Phase = api.PodRunning
		case stopped == succeeded:
			st.Phase = api.PodSucceeded
		case pod.Spec.RestartPolicy == api.RestartPolicyOnFailure:
			st.Phase = api.PodRunning
		default:
			st.Phase = api.PodFailed
		}
	default:
		st.Phase = api.PodPending
	}
	if isTerminal(pod.Status.Phase) {
		st.Phase = pod.Status.Phase // terminal phases never go back
	} else if w.terminal != "" {
		st.Phase = w.terminal
	}
	if w.networkErr != "" && st.Phase == api.PodPending {
		st.Message = w.networkErr
	}
	// Conditions, keeping transition times of unchanged ones.
	cond := func(t api.PodConditionType, ok bool, reason, msg string) {
		c := api.PodCondition{Type: t, Status: api.ConditionFalse, Reason: reason, Message: msg}
		if ok {
			c.Status, c.Reason, c.Message = api.ConditionTrue, "", ""
		}
		c.LastTransitionTime = api.Now()
		prev := pod.Status.Conditions
		if w.lastStatus != nil {
			// The cache may not show our last write yet.
			prev = w.lastStatus.Conditions
		}
		for _, old := range prev {
			if old.Type == t && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		st.Conditions = append(st.Conditions, c)
	}
	for _, old := range pod.Status.Conditions {
		if old.Type == api.PodScheduled {
			st.Conditions = append(st.Conditions, old)
		}
	}
	if len(st.Conditions) == 0 {
		cond(api.PodScheduled, true, "", "")
	}
	cond(api.PodReadyToStartContainers, runningSandbox(cs) != nil, "", "")
	cond(api.PodInitialized, initDone, "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " ")))
	terminal := st.Phase == api.PodSucceeded || st.Phase == api.PodFailed
	ready := len(unready) == 0 && !terminal
	msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	reason := "ContainersNotReady"
	if terminal {
		reason = "PodCompleted"
		msg = ""
	}
	cond(api.ContainersReady, ready, reason, msg)
	cond(api.PodReady, ready, reason, msg)
	return st
}

func qosClass(pod *api.Pod) api.PodQOSClass {
	requests, limits := 0, 0
	guaranteed := true
	for _, c := range append(append([]api.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, r := range []api.ResourceName{api.ResourceCPU, api.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if hasReq {
				requests++
			}
			if hasLim {
				limits++
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	if requests == 0 && limits == 0 {
		return api.PodQOSBestEffort
	}
	if guaranteed {
		return api.PodQOSGuaranteed
	}
	return api.PodQOSBurstable
}

// writeStatus writes status through /status when it differs from what the
// pod has and from what this worker last wrote.
func (m *Manager) writeStatus(ctx context.Context, w *worker, pod *api.Pod, st api.PodStatus) error {
	b, _ := json.Marshal(st)
	cur, _ := json.Marshal(pod.Status)
	if string(b) == string(cur) || string(b) == w.lastSent {
		return nil
	}
	pods := client.Resource[api.Pod](m.client).Namespace(pod.Namespace)
	p := api.DeepCopy(pod)
	for range 3 {
		p.Status = st
		_, err := pods.UpdateStatus(ctx, p)
		if err == nil {
			w.lastSent = string(b)
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
		if fresh.UID != pod.UID {
			return nil
		}
		p = fresh
	}
	return fmt.Errorf("update status of %s/%s: repeated conflicts", pod.Namespace, pod.Name)
}
