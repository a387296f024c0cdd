package pods

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// initContainers is the second step: the init containers in order, each to
// completion, a sidecar until it is started (see sidecar.go). True once all
// are done.
func (s *podSync) initContainers(ctx context.Context) bool {
	done := initialized(s.pod, s.cs)
	for i := range s.pod.Spec.InitContainers {
		c := &s.pod.Spec.InitContainers[i]
		if isSidecar(c) {
			if !s.sidecar(ctx, c) && !done {
				return false
			}
			continue
		}
		inst := instances(s.cs, c.Name, true)
		if len(inst) == 0 {
			s.after(s.start(ctx, c, true, 0, nil))
			return false
		}
		last := inst[0]
		switch last.State {
		case runtime.StateRunning:
			if d, resized := s.resizeRunning(ctx, c, inst); resized {
				s.after(d)
			}
			return false
		case runtime.StateCreated, runtime.StateUnknown:
			_ = s.m.rt.RemoveContainer(ctx, last.ID)
			s.after(retrySoon)
			return false
		}
		if last.ExitCode == 0 {
			continue
		}
		if s.pod.Spec.RestartPolicy != api.RestartPolicyNever {
			s.after(s.restart(ctx, c, true, inst))
		}
		return false
	}
	return true
}

// containers is the last step: every app container, in parallel, started,
// restarted per the restart policy, or killed when its spec changed or a
// liveness or startup probe failed.
func (s *podSync) containers(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range s.pod.Spec.Containers {
		c := &s.pod.Spec.Containers[i]
		inst := instances(s.cs, c.Name, false)
		wg.Go(func() { s.after(s.container(ctx, c, inst)) })
	}
	wg.Wait()
}

// container syncs one app container whose instances are inst (newest
// first); it returns when to look again.
func (s *podSync) container(ctx context.Context, c *api.Container, inst []*runtime.Container) time.Duration {
	m, pod := s.m, s.pod
	if len(inst) == 0 {
		return s.start(ctx, c, false, 0, nil)
	}
	last := inst[0]
	switch last.State {
	case runtime.StateRunning:
		if reason := m.probeRestartReason(pod, c, last); reason != "" {
			s.restartRunning(ctx, c, inst, reason)
			return retrySoon
		}
		d, _ := s.resizeRunning(ctx, c, inst)
		return d
	case runtime.StateCreated, runtime.StateUnknown:
		_ = m.rt.RemoveContainer(ctx, last.ID)
		return retrySoon
	}
	if !shouldRestart(pod.Spec.RestartPolicy, last.ExitCode) {
		return 0
	}
	return s.restart(ctx, c, false, inst)
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
func (s *podSync) restart(ctx context.Context, c *api.Container, init bool, inst []*runtime.Container) time.Duration {
	m, pod := s.m, s.pod
	last := inst[0]
	key := backoffKey(pod, c)
	finished := last.FinishedAt
	if finished.IsZero() {
		finished = time.Now()
	}
	if in, left := m.backoff.InBackoffSince(key, finished); in {
		delay := m.backoff.Get(key)
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay.Round(time.Second), c.Name, podDesc(pod))
		if old := s.w.getWaiting(c.Name); old == nil || old.Reason != "CrashLoopBackOff" || old.Message != msg {
			s.log.Info("back-off restarting failed container", "container", c.Name,
				"backoff", delay.Round(time.Second), "exitCode", last.ExitCode, "reason", last.Reason)
			m.rec.Eventf(pod, api.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", c.Name, podDesc(pod))
		}
		s.w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg})
		return left
	}
	m.backoff.Next(key, finished)
	return s.start(ctx, c, init, last.RestartCount+1, inst)
}

