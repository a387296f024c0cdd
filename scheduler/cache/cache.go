package cache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// DefaultAssumedPodTTL is how long an assumed pod whose binding returned
// may wait for the informer to confirm it before the cache drops it (the
// binding was lost, or its watch event never came).
const DefaultAssumedPodTTL = 30 * time.Second

type podState struct {
	pod *api.Pod
	// assumed pods are counted on their node before the informer confirms
	// the binding; deadline is set once the binding returned.
	assumed  bool
	deadline time.Time
	finished bool
}

// Cache holds NodeInfos built from the informers' nodes and assigned pods
// plus the scheduler's assumed pods. It is safe for concurrent use.
type Cache struct {
	ttl time.Duration
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	nodes map[string]*framework.NodeInfo
	// order lists node names in the order they were added, so snapshots
	// (and the round-robin start of each cycle) are stable.
	order     []string
	orderIdx  map[string]int
	pods      map[api.UID]*podState
	dirty     map[string]struct{}
	listDirty bool
	// last is the snapshot dirty is relative to; another one gets a full copy.
	last *Snapshot
}

// New returns an empty cache; assumed pods expire ttl after their binding
// finished (zero means DefaultAssumedPodTTL).
func New(ttl time.Duration, log *slog.Logger) *Cache {
	if ttl <= 0 {
		ttl = DefaultAssumedPodTTL
	}
	if log == nil {
		log = slog.Default()
	}
	return &Cache{
		ttl: ttl, log: log, now: time.Now,
		nodes:    map[string]*framework.NodeInfo{},
		orderIdx: map[string]int{},
		pods:     map[api.UID]*podState{},
		dirty:    map[string]struct{}{},
	}
}

// Run drops expired assumed pods every period until ctx ends.
func (c *Cache) Run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.CleanupExpiredAssumedPods()
		}
	}
}

// nodeInfo returns the NodeInfo for name, creating an empty one (pods may
// arrive before their node). Callers hold mu.
func (c *Cache) nodeInfo(name string) *framework.NodeInfo {
	ni, ok := c.nodes[name]
	if !ok {
		ni = framework.NewNodeInfo()
		c.nodes[name] = ni
	}
	c.dirty[name] = struct{}{}
	return ni
}

func (c *Cache) addPodLocked(pod *api.Pod) {
	c.nodeInfo(pod.Spec.NodeName).AddPodInfo(framework.NewPodInfo(pod))
}

func (c *Cache) removePodLocked(pod *api.Pod) error {
	ni, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s/%s not in cache", pod.Spec.NodeName, pod.Namespace, pod.Name)
	}
	if err := ni.RemovePod(pod); err != nil {
		return err
	}
	c.dirty[pod.Spec.NodeName] = struct{}{}
	c.dropIfEmptyLocked(pod.Spec.NodeName, ni)
	return nil
}

// dropIfEmptyLocked forgets a NodeInfo whose node was deleted once its last
// pod left.
func (c *Cache) dropIfEmptyLocked(name string, ni *framework.NodeInfo) {
	if ni.Node() == nil && len(ni.Pods) == 0 {
		delete(c.nodes, name)
		c.dirty[name] = struct{}{}
	}
}

// AssumePod counts pod (with spec.nodeName set to the chosen node) on its
// node at once, before the binding is sent.
func (c *Cache) AssumePod(pod *api.Pod) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("assume pod %s/%s: no node name", pod.Namespace, pod.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("assume pod %s/%s: already in the cache", pod.Namespace, pod.Name)
	}
	c.addPodLocked(pod)
	c.pods[pod.UID] = &podState{pod: pod, assumed: true}
	return nil
}

// FinishBinding starts the expiry clock of an assumed pod whose binding
// returned successfully.
func (c *Cache) FinishBinding(pod *api.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok && ps.assumed {
		ps.finished = true
		ps.deadline = c.now().Add(c.ttl)
	}
}

// ForgetPod undoes AssumePod (the binding failed).
func (c *Cache) ForgetPod(pod *api.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok || !ps.assumed {
		return fmt.Errorf("forget pod %s/%s: not assumed", pod.Namespace, pod.Name)
	}
	if err := c.removePodLocked(ps.pod); err != nil {
		return err
	}
	delete(c.pods, pod.UID)
	return nil
}

// IsAssumed reports whether pod is assumed and not yet confirmed.
func (c *Cache) IsAssumed(pod *api.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	return ok && ps.assumed
}

// AddPod records an assigned pod seen by the informer; an assumed pod is
// confirmed (and moved, should it have landed on another node).
func (c *Cache) AddPod(pod *api.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	switch {
	case ok && ps.assumed:
		if err := c.removePodLocked(ps.pod); err != nil {
			return err
		}
		c.addPodLocked(pod)
		c.pods[pod.UID] = &podState{pod: pod}
	case ok:
		// Added twice (a re-list): treat as an update.
		if err := c.removePodLocked(ps.pod); err != nil {
			return err
		}
		c.addPodLocked(pod)
		ps.pod = pod
	default:
		c.addPodLocked(pod)
		c.pods[pod.UID] = &podState{pod: pod}
	}
	return nil
}

// UpdatePod replaces an assigned pod's object.
func (c *Cache) UpdatePod(_, pod *api.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		c.addPodLocked(pod)
		c.pods[pod.UID] = &podState{pod: pod}
		return nil
	}
	if err := c.removePodLocked(ps.pod); err != nil {
		return err
	}
	c.addPodLocked(pod)
	c.pods[pod.UID] = &podState{pod: pod}
	return nil
}

