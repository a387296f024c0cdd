package pods

import (
	"context"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// sandbox is the first step: the pod network must be ready (for a pod of
// its own network), the volumes set up, and a sandbox running — a new pod,
// or one whose sandbox died (a node reboot), gets a new sandbox and all its
// containers restart in it. False: not yet.
func (s *podSync) sandbox(ctx context.Context) bool {
	m, w, pod := s.m, s.w, s.pod
	if !pod.Spec.HostNetwork {
		if err := m.net.Ready(); err != nil {
			s.networkNotReady(err)
			return false
		}
	}
	w.networkErr = ""
	if sb := runningSandbox(s.cs); sb != nil {
		s.sb, w.podIP = sb, m.sandboxIP(pod, sb)
		s.resyncVolumes(ctx)
		return true
	}
	// Volumes come before the sandbox, as in the kubelet: a pod whose
	// volume cannot be set up stays ContainerCreating with FailedMount.
	if _, err := s.setUpVolumes(ctx); err != nil {
		s.mountFailed(err)
		s.after(2 * retrySoon)
		return false
	}
	// Starting a pod is bounded: many at once make containerd slow for all
	// of them, few at once get each running quickly. The slot is held
	// until the pass ends (the first containers started).
	select {
	case m.startSlots <- struct{}{}:
		s.release = func() { <-m.startSlots }
	case <-ctx.Done():
		return false
	}
	s.removeDeadSandbox(ctx)
	sb, err := m.createSandbox(ctx, pod)
	if err != nil {
		s.log.Warn("create pod sandbox", "err", err)
		m.rec.Eventf(pod, api.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		s.after(2 * retrySoon)
		return false
	}
	if s.cs, err = m.rt.ListPodContainers(ctx, string(pod.UID)); err != nil {
		s.after(retrySoon)
		return false
	}
	s.sb, w.podIP, w.mountErr = &sb, sb.PodIP, ""
	return true
}

// networkNotReady records a pod waiting for the pod network: the
// NetworkNotReady event (folded with its repeats), the pod's message, one
// log line per new reason.
func (s *podSync) networkNotReady(err error) {
	// Worded as the kubelet reports its runtime's NetworkReady condition.
	msg := "network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:" + err.Error()
	if s.w.networkErr != msg {
		s.log.Warn("waiting for the pod network", "err", err)
	}
	s.w.networkErr = msg
	s.m.rec.Event(s.pod, api.EventTypeWarning, "NetworkNotReady", msg)
	s.after(retrySoon)
}

// mountFailed records a volume that could not be set up: a FailedMount
// event (folded with its repeats) and one log line per new message.
func (s *podSync) mountFailed(err error) {
	msg := err.Error()
	s.mu.Lock() // the container steps run in parallel
	first := s.w.mountErr != msg
	s.w.mountErr = msg
	s.mu.Unlock()
	if first {
		s.log.Warn("set up volumes", "err", err)
	}
	s.m.rec.Event(s.pod, api.EventTypeWarning, "FailedMount", msg)
}

// setUpVolumes sets the pod's volumes up once per pass.
func (s *podSync) setUpVolumes(ctx context.Context) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.volumes != nil {
		return s.volumes, nil
	}
	v, err := s.m.setUpVolumes(ctx, s.pod)
	if err != nil {
		return nil, err
	}
	s.volumes = v
	s.w.volumesAt = time.Now()
	return v, nil
}

// resyncVolumes writes the volumes of a running pod again every
// VolumeResyncPeriod, as kube's volume manager remounts them: changed
// config maps and secrets and refreshed tokens reach the containers (an
// unchanged payload writes nothing). A failure is a FailedMount event;
// the running containers keep the previous content.
func (s *podSync) resyncVolumes(ctx context.Context) {
	period := s.m.opts.VolumeResyncPeriod
	if wait := period - time.Since(s.w.volumesAt); wait > 0 {
		s.after(wait)
		return
	}
	if _, err := s.setUpVolumes(ctx); err != nil {
		s.mountFailed(err)
		s.w.volumesAt = time.Now()
		s.after(period)
		return
	}
	s.w.mountErr = ""
	s.after(period)
}

// removeDeadSandbox stops what still runs of a pod whose sandbox died and
// removes the old sandboxes with their network.
func (s *podSync) removeDeadSandbox(ctx context.Context) {
	var old []runtime.Container
	for _, c := range s.cs {
		if c.State == runtime.StateRunning || c.Kind == runtime.KindSandbox {
			old = append(old, c)
		}
	}
	if len(old) == 0 {
		return
	}
	s.log.Info("pod sandbox is not running: restarting the pod in a new sandbox", "containers", len(old))
	s.m.killPod(ctx, s.pod, old, 2*time.Second)
	for _, c := range old {
		if c.Kind != runtime.KindSandbox {
			continue
		}
		_ = s.m.tearDownNetwork(ctx, network.Pod{Namespace: s.pod.Namespace, Name: s.pod.Name, UID: string(s.pod.UID), SandboxID: c.ID})
		// A sandbox holding the previous instances of the containers
		// (CRI: removing it removes them) stays, stopped, as kube's
		// kubelet leaves it: their restart counts and last states come
		// from them. removeReplacedSandboxes removes it once the new
		// instances have taken over.
		if len(sandboxContainers(s.cs, c.ID)) == 0 {
			_ = s.m.rt.RemoveContainer(ctx, c.ID)
		}
	}
}

// sandboxContainers are the containers created in sandbox id, for a
// driver whose containers belong to their sandbox (Container.SandboxID).
func sandboxContainers(cs []runtime.Container, id string) []*runtime.Container {
	var out []*runtime.Container
	for i := range cs {
		if c := &cs[i]; c.Kind == runtime.KindContainer && c.SandboxID == id {
			out = append(out, c)
		}
	}
	return out
}

// removeReplacedSandboxes removes the dead sandboxes of a running pod
// (kept by removeDeadSandbox for the containers in them) once no
// container in them is needed: each has exited and a newer instance of
// its container runs elsewhere, the pod's status (just written, with the
// old instance as lastState and the count) keeping what they told.
func (s *podSync) removeReplacedSandboxes(ctx context.Context, cs []runtime.Container) {
	live := runningSandbox(cs)
	if live == nil {
		return
	}
	for i := range cs {
		sb := &cs[i]
		if sb.Kind != runtime.KindSandbox || sb.ID == live.ID || sb.State == runtime.StateRunning {
			continue
		}
		held := sandboxContainers(cs, sb.ID)
		replaced := true
		for _, c := range held {
			if c.State != runtime.StateExited && c.State != runtime.StateCreated {
				replaced = false
				break
			}
			if c.Ephemeral {
				continue
			}
			newer := false
			for _, n := range instances(cs, c.Name, c.Init) {
				if n.SandboxID == live.ID && n.RestartCount > c.RestartCount {
					newer = true
					break
				}
			}
			if !newer {
				replaced = false
				break
			}
		}
		if !replaced {
			continue
		}
		if err := s.m.rt.RemoveContainer(ctx, sb.ID); err != nil {
			s.log.Warn("remove replaced pod sandbox", "sandbox", shortID(sb.ID), "err", err)
			continue
		}
		s.log.Info("removed replaced pod sandbox", "sandbox", shortID(sb.ID), "containers", len(held))
	}
}

// createSandbox runs a sandbox, attaches it to the pod network (a pod of
// its own network; done by the runtime itself for a driver that owns the
// network) and writes the pod's /etc/hosts and resolv.conf.
func (m *Manager) createSandbox(ctx context.Context, pod *api.Pod) (runtime.Container, error) {
	t0 := time.Now()
	sb, err := m.rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: string(pod.UID), PodNamespace: pod.Namespace, PodName: pod.Name,
		Hostname: hostname(pod), HostNetwork: pod.Spec.HostNetwork, Sysctls: podSysctls(pod),
		Privileged: hasPrivileged(pod), PortMappings: sandboxPorts(pod), Labels: pod.Labels, Annotations: pod.Annotations})
	if err != nil {
		return runtime.Container{}, err
	}
	ip := ""
	tSandbox := time.Since(t0)
	owned := runtime.OwnsPodNetwork(m.rt)
	switch {
	case owned:
		ip = m.sandboxIP(pod, &sb)
	case !pod.Spec.HostNetwork:
		np := network.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), SandboxID: sb.ID, NetNS: sb.NetNSPath(), Ports: hostPorts(pod)}
		ip, err = m.net.SetUp(ctx, np)
		if err != nil {
			_ = m.net.TearDown(ctx, np)
			_ = m.rt.RemoveContainer(ctx, sb.ID)
			return runtime.Container{}, err
		}
	default:
		ip = m.hostIP()
	}
	m.log.Info("pod sandbox ready", "pod", pod.Namespace+"/"+pod.Name, "sandbox", shortID(sb.ID), "podIP", ip,
		"sandboxTook", tSandbox.Round(time.Millisecond), "networkTook", (time.Since(t0) - tSandbox).Round(time.Millisecond))
	if !owned {
		if err := m.rt.SetSandboxIP(ctx, sb.ID, ip); err != nil {
			return runtime.Container{}, err
		}
	}
	sb.PodIP = ip
	if err := m.writeEtcFiles(pod, ip); err != nil {
		return runtime.Container{}, err
	}
	return sb, nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// hostPorts are the pod's hostPort mappings, for the portmap plugin.
