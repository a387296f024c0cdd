package pods

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/subpath"
)

// terminate is a pass over a pod being deleted (deletionTimestamp set):
// its containers get their grace period, the sandbox and network go, the
// pod's terminal status is written, and the pod object is deleted for good
// (grace 0, preconditioned on its UID).
func (s *podSync) terminate(ctx context.Context) (time.Duration, bool) {
	m, pod := s.m, s.pod
	grace := api.DefaultTerminationGracePeriodSeconds
	if pod.DeletionGracePeriodSeconds != nil {
		grace = *pod.DeletionGracePeriodSeconds
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	m.killPod(ctx, pod, s.cs, time.Duration(grace)*time.Second)
	m.probes.RemovePod(string(pod.UID))
	m.stopSandboxes(ctx, pod, s.cs)
	// The terminal status goes first, while the exited containers are
	// still there to report: kube's status manager deletes a pod only
	// once its phase is terminal, and a Job with a pod failure policy
	// (or a finalizer's owner) reads the phase and the exit codes.
	cs, err := m.rt.ListPodContainers(ctx, string(pod.UID))
	if err != nil {
		s.log.Warn("list pod containers", "err", err)
		return 2 * retrySoon, false
	}
	if err := m.writeStatus(ctx, s.w, pod, m.finalStatus(s.w, pod, cs)); err != nil {
		s.log.Warn("update the status of a terminated pod", "err", err)
		return 2 * retrySoon, false
	}
	m.teardown(ctx, string(pod.UID), pod.Namespace, pod.Name, cs, 0)
	uid := pod.UID
	zero := int64(0)
	err = client.Resource[api.Pod](m.client).Namespace(pod.Namespace).Delete(ctx, pod.Name,
		&api.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &api.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		s.log.Warn("delete terminated pod", "err", err)
		return 2 * retrySoon, false
	}
	s.log.Info("pod terminated and deleted", "grace", grace)
	return 0, true
}

// removeGonePod removes what is left of a pod no longer bound to the node
// (deleted while the kubelet was away, or force-deleted).
func (m *Manager) removeGonePod(ctx context.Context, uid string, cs []runtime.Container) {
	if len(cs) > 0 {
		m.log.Info("removing the containers of a pod that no longer exists", "pod", cs[0].PodNamespace+"/"+cs[0].PodName, "podUID", uid)
		m.teardown(ctx, uid, cs[0].PodNamespace, cs[0].PodName, cs, 2*time.Second)
	}
	m.probes.RemovePod(uid)
}

// killPod stops the pod's running containers within grace as kube's
// killContainersWithSyncResult: the app (and regular init) containers in
// parallel, each after its preStop hook, then the sidecars one by one in
// reverse order; sandboxes are left to the caller (their network is torn
// down first).
func (m *Manager) killPod(ctx context.Context, pod *api.Pod, cs []runtime.Container, grace time.Duration) {
	deadline := time.Now().Add(grace)
	podIP := ""
	if sb := runningSandbox(cs); sb != nil {
		podIP = m.currentPodIP(pod, sb.PodIP)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		if c.Kind != runtime.KindContainer || c.State != runtime.StateRunning {
			continue
		}
		spec := containerSpec(pod, c.Name, c.Init)
		if spec != nil && c.Init && isSidecar(spec) {
			continue
		}
		m.log.Info("killing container", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "grace", grace)
		m.rec.Eventf(pod, api.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
		wg.Go(func() { m.killContainer(ctx, pod, spec, &c, podIP, grace) })
	}
	wg.Wait()
	m.stopSidecars(ctx, pod, cs, max(time.Until(deadline), 0))
}

func (m *Manager) stopSandboxes(ctx context.Context, pod *api.Pod, cs []runtime.Container) {
	for _, c := range cs {
		if c.Kind == runtime.KindSandbox && c.State == runtime.StateRunning {
			_ = m.tearDownNetwork(ctx, network.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), SandboxID: c.ID, NetNS: c.NetNSPath()})
			_ = m.rt.StopContainer(ctx, c.ID, 0)
		}
	}
}

