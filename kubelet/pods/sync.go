package pods

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

const retrySoon = time.Second

func (m *Manager) podByUID(uid string) *api.Pod {
	for _, p := range m.pods.Store().List() {
		if string(p.UID) == uid {
			return p
		}
	}
	return nil
}

// syncPod makes the node match one pod. It returns when to sync again and
// whether the worker is done (the pod is gone from the node).
func (m *Manager) syncPod(ctx context.Context, w *worker) (time.Duration, bool) {
	pod := m.podByUID(w.uid)
	cs, err := m.rt.ListPodContainers(ctx, w.uid)
	if err != nil {
		m.log.Warn("list pod containers", "podUID", w.uid, "err", err)
		return 2 * retrySoon, false
	}
	if pod == nil {
		if len(cs) > 0 {
			m.teardown(ctx, w.uid, cs[0].PodNamespace, cs[0].PodName, cs, 2*time.Second)
		}
		m.probes.RemovePod(w.uid)
		return 0, true
	}
	log := m.log.With("pod", pod.Namespace+"/"+pod.Name)
	if w.firstSeen.IsZero() {
		w.firstSeen = time.Now()
		w.waiting = map[string]*api.ContainerStateWaiting{}
		if pod.Status.StartTime != nil {
			w.startTime = pod.Status.StartTime
		} else {
			t := api.Now()
			w.startTime = &t
		}
	}
	if pod.DeletionTimestamp != nil {
		grace := api.DefaultTerminationGracePeriodSeconds
		if pod.DeletionGracePeriodSeconds != nil {
			grace = *pod.DeletionGracePeriodSeconds
		} else if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		m.killPod(ctx, pod, cs, time.Duration(grace)*time.Second)
		m.teardown(ctx, w.uid, pod.Namespace, pod.Name, nil, 0)
		m.probes.RemovePod(w.uid)
		uid := pod.UID
		zero := int64(0)
		err := client.Resource[api.Pod](m.client).Namespace(pod.Namespace).Delete(ctx, pod.Name,
			&api.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &api.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			log.Warn("delete terminated pod", "err", err)
			return 2 * retrySoon, false
		}
		log.Info("pod terminated and deleted", "grace", grace)
		return 0, true
	}
	next := m.syncRunning(ctx, w, pod, cs, log)
	cs, err = m.rt.ListPodContainers(ctx, w.uid)
	if err != nil {
		return 2 * retrySoon, false
	}
	status := m.computeStatus(w, pod, cs)
	m.syncProbes(pod, cs, status)
	if isTerminal(status.Phase) {
		w.terminal = status.Phase
	}
	if isTerminal(status.Phase) && hasRunningSandbox(cs) {
		// A finished pod keeps its containers (for logs) but not its
		// sandbox or network.
		m.stopSandboxes(ctx, pod, cs)
	}
	if status.Phase == api.PodRunning && !w.observed {
		w.observed = true
		m.metrics.observeStart(time.Since(w.firstSeen))
	}
	if err := m.writeStatus(ctx, w, pod, status); err != nil {
		log.Warn("update pod status", "err", err)
		return retrySoon, false
	}
	return next, false
}

func hasRunningSandbox(cs []runtime.Container) bool {
	return runningSandbox(cs) != nil
}

func runningSandbox(cs []runtime.Container) *runtime.Container {
	var best *runtime.Container
	for i := range cs {
		c := &cs[i]
		if c.Kind == runtime.KindSandbox && c.State == runtime.StateRunning && (best == nil || c.CreatedAt.After(best.CreatedAt)) {
			best = c
		}
	}
	return best
}

// instances returns the app/init instances of container name, newest first.
func instances(cs []runtime.Container, name string, init bool) []*runtime.Container {
	var out []*runtime.Container
	for i := range cs {
		c := &cs[i]
		if c.Kind == runtime.KindContainer && c.Name == name && c.Init == init {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].RestartCount != out[j].RestartCount {
			return out[i].RestartCount > out[j].RestartCount
		}
		return out[i].CreatedAt.After(out[j].CreatedAt)
	})
	return out
}

