package probes

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/events"
)

// Kind is the kind of a probe.
type Kind string

// Probe kinds.
const (
	Liveness  Kind = "Liveness"
	Readiness Kind = "Readiness"
	Startup   Kind = "Startup"
)

// Result is a probe's current verdict.
type Result int

// Results; Unknown is before the first verdict.
const (
	Unknown Result = iota
	Success
	Failure
)

type key struct {
	podUID, container string
	kind              Kind
}

// Manager runs the probe workers of the running containers of every pod.
type Manager struct {
	ex       Execer
	rec      events.Recorder
	log      *slog.Logger
	onChange func(podUID string)

	mu      sync.Mutex
	workers map[key]*worker
	ctx     context.Context
}

// NewManager returns a manager probing through ex; onChange is called when
// a result changes (the pod's worker should resync).
func NewManager(ctx context.Context, ex Execer, rec events.Recorder, log *slog.Logger, onChange func(podUID string)) *Manager {
	if log == nil {
		log = slog.Default()
	}
	return &Manager{ex: ex, rec: rec, log: log, onChange: onChange, workers: map[key]*worker{}, ctx: ctx}
}

// Running describes one running container for Sync.
type Running struct {
	ContainerID string
	StartedAt   time.Time
}

// Sync makes the workers match the pod's running containers: a worker per
// probe of each running container, restarted when the container changes.
func (m *Manager) Sync(pod *api.Pod, podIP string, running map[string]Running) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[key]bool{}
	// Sidecars (init containers with restartPolicy Always) are probed as
	// app containers; container names are unique across both lists.
	var probed []*api.Container
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways {
			probed = append(probed, c)
		}
	}
	for i := range pod.Spec.Containers {
		probed = append(probed, &pod.Spec.Containers[i])
	}
	for _, c := range probed {
		r, ok := running[c.Name]
		if !ok {
			continue
		}
		for kind, p := range map[Kind]*api.Probe{Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe, Startup: c.StartupProbe} {
			if p == nil {
				continue
			}
			k := key{string(pod.UID), c.Name, kind}
			want[k] = true
			if w := m.workers[k]; w != nil {
				if w.containerID == r.ContainerID {
					continue
				}
				w.stop()
			}
			w := &worker{m: m, key: k, pod: pod, container: c, probe: p, podIP: podIP,
				containerID: r.ContainerID, startedAt: r.StartedAt, hasStartup: c.StartupProbe != nil}
			w.ctx, w.cancel = context.WithCancel(m.ctx)
			m.workers[k] = w
			go w.run()
		}
	}
	for k, w := range m.workers {
		if k.podUID == string(pod.UID) && !want[k] {
			w.stop()
			delete(m.workers, k)
		}
	}
}

// RemovePod stops every worker of the pod.
func (m *Manager) RemovePod(podUID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if k.podUID == podUID {
			w.stop()
			delete(m.workers, k)
		}
	}
}

// Result is the current result of a probe for the container instance
// containerID; Unknown if no such probe runs for it.
func (m *Manager) Result(podUID, container, containerID string, kind Kind) Result {
	m.mu.Lock()
	w := m.workers[key{podUID, container, kind}]
	m.mu.Unlock()
	if w == nil || w.containerID != containerID {
		return Unknown
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.result
}

type worker struct {
	m           *Manager
	key         key
	pod         *api.Pod
	container   *api.Container
	probe       *api.Probe
	podIP       string
	containerID string
	startedAt   time.Time
	hasStartup  bool
	ctx         context.Context
	cancel      context.CancelFunc

	mu               sync.Mutex
	result           Result
	successes, fails int32
}

func (w *worker) stop() { w.cancel() }

func orDefault(v, d int32) int32 {
	if v <= 0 {
		return d
	}
	return v
}

func (w *worker) run() {
	period := time.Duration(orDefault(w.probe.PeriodSeconds, 10)) * time.Second
	delay := time.Until(w.startedAt.Add(time.Duration(w.probe.InitialDelaySeconds) * time.Second))
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-w.ctx.Done():
			return
		}
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if !w.once() {
			return
		}
		select {
		case <-t.C:
		case <-w.ctx.Done():
			return
		}
	}
}

// once runs the probe and updates the result; false stops the worker (a
// failed liveness or startup probe waits for the container to be replaced).
func (w *worker) once() bool {
	if w.key.kind != Startup && w.hasStartup &&
		w.m.Result(w.key.podUID, w.key.container, w.containerID, Startup) != Success {
		return true
	}
	if w.key.kind == Startup {
		w.mu.Lock()
		done := w.result == Success
		w.mu.Unlock()
		if done {
			return true
		}
	}
	err := Run(w.ctx, w.m.ex, w.probe, Target{PodIP: w.podIP, ContainerID: w.containerID, Container: w.container})
	if w.ctx.Err() != nil {
		return false
	}
	success, failure := orDefault(w.probe.SuccessThreshold, 1), orDefault(w.probe.FailureThreshold, 3)
	w.mu.Lock()
	old := w.result
	if err == nil {
		w.fails = 0
		w.successes++
		if w.successes >= success || old == Unknown && w.key.kind != Readiness {
			w.result = Success
		}
	} else {
		w.successes = 0
		w.fails++
		if w.fails >= failure {
			w.result = Failure
		}
	}
	res := w.result
	w.mu.Unlock()
	if err != nil && w.m.rec != nil {
		w.m.rec.Eventf(w.pod, api.EventTypeWarning, "Unhealthy", "%s probe failed: %s", w.key.kind, err.Error())
	}
	if res != old && w.m.onChange != nil {
		w.m.onChange(w.key.podUID)
	}
	return !(res == Failure && w.key.kind != Readiness)
}