func podDesc(pod *api.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// start pulls the image and creates and starts one instance of c in the
// pod's sandbox; of the old instances only the newest stays (for
// lastState). It returns when to look again.
func (s *podSync) start(ctx context.Context, c *api.Container, init bool, restartCount int, old []*runtime.Container) time.Duration {
	return s.startContainer(ctx, c, init, restartCount, old, ephemeral{})
}

// ephemeral says how an ephemeral container starts.
type ephemeral struct {
	is bool
	// targetPID is the target container's process, whose PID namespace
	// the ephemeral container joins.
	targetPID uint32
}

// ephemeralContainers starts each ephemeral container once, in the pod's
// sandbox (and with targetContainerName, in that container's PID
// namespace); they are never restarted.
func (s *podSync) ephemeralContainers(ctx context.Context) {
	for i := range s.pod.Spec.EphemeralContainers {
		ec := &s.pod.Spec.EphemeralContainers[i]
		if len(instances(s.cs, ec.Name, false)) > 0 {
			continue
		}
		e := ephemeral{is: true}
		if ec.TargetContainerName != "" {
			t := instances(s.cs, ec.TargetContainerName, false)
			if len(t) == 0 || t[0].State != runtime.StateRunning || t[0].PID == 0 {
				s.after(retrySoon) // the target is not running yet
				continue
			}
			e.targetPID = t[0].PID
		}
		s.after(s.startContainer(ctx, &ec.Container, false, 0, nil, e))
	}
}

func (s *podSync) startContainer(ctx context.Context, c *api.Container, init bool, restartCount int, old []*runtime.Container, eph ephemeral) time.Duration {
	m, w, pod, sb := s.m, s.w, s.pod, s.sb
	ref, wait, err := s.image(ctx, c)
	if err != nil {
		return wait
	}
	fail := func(reason string, err error) time.Duration {
		s.log.Warn("start container", "container", c.Name, "reason", reason, "err", err)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: reason, Message: err.Error()})
		m.rec.Eventf(pod, api.EventTypeWarning, "Failed", "Error: %v", err)
		return 2 * retrySoon
	}
	vols, err := s.setUpVolumes(ctx)
	if err != nil {
		s.mountFailed(err)
		return 2 * retrySoon
	}
	// The environment first: subPathExpr expands from it.
	env, err := m.env(ctx, pod, c, m.currentPodIP(pod, sb.PodIP))
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	mounts, err := m.mounts(pod, c, vols, env)
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	if restartCount == 0 && len(old) == 0 && !eph.is {
		// As kube's kubelet: a runtime that lost the previous instances
		// (its state cleared by a reboot) leaves their logs, N.log; the
		// count goes on from the highest, not to overwrite them.
		restartCount = restartCountFromLogs(LogDir(m.opts.LogsDir, pod), c.Name)
	}
	tlog, err := m.terminationLogMount(pod, c, restartCount)
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	mounts = append(mounts, tlog...)
	imgUser, err := m.rt.ImageUser(ctx, ref)
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	sec, err := m.containerSecurity(pod, c, imgUser)
	if err != nil {
		return fail("CreateContainerConfigError", err)
	}
	res := cgroupResources(c.Resources)
	if !eph.is {
		res = cgroupResources(s.allocatedFor(c))
	}
	logPath := LogPath(m.opts.LogsDir, pod, c.Name, restartCount)
	_ = os.Remove(logPath) // a stale file of a previous pod incarnation
	t0 := time.Now()
	id, err := m.rt.CreateContainer(ctx, runtime.ContainerConfig{
		PodUID: string(pod.UID), PodNamespace: pod.Namespace, PodName: pod.Name, Name: c.Name, Init: init,
		RestartCount: restartCount, Hash: containerHash(c), Image: c.Image, ImageRef: ref,
		Command: expandAll(c.Command, env), Args: expandAll(c.Args, env), Env: env, WorkingDir: c.WorkingDir,
		Hostname: hostname(pod), Mounts: mounts, Resources: res,
		TTY: c.TTY, Stdin: c.Stdin, StdinOnce: c.StdinOnce, Ephemeral: eph.is, TargetPID: eph.targetPID, SandboxPID: sb.PID, NetNS: sb.NetNSPath(), HostNetwork: pod.Spec.HostNetwork, SandboxID: sb.ID, LogPath: logPath,
		Security: sec, Sysctls: podSysctls(pod),
		Annotations: containerAnnotations(pod, c), PodLabels: pod.Labels, PodAnnotations: pod.Annotations,
	})
	if err != nil {
		return fail("CreateContainerError", err)
	}
	m.rec.Eventf(pod, api.EventTypeNormal, "Created", "Created container: %s", c.Name)
	if err := m.rt.StartContainer(ctx, id); err != nil {
		_ = m.rt.RemoveContainer(ctx, id)
		return fail("RunContainerError", err)
	}
	s.log.Info("container started", "container", c.Name, "restartCount", restartCount, "took", time.Since(t0).Round(time.Millisecond))
	m.rec.Eventf(pod, api.EventTypeNormal, "Started", "Started container %s", c.Name)
	w.setWaiting(c.Name, nil)
	// Keep the newest dead instance for lastState; remove older ones.
	for i, o := range old {
		if i > 0 {
			_ = m.rt.RemoveContainer(ctx, o.ID)
		}
	}
	// The container is not reported Running before its postStart hook
	// returns: this pod's status is written after this pass.
	if !eph.is && !s.postStart(ctx, c, id) {
		return 2 * retrySoon
	}
	return 0
}

// restartCountFromLogs is one more than the highest N of the container's
// N.log files (or rotated N.log.*) under the pod's log directory, 0 when
// there are none: kube's calcRestartCountByLogDir.
func restartCountFromLogs(podLogDir, name string) int {
	entries, err := os.ReadDir(filepath.Join(podLogDir, name))
	if err != nil {
		return 0
	}
	next := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		num, rest, ok := strings.Cut(e.Name(), ".log")
		if !ok || (rest != "" && !strings.HasPrefix(rest, ".")) {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			continue
		}
		next = max(next, n+1)
	}
	return next
}

// containerAnnotations are kube's annotations of a container beyond its
// hash and restart count (kuberuntime's newContainerAnnotations): the
// termination message path and policy, the pod's grace periods, the
// preStop handler and the ports as JSON.
func containerAnnotations(pod *api.Pod, c *api.Container) map[string]string {
	a := map[string]string{
		"io.kubernetes.container.terminationMessagePath":   c.TerminationMessagePath,
		"io.kubernetes.container.terminationMessagePolicy": string(c.TerminationMessagePolicy),
	}
	if pod.DeletionGracePeriodSeconds != nil {
		a["io.kubernetes.pod.deletionGracePeriod"] = strconv.FormatInt(*pod.DeletionGracePeriodSeconds, 10)
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		a["io.kubernetes.pod.terminationGracePeriod"] = strconv.FormatInt(*pod.Spec.TerminationGracePeriodSeconds, 10)
	}
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		if b, err := json.Marshal(c.Lifecycle.PreStop); err == nil {
			a["io.kubernetes.container.preStopHandler"] = string(b)
		}
	}
	if len(c.Ports) > 0 {
		if b, err := json.Marshal(c.Ports); err == nil {
			a["io.kubernetes.container.ports"] = string(b)
		}
	}
	return a
}