func isTerminal(p api.PodPhase) bool { return p == api.PodSucceeded || p == api.PodFailed }

// logger is the part of *slog.Logger a sync pass logs with.
type logger interface {
	Warn(string, ...any)
	Info(string, ...any)
}

// syncRunning brings sandbox, init and app containers to their desired
// state; it returns how soon to look again.
func (m *Manager) syncRunning(ctx context.Context, w *worker, pod *api.Pod, cs []runtime.Container, log logger) time.Duration {
	if isTerminal(pod.Status.Phase) || w.terminal != "" {
		return 0
	}
	if !pod.Spec.HostNetwork {
		if err := m.net.Ready(); err != nil {
			msg := "network is not ready: " + err.Error()
			if w.networkErr != msg {
				log.Warn("waiting for the pod network", "err", err)
			}
			w.networkErr = msg
			m.rec.Event(pod, api.EventTypeWarning, "NetworkNotReady", msg)
			return retrySoon
		}
	}
	w.networkErr = ""
	var volumes map[string]string
	needVolumes := func() (map[string]string, error) {
		if volumes != nil {
			return volumes, nil
		}
		v, err := m.setUpVolumes(ctx, pod)
		if err != nil {
			return nil, err
		}
		volumes = v
		return v, nil
	}
	sb := runningSandbox(cs)
	if sb == nil {
		// Volumes come before the sandbox, as in the kubelet: a pod whose
		// volume cannot be set up stays ContainerCreating with FailedMount.
		if _, err := needVolumes(); err != nil {
			m.mountFailed(w, pod, err, log)
			return 2 * retrySoon
		}
		// Starting a pod is bounded: many at once make containerd slow for
		// all of them, few at once get each running quickly.
		select {
		case m.startSlots <- struct{}{}:
			defer func() { <-m.startSlots }()
		case <-ctx.Done():
			return 0
		}
		// New pod, or the sandbox died: everything restarts in a new one.
		var running []runtime.Container
		for _, c := range cs {
			if c.State == runtime.StateRunning || c.Kind == runtime.KindSandbox {
				running = append(running, c)
			}
		}
		if len(running) > 0 {
			log.Info("pod sandbox is not running: restarting the pod in a new sandbox", "containers", len(running))
			m.killPod(ctx, pod, running, 2*time.Second)
			for _, c := range running {
				if c.Kind == runtime.KindSandbox {
					_ = m.net.TearDown(ctx, network.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), SandboxID: c.ID})
					_ = m.rt.RemoveContainer(ctx, c.ID)
				}
			}
		}
		c, err := m.createSandbox(ctx, pod)
		if err != nil {
			log.Warn("create pod sandbox", "err", err)
			m.rec.Eventf(pod, api.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
			return 2 * retrySoon
		}
		sb = &c
		var err2 error
		if cs, err2 = m.rt.ListPodContainers(ctx, string(pod.UID)); err2 != nil {
			return retrySoon
		}
	}
	w.podIP = sb.PodIP
	w.mountErr = ""
	var next time.Duration
	soon := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	// Init containers, in order, each to completion.
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		inst := instances(cs, c.Name, true)
		if len(inst) == 0 {
			soon(m.startContainer(ctx, w, pod, c, true, 0, sb, needVolumes, nil))
			return next
		}
		last := inst[0]
		switch last.State {
		case runtime.StateRunning:
			return 0
		case runtime.StateCreated, runtime.StateUnknown:
			_ = m.rt.RemoveContainer(ctx, last.ID)
			return retrySoon
		}
		if last.ExitCode == 0 {
			continue
		}
		if pod.Spec.RestartPolicy == api.RestartPolicyNever {
			return 0
		}
		soon(m.restart(ctx, w, pod, c, true, inst, sb, needVolumes))
		return next
	}
	// App containers.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		inst := instances(cs, c.Name, false)
		wg.Go(func() {
			d := m.syncContainer(ctx, w, pod, c, inst, sb, needVolumesLocked(&mu, needVolumes))
			mu.Lock()
			soon(d)
			mu.Unlock()
		})
	}
	wg.Wait()
	return next
}

