package pods

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// Sidecar containers are init containers with restartPolicy Always, run as
// kube's kubelet runs them (computeInitContainerActions): started in their
// place among the init containers, a sidecar lets the next one start once
// it is started (running, postStart done, startup probe succeeded), then
// keeps running beside the app containers, restarted whenever it exits
// (with the crash-loop back-off) or fails its liveness or startup probe.
// Once every app container has exited for good the sidecars are stopped,
// in reverse order; on deletion they stop after the app containers.

func isSidecar(c *api.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways
}

func hasSidecars(pod *api.Pod) bool {
	return slices.ContainsFunc(pod.Spec.InitContainers, func(c api.Container) bool { return isSidecar(&c) })
}

// initialized: an app container has been created, so the init containers
// are done for good (a restarting sidecar does not undo it).
func initialized(pod *api.Pod, cs []runtime.Container) bool {
	for i := range pod.Spec.Containers {
		if len(instances(cs, pod.Spec.Containers[i].Name, false)) > 0 {
			return true
		}
	}
	return false
}

// sidecar syncs one sidecar; true once it is started.
func (s *podSync) sidecar(ctx context.Context, c *api.Container) bool {
	inst := instances(s.cs, c.Name, true)
	if len(inst) == 0 {
		s.start(ctx, c, true, 0, nil)
		s.after(retrySoon)
		return false
	}
	last := inst[0]
	switch last.State {
	case runtime.StateRunning:
		if reason := s.m.probeRestartReason(s.pod, c, last); reason != "" {
			s.restartRunning(ctx, c, inst, reason)
			return false
		}
		if d, resized := s.resizeRunning(ctx, c, inst); resized {
			s.after(d)
		}
		return s.m.started(s.pod, c, last)
	case runtime.StateCreated, runtime.StateUnknown:
		_ = s.m.rt.RemoveContainer(ctx, last.ID)
		s.after(retrySoon)
		return false
	}
	s.after(s.restart(ctx, c, true, inst))
	return false
}

// started: a running instance of c has passed its startup probe, if any.
func (m *Manager) started(pod *api.Pod, c *api.Container, inst *runtime.Container) bool {
	return c.StartupProbe == nil || m.probes.Result(string(pod.UID), c.Name, inst.ID, probes.Startup) == probes.Success
}

// probeRestartReason says why a running instance of c must be restarted
// (its definition changed, a startup or liveness probe failed), or "".
func (m *Manager) probeRestartReason(pod *api.Pod, c *api.Container, inst *runtime.Container) string {
	switch {
	case inst.Hash != "" && inst.Hash != containerHash(c):
		return fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)
	case c.StartupProbe != nil && m.probes.Result(string(pod.UID), c.Name, inst.ID, probes.Startup) == probes.Failure:
		return fmt.Sprintf("Container %s failed startup probe, will be restarted", c.Name)
	case c.LivenessProbe != nil && m.probes.Result(string(pod.UID), c.Name, inst.ID, probes.Liveness) == probes.Failure:
		return fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name)
	}
	return ""
}

// restartRunning kills the running instance of c (inst, newest first) and
// starts the next one in the same pass, as kube's SyncPod kills and starts
// in one go: the status written after the pass shows the new instance,
// never the dead one in between (a container whose image was patched
// stays Ready).
func (s *podSync) restartRunning(ctx context.Context, c *api.Container, inst []*runtime.Container, reason string) {
	m, pod, last := s.m, s.pod, inst[0]
	m.rec.Event(pod, api.EventTypeNormal, "Killing", reason)
	s.log.Info("restarting container", "container", c.Name, "reason", reason)
	m.killContainer(ctx, pod, c, last, m.currentPodIP(pod, s.sb.PodIP), m.gracePeriod(pod))
	s.after(s.start(ctx, c, last.Init, last.RestartCount+1, inst))
}

// appsDone: every app container has exited and will not be restarted.
func (s *podSync) appsDone() bool {
	if len(s.pod.Spec.Containers) == 0 {
		return false
	}
	for i := range s.pod.Spec.Containers {
		inst := instances(s.cs, s.pod.Spec.Containers[i].Name, false)
		if len(inst) == 0 || inst[0].State != runtime.StateExited || shouldRestart(s.pod.Spec.RestartPolicy, inst[0].ExitCode) {
			return false
		}
	}
	return true
}

// stopSidecars stops the running sidecars one by one, the last first, each
// with its preStop hook, within what is left of grace (at least
// minimumGrace).
func (m *Manager) stopSidecars(ctx context.Context, pod *api.Pod, cs []runtime.Container, grace time.Duration) {
	deadline := time.Now().Add(grace)
	podIP := ""
	if sb := runningSandbox(cs); sb != nil {
		podIP = m.currentPodIP(pod, sb.PodIP)
	}
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		if !isSidecar(c) {
			continue
		}
		for _, inst := range instances(cs, c.Name, true) {
			if inst.State != runtime.StateRunning {
				continue
			}
			m.log.Info("killing container", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "grace", time.Until(deadline).Round(time.Second))
			m.rec.Eventf(pod, api.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
			// As kube's killContainer, a sidecar still gets a minimal
			// shutdown window once the apps used up the grace period.
			m.killContainer(ctx, pod, c, inst, podIP, max(time.Until(deadline), minimumGrace))
		}
	}
}