// teardown stops and removes every container of a pod, its network and
// its files. cs nil means list them.
func (m *Manager) teardown(ctx context.Context, uid, ns, name string, cs []runtime.Container, grace time.Duration) {
	if cs == nil {
		var err error
		if cs, err = m.rt.ListPodContainers(ctx, uid); err != nil {
			m.log.Warn("list containers for teardown", "podUID", uid, "err", err)
			return
		}
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		if c.Kind == runtime.KindContainer && c.State == runtime.StateRunning {
			wg.Go(func() { _ = m.rt.StopContainer(ctx, c.ID, grace) })
		}
	}
	wg.Wait()
	for _, c := range cs {
		if c.Kind == runtime.KindSandbox {
			np := network.Pod{Namespace: ns, Name: name, UID: uid, SandboxID: c.ID, NetNS: c.NetNSPath()}
			if err := m.tearDownNetwork(ctx, np); err != nil {
				m.log.Warn("tear down pod network", "podUID", uid, "err", err)
			}
		}
	}
	for _, c := range cs {
		if err := m.rt.RemoveContainer(ctx, c.ID); err != nil {
			m.log.Warn("remove container", "container", c.ID, "err", err)
		}
	}
	if cc, ok := m.rt.(runtime.CgroupCleaner); ok {
		cc.RemovePodCgroups(uid)
	}
	// The subPath bind mounts go first: RemoveAll through one would
	// delete the volume's files, a hostPath's on the node. Then the
	// image volumes and the Memory emptyDirs' tmpfs.
	if err := subpath.Clean(m.podDir(uid)); err != nil {
		m.log.Warn("clean subPath mounts; keeping the pod directory", "podUID", uid, "err", err)
	} else if err := m.unmountImageVolumes(ctx, m.podDir(uid)); err != nil {
		m.log.Warn("unmount image volumes; keeping the pod directory", "podUID", uid, "err", err)
	} else if err := unmountEmptyDirs(m.podDir(uid)); err != nil {
		m.log.Warn("unmount emptyDir tmpfs; keeping the pod directory", "podUID", uid, "err", err)
	} else {
		_ = os.RemoveAll(m.podDir(uid))
	}
	// The pod's log directory goes with it, as kube's container GC
	// removes the logs of pods that are gone.
	_ = os.RemoveAll(filepath.Join(m.opts.LogsDir, fmt.Sprintf("%s_%s_%s", ns, name, uid)))
	m.tokens.DeleteServiceAccountToken(api.UID(uid))
	m.forgetCertificates(uid)
}

// finalStatus is the status of a pod whose containers were stopped for its
// deletion, as kube's generateAPIPodStatus for a terminal pod followed by
// the status manager's TerminatePod: Succeeded when every app container
// exited 0, else Failed; a container that never reported an exit is
// terminated with ContainerStatusUnknown (exit 137).
func (m *Manager) finalStatus(w *worker, pod *api.Pod, cs []runtime.Container) api.PodStatus {
	alloc := m.allocated(w.uid)
	st := m.computeStatus(w, pod, cs, alloc)
	if !isTerminal(st.Phase) {
		phase := api.PodFailed
		if allSucceeded(st.ContainerStatuses) {
			phase = api.PodSucceeded
		}
		// The phase the conditions are computed with (Ready False,
		// reason PodCompleted, as for any finished pod).
		w.terminal = phase
		st = m.computeStatus(w, pod, cs, alloc)
	}
	unknown := api.ContainerState{Terminated: &api.ContainerStateTerminated{
		Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated", ExitCode: 137,
	}}
	if podHasInitialized(pod) {
		for i := range st.ContainerStatuses {
			if st.ContainerStatuses[i].State.Terminated == nil {
				st.ContainerStatuses[i].State = unknown
			}
		}
	}
	// Init containers up to the last one with evidence of a start.
	for i := len(st.InitContainerStatuses) - 1; i >= 0; i-- {
		if c := st.InitContainerStatuses[i]; c.State.Waiting == nil || c.LastTerminationState.Terminated != nil {
			for j := range st.InitContainerStatuses[:i+1] {
				if st.InitContainerStatuses[j].State.Terminated == nil {
					st.InitContainerStatuses[j].State = unknown
				}
			}
			break
		}
	}
	return st
}

// allSucceeded: every app container exited 0.
func allSucceeded(sts []api.ContainerStatus) bool {
	for _, c := range sts {
		if c.State.Terminated == nil || c.State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return len(sts) > 0
}

// podHasInitialized is kube's hasPodInitialized: no init containers, or
// the pod's status shows an app container out of waiting or the last init
// container done (a sidecar: started).
func podHasInitialized(pod *api.Pod) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.LastTerminationState.Terminated != nil || c.State.Waiting == nil {
			return true
		}
	}
	if l := len(pod.Status.InitContainerStatuses); l > 0 && l <= len(pod.Spec.InitContainers) {
		last := pod.Status.InitContainerStatuses[l-1]
		if isSidecar(&pod.Spec.InitContainers[l-1]) {
			return last.State.Running != nil && last.Started != nil && *last.Started
		}
		for _, t := range []*api.ContainerStateTerminated{last.LastTerminationState.Terminated, last.State.Terminated} {
			if t != nil && t.ExitCode == 0 {
				return true
			}
		}
	}
	return false
}