func needVolumesLocked(mu *sync.Mutex, f func() (map[string]string, error)) func() (map[string]string, error) {
	return func() (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		return f()
	}
}

func (m *Manager) syncContainer(ctx context.Context, w *worker, pod *api.Pod, c *api.Container, inst []*runtime.Container,
	sb *runtime.Container, volumes func() (map[string]string, error)) time.Duration {
	if len(inst) == 0 {
		return m.startContainer(ctx, w, pod, c, false, 0, sb, volumes, nil)
	}
	last := inst[0]
	switch last.State {
	case runtime.StateRunning:
		reason := ""
		switch {
		case last.Hash != "" && last.Hash != containerHash(c):
			reason = fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)
		case c.StartupProbe != nil && m.probes.Result(string(pod.UID), c.Name, last.ID, probes.Startup) == probes.Failure:
			reason = fmt.Sprintf("Container %s failed startup probe, will be restarted", c.Name)
		case c.LivenessProbe != nil && m.probes.Result(string(pod.UID), c.Name, last.ID, probes.Liveness) == probes.Failure:
			reason = fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name)
		}
		if reason != "" {
			m.rec.Event(pod, api.EventTypeNormal, "Killing", reason)
			m.log.Info("restarting container", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "reason", reason)
			if err := m.rt.StopContainer(ctx, last.ID, m.gracePeriod(pod)); err != nil {
				m.log.Warn("stop container", "container", last.ID, "err", err)
			}
			return retrySoon
		}
		return 0
	case runtime.StateCreated, runtime.StateUnknown:
		_ = m.rt.RemoveContainer(ctx, last.ID)
		return retrySoon
	}
	if !shouldRestart(pod.Spec.RestartPolicy, last.ExitCode) {
		return 0
	}
	return m.restart(ctx, w, pod, c, false, inst, sb, volumes)
}

func shouldRestart(p api.RestartPolicy, code int32) bool {
	switch p {
	case api.RestartPolicyNever:
		return false
	case api.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}

func (m *Manager) gracePeriod(pod *api.Pod) time.Duration {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return time.Duration(api.DefaultTerminationGracePeriodSeconds) * time.Second
}

func backoffKey(pod *api.Pod, c *api.Container) string {
	return string(pod.UID) + "/" + c.Name + "/" + containerHash(c)
}

// restart starts the next instance of an exited container unless it is in
// CrashLoopBackOff.
func (m *Manager) restart(ctx context.Context, w *worker, pod *api.Pod, c *api.Container, init bool, inst []*runtime.Container,
	sb *runtime.Container, volumes func() (map[string]string, error)) time.Duration {
	last := inst[0]
	key := backoffKey(pod, c)
	finished := last.FinishedAt
	if finished.IsZero() {
		finished = time.Now()
	}
	if in, left := m.backoff.InBackoffSince(key, finished); in {
		delay := m.backoff.Get(key)
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay.Round(time.Second), c.Name, pod.Name, pod.Namespace, pod.UID)
		if old := w.getWaiting(c.Name); old == nil || old.Reason != "CrashLoopBackOff" || old.Message != msg {
			m.log.Info("back-off restarting failed container", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name,
				"backoff", delay.Round(time.Second), "exitCode", last.ExitCode, "reason", last.Reason)
			m.rec.Eventf(pod, api.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", c.Name, podDesc(pod))
		}
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg})
		return left
	}
	m.backoff.Next(key, finished)
	return m.startContainer(ctx, w, pod, c, init, last.RestartCount+1, sb, volumes, inst)
}

// mountFailed records a volume that could not be set up: a FailedMount
// event (folded with its repeats) and one log line per new message.
func (m *Manager) mountFailed(w *worker, pod *api.Pod, err error, log logger) {
	msg := err.Error()
	if w.mountErr != msg {
		log.Warn("set up volumes", "err", err)
	}
	w.mountErr = msg
	m.rec.Event(pod, api.EventTypeWarning, "FailedMount", msg)
}

