package queue

import (
	"sync"
	"sync/atomic"

	"github.com/minik8s/minik8s/api"
)

// Nominator remembers the node each pending pod was nominated to (by a
// preemption, or by status.nominatedNodeName), as kube-scheduler's
// nominator: later scheduling cycles count the nominated pods of equal or
// higher priority on their node, so a lower-priority pod does not take the
// room a preemption freed. It is safe for concurrent use.
type Nominator struct {
	mu     sync.RWMutex
	byNode map[string][]*api.Pod
	toNode map[api.UID]string
	// count mirrors len(toNode) for the lock-free fast path of the filters,
	// which ask about every node in every cycle.
	count atomic.Int64
}

// NewNominator returns an empty nominator.
func NewNominator() *Nominator {
	return &Nominator{byNode: map[string][]*api.Pod{}, toNode: map[api.UID]string{}}
}

// AddNominatedPod records pod as nominated to node; an empty node takes
// the nomination from the pod's status.nominatedNodeName (and records
// nothing when that is empty too). Any previous nomination is replaced.
// Callers check the pod is still pending.
func (n *Nominator) AddNominatedPod(pod *api.Pod, node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
	if node == "" {
		node = pod.Status.NominatedNodeName
	}
	n.addLocked(pod, node)
}

func (n *Nominator) addLocked(pod *api.Pod, node string) {
	if node == "" {
		return
	}
	n.toNode[pod.UID] = node
	n.byNode[node] = append(n.byNode[node], pod)
	n.count.Store(int64(len(n.toNode)))
}

// UpdateNominatedPod replaces a pending pod's object. A nomination the
// scheduler made in memory survives updates that carry no nomination of
// their own (the status patch may not have landed yet).
func (n *Nominator) UpdateNominatedPod(old, pod *api.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	node := pod.Status.NominatedNodeName
	if old.Status.NominatedNodeName == "" && node == "" {
		node = n.toNode[old.UID]
	}
	n.deleteLocked(old)
	n.addLocked(pod, node)
}

// DeleteNominatedPodIfExists forgets pod's nomination (it was bound,
// deleted, or its preemption found nothing).
func (n *Nominator) DeleteNominatedPodIfExists(pod *api.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
}

func (n *Nominator) deleteLocked(pod *api.Pod) {
	node, ok := n.toNode[pod.UID]
	if !ok {
		return
	}
	delete(n.toNode, pod.UID)
	n.count.Store(int64(len(n.toNode)))
	pods := n.byNode[node]
	for i, p := range pods {
		if p.UID == pod.UID {
			pods = append(pods[:i:i], pods[i+1:]...)
			break
		}
	}
	if len(pods) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = pods
	}
}

// NominatedPodsForNode returns the pods nominated to node (a copy of the
// list; the pods themselves are shared and must not be changed).
func (n *Nominator) NominatedPodsForNode(node string) []*api.Pod {
	if n.count.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]*api.Pod(nil), n.byNode[node]...)
}

// NominatedNode returns the node pod is nominated to ("" for none).
func (n *Nominator) NominatedNode(pod *api.Pod) string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.toNode[pod.UID]
}
