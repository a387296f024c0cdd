package pods

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/minik8s/minik8s/api"
)

// evictedReason is the reason of an evicted pod's status (kube's
// eviction.Reason).
const evictedReason = "Evicted"

// evictionOrder is the eviction manager's order to stop a pod for good.
type evictionOrder struct {
	message string
	grace   time.Duration
}

// ActivePods are the node's pods that may still run: not finished, not
// being deleted (kube's filterOutInactivePods, from the pod cache).
func (m *Manager) ActivePods() []*api.Pod {
	var out []*api.Pod
	for _, p := range m.allPods() {
		if p.DeletionTimestamp != nil || isTerminal(p.Status.Phase) {
			continue
		}
		m.mu.Lock()
		w := m.workers[string(p.UID)]
		m.mu.Unlock()
		if w != nil && w.evictionOrdered() {
			continue
		}
		out = append(out, p)
	}
	return out
}

// EmptyDirPath is the host directory of the pod's emptyDir volume.
func (m *Manager) EmptyDirPath(pod *api.Pod, volume string) string {
	return filepath.Join(m.podDir(string(pod.UID)), "volumes", emptyDirPlugin, volume)
}

// EvictPod has the pod's worker stop its containers within grace and
// mark it Failed with reason Evicted and message, as kube's killPodNow
// with the eviction manager's status function. The worker does it on its
// next pass, which this starts.
func (m *Manager) EvictPod(pod *api.Pod, grace time.Duration, message string) error {
	m.mu.Lock()
	w := m.workers[string(pod.UID)]
	m.mu.Unlock()
	if w == nil {
		return fmt.Errorf("pod %s/%s has no worker on this node", pod.Namespace, pod.Name)
	}
	w.mu.Lock()
	if w.evictOrder == nil {
		w.evictOrder = &evictionOrder{message: message, grace: grace}
	}
	w.mu.Unlock()
	m.kick(string(pod.UID))
	return nil
}

func (w *worker) evictionOrdered() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.evictOrder != nil
}

// enforceEviction stops a pod the eviction manager evicted: its
// containers killed within the eviction's grace period, and from then on
// the status Failed with reason Evicted (report sets it). True when the
// pod must not run.
func (s *podSync) enforceEviction(ctx context.Context) bool {
	w := s.w
	if w.evicted != nil {
		return true
	}
	w.mu.Lock()
	order := w.evictOrder
	w.mu.Unlock()
	if order == nil {
		return false
	}
	w.evicted = order
	w.terminal = api.PodFailed
	s.log.Info("evicting the pod", "message", order.message)
	s.m.killPod(ctx, s.pod, s.cs, order.grace)
	return true
}

// evictedStatus marks a status Failed for the eviction, keeping what it
// says of the containers.
func evictedStatus(st *api.PodStatus, e *evictionOrder) {
	st.Phase = api.PodFailed
	st.Reason = evictedReason
	st.Message = e.message
}