func podDesc(pod *api.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// startContainer pulls the image and creates and starts one container
// instance; old instances beyond the previous one are removed.
func (m *Manager) startContainer(ctx context.Context, w *worker, pod *api.Pod, c *api.Container, init bool, restartCount int,
	sb *runtime.Container, volumes func() (map[string]string, error), old []*runtime.Container) time.Duration {
	ref, wait, err := m.ensureImage(ctx, w, pod, c)
	if err != nil {
		return wait
	}
	fail := func(reason string, err error) time.Duration {
		m.log.Warn("start container", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "reason", reason, "err", err)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: reason, Message: err.Error()})
		m.rec.Eventf(pod, api.EventTypeWarning, "Failed", "Error: %v", err)
		return 2 * retrySoon
	}
	vols, err := volumes()
	if err != nil {
		m.mountFailed(w, pod, err, m.log.With("pod", pod.Namespace+"/"+pod.Name))
		return 2 * retrySoon
	}
	mounts, err := m.mounts(pod, c, vols)
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	env, err := m.env(ctx, pod, c, m.currentPodIP(pod, sb.PodIP))
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	quota, period, shares, mem := resources(c)
	logPath := LogPath(m.opts.LogsDir, pod, c.Name, restartCount)
	_ = os.Remove(logPath) // a stale file of a previous pod incarnation
	t0 := time.Now()
	id, err := m.rt.CreateContainer(ctx, runtime.ContainerConfig{
		PodUID: string(pod.UID), PodNamespace: pod.Namespace, PodName: pod.Name, Name: c.Name, Init: init,
		RestartCount: restartCount, Hash: containerHash(c), Image: c.Image, ImageRef: ref,
		Command: expandAll(c.Command, env), Args: expandAll(c.Args, env), Env: env, WorkingDir: c.WorkingDir,
		Hostname: hostname(pod), Mounts: mounts, CPUQuota: quota, CPUPeriod: period, CPUShares: shares, MemoryLimit: mem,
		TTY: c.TTY, SandboxPID: sb.PID, NetNS: sb.NetNSPath(), HostNetwork: pod.Spec.HostNetwork, SandboxID: sb.ID, LogPath: logPath,
	})
	if err != nil {
		return fail("CreateContainerError", err)
	}
	m.rec.Eventf(pod, api.EventTypeNormal, "Created", "Created container: %s", c.Name)
	if err := m.rt.StartContainer(ctx, id); err != nil {
		_ = m.rt.RemoveContainer(ctx, id)
		return fail("RunContainerError", err)
	}
	m.log.Info("container started", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "restartCount", restartCount,
		"took", time.Since(t0).Round(time.Millisecond))
	m.rec.Eventf(pod, api.EventTypeNormal, "Started", "Started container %s", c.Name)
	w.setWaiting(c.Name, nil)
	// Keep the newest dead instance for lastState; remove older ones.
	for i, o := range old {
		if i > 0 {
			_ = m.rt.RemoveContainer(ctx, o.ID)
		}
	}
	return 0
}

// ensureImage applies the pull policy; on failure it records
// ErrImagePull/ImagePullBackOff and says when to retry.
func (m *Manager) ensureImage(ctx context.Context, w *worker, pod *api.Pod, c *api.Container) (string, time.Duration, error) {
	ref, err := runtime.NormalizeImage(c.Image)
	if err != nil {
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "InvalidImageName", Message: err.Error()})
		m.rec.Eventf(pod, api.EventTypeWarning, "InspectFailed", "Failed to apply default image tag %q: %v", c.Image, err)
		return "", 10 * retrySoon, err
	}
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = api.PullIfNotPresent
		if runtime.IsLatest(c.Image) {
			policy = api.PullAlways
		}
	}
	_, present, err := m.rt.ImagePresent(ctx, ref)
	if err != nil {
		return "", 2 * retrySoon, err
	}
	switch {
	case policy == api.PullNever && !present:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: msg})
		m.rec.Event(pod, api.EventTypeWarning, "ErrImageNeverPull", msg)
		return "", 10 * retrySoon, errors.New(msg)
	case policy != api.PullAlways && present:
		m.rec.Eventf(pod, api.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
		return ref, 0, nil
	}
	key := "pull/" + string(pod.UID) + "/" + c.Image
	if in, left := m.backoff.InBackoffSince(key, w.pullFailedAt(c.Name)); in {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: msg})
		m.rec.Event(pod, api.EventTypeNormal, "BackOff", msg)
		m.rec.Event(pod, api.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
		return "", left, errors.New(msg)
	}
	m.rec.Eventf(pod, api.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	start := time.Now()
	_, size, err := m.rt.PullImage(ctx, ref)
	if err != nil {
		now := time.Now()
		w.setPullFailed(c.Name, now)
		m.backoff.Next(key, now)
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		m.log.Warn("pull image", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "image", c.Image, "err", err)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "ErrImagePull", Message: msg})
		m.rec.Event(pod, api.EventTypeWarning, "Failed", msg)
		m.rec.Event(pod, api.EventTypeWarning, "Failed", "Error: ErrImagePull")
		return "", m.backoff.Get(key), err
	}
	m.backoff.Reset(key)
	d := time.Since(start).Round(time.Millisecond)
	m.rec.Eventf(pod, api.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.", c.Image, d, d, size)
	return ref, 0, nil
}

