package pods

import (
	"context"
	"os"
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
// its containers get their grace period, the sandbox and network go, and
// the pod object is deleted for good (grace 0, preconditioned on its UID).
func (s *podSync) terminate(ctx context.Context) (time.Duration, bool) {
	m, pod := s.m, s.pod
	grace := api.DefaultTerminationGracePeriodSeconds
	if pod.DeletionGracePeriodSeconds != nil {
		grace = *pod.DeletionGracePeriodSeconds
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	m.killPod(ctx, pod, s.cs, time.Duration(grace)*time.Second)
	m.teardown(ctx, string(pod.UID), pod.Namespace, pod.Name, nil, 0)
	m.probes.RemovePod(string(pod.UID))
	uid := pod.UID
	zero := int64(0)
	err := client.Resource[api.Pod](m.client).Namespace(pod.Namespace).Delete(ctx, pod.Name,
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
			_ = m.net.TearDown(ctx, network.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), SandboxID: c.ID, NetNS: c.NetNSPath()})
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
			if err := m.net.TearDown(ctx, np); err != nil {
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
	// Memory emptyDirs' tmpfs.
	if err := subpath.Clean(m.podDir(uid)); err != nil {
		m.log.Warn("clean subPath mounts; keeping the pod directory", "podUID", uid, "err", err)
	} else if err := unmountEmptyDirs(m.podDir(uid)); err != nil {
		m.log.Warn("unmount emptyDir tmpfs; keeping the pod directory", "podUID", uid, "err", err)
	} else {
		_ = os.RemoveAll(m.podDir(uid))
	}
	m.tokens.DeleteServiceAccountToken(api.UID(uid))
	m.forgetCertificates(uid)
}