// RemovePod forgets an assigned pod (deleted, or finished).
func (c *Cache) RemovePod(pod *api.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return nil
	}
	delete(c.pods, pod.UID)
	return c.removePodLocked(ps.pod)
}

// CleanupExpiredAssumedPods drops assumed pods whose binding finished more
// than the TTL ago without the informer confirming them.
func (c *Cache) CleanupExpiredAssumedPods() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for uid, ps := range c.pods {
		if !ps.assumed || !ps.finished || now.Before(ps.deadline) {
			continue
		}
		c.log.Warn("assumed pod expired: its binding was never confirmed", "pod", ps.pod.Namespace+"/"+ps.pod.Name, "node", ps.pod.Spec.NodeName)
		if err := c.removePodLocked(ps.pod); err != nil {
			c.log.Error("expire assumed pod", "pod", ps.pod.Namespace+"/"+ps.pod.Name, "err", err)
		}
		delete(c.pods, uid)
	}
}

// AddNode records a node.
func (c *Cache) AddNode(node *api.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni := c.nodeInfo(node.Name)
	if ni.Node() == nil {
		c.orderIdx[node.Name] = len(c.order)
		c.order = append(c.order, node.Name)
		c.listDirty = true
	}
	ni.SetNode(node)
}

// UpdateNode replaces a node's object.
func (c *Cache) UpdateNode(_, node *api.Node) { c.AddNode(node) }

// RemoveNode forgets a node; its NodeInfo stays while pods remain on it.
func (c *Cache) RemoveNode(node *api.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[node.Name]
	if !ok {
		return
	}
	ni.RemoveNode()
	c.dirty[node.Name] = struct{}{}
	if i, ok := c.orderIdx[node.Name]; ok {
		c.order = append(c.order[:i], c.order[i+1:]...)
		delete(c.orderIdx, node.Name)
		for j := i; j < len(c.order); j++ {
			c.orderIdx[c.order[j]] = j
		}
		c.listDirty = true
	}
	c.dropIfEmptyLocked(node.Name, ni)
}

// NodeCount returns the number of nodes with a Node object.
func (c *Cache) NodeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

// PodCount returns the number of pods (bound and assumed) in the cache.
func (c *Cache) PodCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

// UpdateSnapshot brings s up to date, copying only the nodes that changed
// since the last call (everything, for a snapshot not updated last).
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != s {
		c.last = s
		for name := range s.nodeInfoMap {
			c.dirty[name] = struct{}{}
		}
		for name := range c.nodes {
			c.dirty[name] = struct{}{}
		}
		c.listDirty = true
	}
	affinityChanged := false
	for name := range c.dirty {
		ni, ok := c.nodes[name]
		old, had := s.nodeInfoMap[name]
		if had && (len(old.PodsWithAffinity) > 0 || len(old.PodsWithRequiredAntiAffinity) > 0) {
			affinityChanged = true
		}
		if !ok {
			delete(s.nodeInfoMap, name)
			continue
		}
		if len(ni.PodsWithAffinity) > 0 || len(ni.PodsWithRequiredAntiAffinity) > 0 {
			affinityChanged = true
		}
		if had {
			if old.Generation != ni.Generation {
				// Copy in place: s.list holds this pointer.
				*old = *ni.Clone()
			}
		} else {
			s.nodeInfoMap[name] = ni.Clone()
		}
	}
	clear(c.dirty)
	if c.listDirty {
		s.list = s.list[:0]
		for _, name := range c.order {
			s.list = append(s.list, s.nodeInfoMap[name])
		}
		c.listDirty = false
		affinityChanged = true
	}
	if affinityChanged {
		s.withAffinity = s.withAffinity[:0]
		s.withRequiredAnti = s.withRequiredAnti[:0]
		for _, ni := range s.list {
			if len(ni.PodsWithAffinity) > 0 {
				s.withAffinity = append(s.withAffinity, ni)
			}
			if len(ni.PodsWithRequiredAntiAffinity) > 0 {
				s.withRequiredAnti = append(s.withRequiredAnti, ni)
			}
		}
	}
}

// Snapshot is the immutable view one scheduling cycle reads. Only
// Cache.UpdateSnapshot changes it, between cycles.
type Snapshot struct {
	nodeInfoMap      map[string]*framework.NodeInfo
	list             []*framework.NodeInfo
	withAffinity     []*framework.NodeInfo
	withRequiredAnti []*framework.NodeInfo
}

var _ framework.SharedLister = (*Snapshot)(nil)

// NewSnapshot returns an empty snapshot.
func NewSnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}}
}

// List implements framework.SharedLister.
func (s *Snapshot) List() []*framework.NodeInfo { return s.list }

// HavePodsWithAffinity implements framework.SharedLister.
func (s *Snapshot) HavePodsWithAffinity() []*framework.NodeInfo { return s.withAffinity }

// HavePodsWithRequiredAntiAffinity implements framework.SharedLister.
func (s *Snapshot) HavePodsWithRequiredAntiAffinity() []*framework.NodeInfo {
	return s.withRequiredAnti
}

// Get implements framework.SharedLister.
func (s *Snapshot) Get(name string) (*framework.NodeInfo, bool) {
	ni, ok := s.nodeInfoMap[name]
	return ni, ok
}
