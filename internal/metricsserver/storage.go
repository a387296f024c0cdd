package metricsserver

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// usage is what one node or container used over a window.
type usage struct {
	timestamp time.Time
	window    time.Duration
	cpu       resource.Quantity // cores, nano precision
	memory    resource.Quantity // bytes
}

// point is the last two readings of a counter.
type point struct{ prev, last sample }

// storage keeps the last two scrapes of every node and container.
type storage struct {
	mu         sync.RWMutex
	nodes      map[string]*point
	containers map[containerKey]*point
	// podNode remembers which node reported a pod, to drop its
	// containers when the node's next scrape no longer has them.
	nodeOf map[containerKey]string
}

func newStorage() *storage {
	return &storage{nodes: map[string]*point{}, containers: map[containerKey]*point{}, nodeOf: map[containerKey]string{}}
}

// store records a node's scrape.
func (s *storage) store(node string, ns *nodeScrape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ns.node.haveCPU && ns.node.haveMem {
		p, ok := s.nodes[node]
		if !ok {
			p = &point{}
			s.nodes[node] = p
		}
		p.prev, p.last = p.last, ns.node
	}
	for k, c := range ns.containers {
		if !c.haveCPU || !c.haveMem {
			continue
		}
		p, ok := s.containers[k]
		if !ok || p.last.started != c.started {
			// New, or restarted: the counters start over.
			p = &point{}
			s.containers[k] = p
		}
		p.prev, p.last = p.last, *c
		s.nodeOf[k] = node
	}
	for k, n := range s.nodeOf {
		if _, ok := ns.containers[k]; n == node && !ok {
			delete(s.containers, k)
			delete(s.nodeOf, k)
		}
	}
}

// forgetNode drops a node that is gone and its containers.
func (s *storage) forgetNode(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, node)
	for k, n := range s.nodeOf {
		if n == node {
			delete(s.containers, k)
			delete(s.nodeOf, k)
		}
	}
}

// rate is a point's usage, false until two readings with a rising counter.
func rate(p *point) (usage, bool) {
	if p == nil || p.prev.cpuAt.IsZero() || !p.last.cpuAt.After(p.prev.cpuAt) || p.last.cpuSeconds < p.prev.cpuSeconds {
		return usage{}, false
	}
	window := p.last.cpuAt.Sub(p.prev.cpuAt)
	nano := int64((p.last.cpuSeconds - p.prev.cpuSeconds) / window.Seconds() * 1e9)
	return usage{timestamp: p.last.cpuAt, window: window,
		cpu: *resource.NewScaledQuantity(nano, resource.Nano), memory: *resource.NewQuantity(int64(p.last.memory), resource.BinarySI)}, true
}

// node returns a node's usage.
func (s *storage) node(name string) (usage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return rate(s.nodes[name])
}

// pod returns the usage of each container of a pod, false unless every
// container it reported has a rate (metrics-server leaves out a pod with a
// container it cannot measure yet).
func (s *storage) pod(namespace, name string) (map[string]usage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]usage{}
	for k, p := range s.containers {
		if k.namespace != namespace || k.pod != name {
			continue
		}
		u, ok := rate(p)
		if !ok {
			return nil, false
		}
		out[k.container] = u
	}
	return out, len(out) > 0
}
