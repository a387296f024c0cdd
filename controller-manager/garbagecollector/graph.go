package garbagecollector

import (
	"slices"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// node is one object of the graph.
type node struct {
	info       api.ResourceInfo
	namespace  string
	name       string
	uid        api.UID
	owners     []api.OwnerReference
	deleting   bool
	finalizers []string
}

func (n *node) hasFinalizer(f string) bool { return slices.Contains(n.finalizers, f) }

// deletingDependents is an owner in foreground deletion.
func (n *node) deletingDependents() bool {
	return n.deleting && n.hasFinalizer(api.FinalizerDeleteDependents)
}

func (n *node) ownerRef(uid api.UID) *api.OwnerReference {
	for i := range n.owners {
		if n.owners[i].UID == uid {
			return &n.owners[i]
		}
	}
	return nil
}

func newNode(info api.ResourceInfo, m *api.ObjectMeta) *node {
	return &node{
		info: info, namespace: m.Namespace, name: m.Name, uid: m.UID,
		owners:     slices.Clone(m.OwnerReferences),
		deleting:   m.DeletionTimestamp != nil,
		finalizers: slices.Clone(m.Finalizers),
	}
}

// graph maps uids to objects and owners to dependents. Nodes are replaced,
// never modified, so a node read under the lock may be used after it.
type graph struct {
	mu         sync.RWMutex
	nodes      map[api.UID]*node
	dependents map[api.UID]map[api.UID]struct{} // owner uid -> dependent uids
}

func newGraph() *graph {
	return &graph{nodes: map[api.UID]*node{}, dependents: map[api.UID]map[api.UID]struct{}{}}
}

// upsert stores n and returns what it replaced (nil for a new object).
func (g *graph) upsert(n *node) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[n.uid]
	if old != nil {
		g.unlink(old)
	}
	g.nodes[n.uid] = n
	for _, ref := range n.owners {
		deps := g.dependents[ref.UID]
		if deps == nil {
			deps = map[api.UID]struct{}{}
			g.dependents[ref.UID] = deps
		}
		deps[n.uid] = struct{}{}
	}
	return old
}

// remove drops uid and returns its last node (nil if unknown).
func (g *graph) remove(uid api.UID) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[uid]
	if old == nil {
		return nil
	}
	g.unlink(old)
	delete(g.nodes, uid)
	return old
}

func (g *graph) unlink(n *node) {
	for _, ref := range n.owners {
		if deps := g.dependents[ref.UID]; deps != nil {
			delete(deps, n.uid)
			if len(deps) == 0 {
				delete(g.dependents, ref.UID)
			}
		}
	}
}

func (g *graph) get(uid api.UID) *node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.nodes[uid]
}

// dependentsOf returns the observed dependents of uid.
func (g *graph) dependentsOf(uid api.UID) []*node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*node
	for d := range g.dependents[uid] {
		if n := g.nodes[d]; n != nil {
			out = append(out, n)
		}
	}
	return out
}

func (g *graph) dependentUIDs(uid api.UID) []api.UID {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]api.UID, 0, len(g.dependents[uid]))
	for d := range g.dependents[uid] {
		out = append(out, d)
	}
	return out
}
