package schedtest

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// NodeInfo returns a NodeInfo for node holding pods.
func NodeInfo(node *api.Node, pods ...*api.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	for _, p := range pods {
		ni.AddPodInfo(framework.NewPodInfo(p))
	}
	ni.SetNode(node)
	return ni
}

// Lister is a fixed framework.SharedLister over nodes, for plugin tests.
type Lister []*framework.NodeInfo

var _ framework.SharedLister = Lister(nil)

// List implements framework.SharedLister.
func (l Lister) List() []*framework.NodeInfo { return l }

// HavePodsWithAffinity implements framework.SharedLister.
func (l Lister) HavePodsWithAffinity() []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range l {
		if len(n.PodsWithAffinity) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// HavePodsWithRequiredAntiAffinity implements framework.SharedLister.
func (l Lister) HavePodsWithRequiredAntiAffinity() []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range l {
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// Get implements framework.SharedLister.
func (l Lister) Get(name string) (*framework.NodeInfo, bool) {
	for _, n := range l {
		if n.Node() != nil && n.Node().Name == name {
			return n, true
		}
	}
	return nil, false
}

// Handle is a framework.Handle over a fixed Lister.
type Handle struct{ Lister Lister }

// SnapshotSharedLister implements framework.Handle.
func (h Handle) SnapshotSharedLister() framework.SharedLister { return h.Lister }

// Filter runs plugin's PreFilter (when it has one) and Filter for pod on n,
// as the framework would, and returns the status (nil for a fit, or the
// PreFilter's rejection).
func Filter(p framework.FilterPlugin, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	ctx := context.Background()
	state := framework.NewCycleState()
	if pf, ok := p.(framework.PreFilterPlugin); ok {
		s := pf.PreFilter(ctx, state, pod)
		if s.IsSkip() {
			return nil
		}
		if !s.IsSuccess() {
			return s
		}
	}
	return p.Filter(ctx, state, pod, n)
}

// Score runs PreScore (when present), Score over nodes and NormalizeScore
// (when present), and returns the final scores by node name. A PreScore
// Skip yields nil.
func Score(p framework.ScorePlugin, pod *api.Pod, nodes ...*framework.NodeInfo) map[string]int64 {
	ctx := context.Background()
	state := framework.NewCycleState()
	if pf, ok := p.(framework.PreFilterPlugin); ok {
		pf.PreFilter(ctx, state, pod)
	}
	if ps, ok := p.(framework.PreScorePlugin); ok {
		if s := ps.PreScore(ctx, state, pod, nodes); s.IsSkip() {
			return nil
		}
	}
	scores := make([]framework.NodeScore, len(nodes))
	for i, n := range nodes {
		s, _ := p.Score(ctx, state, pod, n)
		scores[i] = framework.NodeScore{Name: n.Node().Name, Score: s}
	}
	if nz, ok := p.(framework.ScoreNormalizer); ok {
		nz.NormalizeScore(ctx, state, pod, scores)
	}
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.Score
	}
	return out
}