func hostPorts(pod *api.Pod) []network.PortMapping {
	var out []network.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			proto := string(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			out = append(out, network.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: strings.ToLower(proto), HostIP: p.HostIP})
		}
	}
	return out
}

// sandboxIP is the pod IP a sandbox reports; a host-network sandbox of a
// runtime that reports none has the node's.
func (m *Manager) sandboxIP(pod *api.Pod, sb *runtime.Container) string {
	if sb.PodIP == "" && pod.Spec.HostNetwork {
		return m.hostIP()
	}
	return sb.PodIP
}

// tearDownNetwork detaches a sandbox from the pod network, unless the
// runtime owns the network (it detaches the sandbox when it stops it).
func (m *Manager) tearDownNetwork(ctx context.Context, p network.Pod) error {
	if runtime.OwnsPodNetwork(m.rt) {
		return nil
	}
	return m.net.TearDown(ctx, p)
}

// sandboxPorts are the pod's hostPorts for a runtime that owns the pod
// network (it maps them itself).
func sandboxPorts(pod *api.Pod) []runtime.PortMapping {
	var out []runtime.PortMapping
	for _, p := range hostPorts(pod) {
		out = append(out, runtime.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: strings.ToUpper(p.Protocol), HostIP: p.HostIP})
	}
	return out
}

// hasPrivileged reports whether a container of the pod is privileged (its
// sandbox must be too, for a CRI runtime).
func hasPrivileged(pod *api.Pod) bool {
	for _, list := range [][]api.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return true
			}
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			return true
		}
	}
	return false
}
