package pods

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/staticpods"
)

const retrySoon = time.Second

func (m *Manager) podByUID(uid string) *api.Pod {
	if p := m.staticPod(uid); p != nil {
		return p
	}
	if m.pods == nil {
		return nil
	}
	for _, p := range m.pods.Store().List() {
		if staticpods.IsMirror(p) {
			continue
		}
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
		if gone := m.removedStaticPod(w.uid); gone != nil {
			m.terminateRemovedStatic(ctx, w, gone)
			m.forgetAdmission(w.uid)
			m.kickStaticNamed(gone.Namespace, gone.Name)
			return 0, true
		}
		m.removeGonePod(ctx, w.uid, cs)
		m.forgetAdmission(w.uid)
		return 0, true
	}
	if staticpods.IsStatic(pod) {
		if m.startBlocked(pod) {
			m.log.Info("static pod waits for the previous pod of its name to stop", "pod", pod.Namespace+"/"+pod.Name)
			return retrySoon, false
		}
		m.syncMirror(ctx, pod)
	}
	w.observe(pod)
	s := &podSync{m: m, w: w, pod: pod, cs: cs, log: m.log.With("pod", pod.Namespace+"/"+pod.Name)}
	if pod.DeletionTimestamp != nil {
		return s.terminate(ctx)
	}
	return s.run(ctx)
}

// observe starts the worker's bookkeeping on its first sight of the pod.
func (w *worker) observe(pod *api.Pod) {
	if !w.firstSeen.IsZero() {
		return
	}
	w.firstSeen = time.Now()
	w.waiting = map[string]*api.ContainerStateWaiting{}
	w.backfillResizeConditions(pod)
	if pod.Status.StartTime != nil {
		w.startTime = pod.Status.StartTime
	} else {
		t := api.Now()
		w.startTime = &t
	}
}

// podSync is one sync pass of one pod, as the kubelet's SyncPod: from what
// the runtime holds for the pod it takes the steps to the spec in
// Kubernetes' order — sandbox (network and volumes first), init
// containers, containers — then reports the status. Each step says whether
// the next may run; s.next says when to look again.
type podSync struct {
	m   *Manager
	w   *worker
	pod *api.Pod
	// cs are the pod's sandboxes and containers as the runtime lists them.
	cs  []runtime.Container
	log *slog.Logger
	// sb is the running sandbox, once there is one.
	sb *runtime.Container
	// release frees the pod start slot the sandbox step took, if any.
	release func()

	// mu guards what the parallel container steps share.
	mu sync.Mutex
	// volumes are the host paths of the pod's volumes by name, once set up.
	volumes map[string]string
	// alloc is the resources the kubelet allocated to the pod's
	// containers (resize.go), once admitted.
	alloc allocation
	// next is the soonest time a step asked to look again (0: the resync
	// period).
	next time.Duration
}

// run is a pass over a pod that should be running.
func (s *podSync) run(ctx context.Context) (time.Duration, bool) {
	if !s.finished() && !s.enforceEviction(ctx) && !s.enforceActiveDeadline(ctx) && s.admit(ctx) {
		s.allocate(ctx)
		if !s.sandbox(ctx) {
			// Not ready for containers yet.
		} else if hasSidecars(s.pod) && s.appsDone() {
			// The app containers are done for good: the sidecars stop
			// and the pod turns Succeeded or Failed.
			s.m.stopSidecars(ctx, s.pod, s.cs, s.m.gracePeriod(s.pod))
		} else if s.initContainers(ctx) {
			s.containers(ctx)
			s.ephemeralContainers(ctx)
		}
	}
	if s.release != nil {
		s.release()
	}
	return s.report(ctx)
}

// finished: a pod in a terminal phase runs nothing again.
func (s *podSync) finished() bool {
	return isTerminal(s.pod.Status.Phase) || s.w.terminal != ""
}

// after asks for another look within d (d <= 0 asks nothing).
func (s *podSync) after(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d > 0 && (s.next == 0 || d < s.next) {
		s.next = d
	}
}

// report computes the pod's status from the runtime's view, keeps the
// probes in line with the running containers, releases the sandbox of a
// finished pod and writes the status when it changed.
func (s *podSync) report(ctx context.Context) (time.Duration, bool) {
	m, w, pod := s.m, s.w, s.pod
	cs, err := m.rt.ListPodContainers(ctx, w.uid)
	if err != nil {
		return 2 * retrySoon, false
	}
	alloc := s.alloc
	if alloc == nil {
		alloc = m.allocated(w.uid)
	}
	m.trackResize(w, pod, alloc, cs, s.finished() || pod.DeletionTimestamp != nil)
	status := m.computeStatus(w, pod, cs, alloc)
	if w.deadlineExceeded {
		deadlineStatus(&status)
	}
	if w.evicted != nil {
		evictedStatus(&status, w.evicted)
	}
	m.syncProbes(pod, cs, status)
	if isTerminal(status.Phase) {
		w.terminal = status.Phase
		m.admissionFinished(w.uid)
		if runningSandbox(cs) != nil {
			// A finished pod keeps its containers (for logs) but not its
			// sandbox or network.
			m.stopSandboxes(ctx, pod, cs)
		}
	}
	if status.Phase == api.PodRunning && !w.observed {
		w.observed = true
		m.metrics.observeStart(time.Since(w.firstSeen))
	}
	if err := m.writeStatus(ctx, w, pod, status); err != nil {
		s.log.Warn("update pod status", "err", err)
		return retrySoon, false
	}
	if !isTerminal(status.Phase) && pod.DeletionTimestamp == nil {
		s.removeReplacedSandboxes(ctx, cs)
	}
	return s.next, false
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