func (m *Manager) createSandbox(ctx context.Context, pod *api.Pod) (runtime.Container, error) {
	t0 := time.Now()
	sb, err := m.rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: string(pod.UID), PodNamespace: pod.Namespace, PodName: pod.Name,
		Hostname: hostname(pod), HostNetwork: pod.Spec.HostNetwork})
	if err != nil {
		return runtime.Container{}, err
	}
	ip := ""
	tSandbox := time.Since(t0)
	if !pod.Spec.HostNetwork {
		np := network.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), SandboxID: sb.ID, NetNS: sb.NetNSPath(), Ports: hostPorts(pod)}
		ip, err = m.net.SetUp(ctx, np)
		if err != nil {
			_ = m.net.TearDown(ctx, np)
			_ = m.rt.RemoveContainer(ctx, sb.ID)
			return runtime.Container{}, err
		}
	} else {
		ip = m.hostIP()
	}
	m.log.Info("pod sandbox ready", "pod", pod.Namespace+"/"+pod.Name, "sandbox", sb.ID[:12], "podIP", ip,
		"sandboxTook", tSandbox.Round(time.Millisecond), "networkTook", (time.Since(t0) - tSandbox).Round(time.Millisecond))
	if err := m.rt.SetLabels(ctx, sb.ID, map[string]string{runtime.LabelPodIP: ip}); err != nil {
		return runtime.Container{}, err
	}
	sb.PodIP = ip
	if err := m.writeEtcFiles(pod, ip); err != nil {
		return runtime.Container{}, err
	}
	return sb, nil
}

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
			out = append(out, network.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: lower(proto), HostIP: p.HostIP})
		}
	}
	return out
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// killPod stops the pod's running app containers in parallel with grace;
// sandboxes are left to the caller (their network is torn down first).
func (m *Manager) killPod(ctx context.Context, pod *api.Pod, cs []runtime.Container, grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range cs {
		if c.Kind != runtime.KindContainer || c.State != runtime.StateRunning {
			continue
		}
		m.log.Info("killing container", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "grace", grace)
		m.rec.Eventf(pod, api.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
		wg.Go(func() {
			if err := m.rt.StopContainer(ctx, c.ID, grace); err != nil {
				m.log.Warn("stop container", "container", c.ID, "err", err)
			}
		})
	}
	wg.Wait()
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
	m.rt.RemovePodCgroups(uid)
	_ = os.RemoveAll(m.podDir(uid))
}

// syncProbes starts and stops the probe workers of running containers.
func (m *Manager) syncProbes(pod *api.Pod, cs []runtime.Container, st api.PodStatus) {
	running := map[string]probes.Running{}
	for _, c := range pod.Spec.Containers {
		inst := instances(cs, c.Name, false)
		if len(inst) > 0 && inst[0].State == runtime.StateRunning {
			running[c.Name] = probes.Running{ContainerID: inst[0].ID, StartedAt: inst[0].StartedAt}
		}
	}
	m.probes.Sync(pod, st.PodIP, running)
}
