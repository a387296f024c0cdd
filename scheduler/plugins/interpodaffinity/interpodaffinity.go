package interpodaffinity

import (
	"context"
	"maps"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "InterPodAffinity"

// Failure reasons, as kube's.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

// hardPodAffinityWeight is kube's default weight given, when scoring, to
// the required affinity terms of existing pods that match the incoming pod.
const hardPodAffinityWeight = 1

const (
	preFilterKey framework.StateKey = "PreFilter" + Name
	preScoreKey  framework.StateKey = "PreScore" + Name
)

// Plugin is the InterPodAffinity filter and score.
type Plugin struct {
	handle framework.Handle
}

var (
	_ framework.PreFilterPlugin     = (*Plugin)(nil)
	_ framework.PreFilterExtensions = (*Plugin)(nil)
	_ framework.FilterPlugin        = (*Plugin)(nil)
	_ framework.PreScorePlugin      = (*Plugin)(nil)
	_ framework.ScorePlugin         = (*Plugin)(nil)
	_ framework.ScoreNormalizer     = (*Plugin)(nil)
)

// New returns the plugin reading the cluster through h.
func New(h framework.Handle) *Plugin { return &Plugin{handle: h} }

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

type topologyPair struct{ key, value string }

// preFilterState counts, per topology domain, the pods that match the
// incoming pod's terms, and the existing pods whose anti-affinity the
// incoming pod would violate.
type preFilterState struct {
	pod              *framework.PodInfo
	existingAnti     map[topologyPair]int
	affinityCounts   map[topologyPair]int
	antiAffinityCnts map[topologyPair]int
}

// PreFilter implements framework.PreFilterPlugin.
func (p *Plugin) PreFilter(_ context.Context, state *framework.CycleState, pod *api.Pod) *framework.Status {
	pi := framework.NewPodInfo(pod)
	if pi.ParseError != nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, pi.ParseError.Error())
	}
	lister := p.handle.SnapshotSharedLister()
	s := &preFilterState{pod: pi, existingAnti: map[topologyPair]int{}, affinityCounts: map[topologyPair]int{}, antiAffinityCnts: map[topologyPair]int{}}
	for _, n := range lister.HavePodsWithRequiredAntiAffinity() {
		node := n.Node()
		if node == nil {
			continue
		}
		for _, existing := range n.PodsWithRequiredAntiAffinity {
			for i := range existing.RequiredAntiAffinityTerms {
				t := &existing.RequiredAntiAffinityTerms[i]
				if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(pod) {
					s.existingAnti[topologyPair{t.TopologyKey, v}]++
				}
			}
		}
	}
	if len(pi.RequiredAffinityTerms) > 0 || len(pi.RequiredAntiAffinityTerms) > 0 {
		for _, n := range lister.List() {
			node := n.Node()
			for _, existing := range n.Pods {
				for i := range pi.RequiredAffinityTerms {
					t := &pi.RequiredAffinityTerms[i]
					if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(existing.Pod) {
						s.affinityCounts[topologyPair{t.TopologyKey, v}]++
					}
				}
				for i := range pi.RequiredAntiAffinityTerms {
					t := &pi.RequiredAntiAffinityTerms[i]
					if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(existing.Pod) {
						s.antiAffinityCnts[topologyPair{t.TopologyKey, v}]++
					}
				}
			}
		}
	}
	if len(s.existingAnti) == 0 && len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterKey, s)
	return nil
}

// Clone implements framework.Cloner: the counts are copied.
func (s *preFilterState) Clone() any {
	return &preFilterState{pod: s.pod, existingAnti: maps.Clone(s.existingAnti),
		affinityCounts: maps.Clone(s.affinityCounts), antiAffinityCnts: maps.Clone(s.antiAffinityCnts)}
}

// update counts other (placed on node) m times more: its anti-affinity
// terms that select the incoming pod, and the incoming pod's terms that
// select it, as kube's updateWithPod.
func (s *preFilterState) update(other *framework.PodInfo, node *api.Node, m int) {
	if node == nil {
		return
	}
	for i := range other.RequiredAntiAffinityTerms {
		t := &other.RequiredAntiAffinityTerms[i]
		if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(s.pod.Pod) {
			s.existingAnti[topologyPair{t.TopologyKey, v}] += m
		}
	}
	for i := range s.pod.RequiredAffinityTerms {
		t := &s.pod.RequiredAffinityTerms[i]
		if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(other.Pod) {
			s.affinityCounts[topologyPair{t.TopologyKey, v}] += m
		}
	}
	for i := range s.pod.RequiredAntiAffinityTerms {
		t := &s.pod.RequiredAntiAffinityTerms[i]
		if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(other.Pod) {
			s.antiAffinityCnts[topologyPair{t.TopologyKey, v}] += m
		}
	}
}

// AddPod implements framework.PreFilterExtensions.
func (p *Plugin) AddPod(_ context.Context, state *framework.CycleState, _ *api.Pod, podToAdd *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	v, ok := state.Read(preFilterKey)
	if !ok {
		return framework.AsStatus(errNoPreFilter)
	}
	v.(*preFilterState).update(podToAdd, node.Node(), 1)
	return nil
}

// RemovePod implements framework.PreFilterExtensions.
func (p *Plugin) RemovePod(_ context.Context, state *framework.CycleState, _ *api.Pod, podToRemove *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	v, ok := state.Read(preFilterKey)
	if !ok {
		return framework.AsStatus(errNoPreFilter)
	}
	v.(*preFilterState).update(podToRemove, node.Node(), -1)
	return nil
}

// Filter implements framework.FilterPlugin.
func (p *Plugin) Filter(_ context.Context, state *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	v, ok := state.Read(preFilterKey)
	if !ok {
		return framework.AsStatus(errNoPreFilter)
	}
	s := v.(*preFilterState)
	node := n.Node()
	// kube's order: the pod's affinity, its anti-affinity, then the
	// anti-affinity of the pods already placed.
	if !p.satisfiesAffinity(s, node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	for i := range s.pod.RequiredAntiAffinityTerms {
		t := &s.pod.RequiredAntiAffinityTerms[i]
		if v, ok := node.Labels[t.TopologyKey]; ok && s.antiAffinityCnts[topologyPair{t.TopologyKey, v}] > 0 {
			return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
		}
	}
	for pair, c := range s.existingAnti {
		if v, has := node.Labels[pair.key]; has && c > 0 && v == pair.value {
			return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
		}
	}
	return nil
}

// satisfiesAffinity checks the incoming pod's required affinity: every
// term needs a matching pod in the node's domain, except that a pod whose
// terms match nothing anywhere may start the group if it matches its own
// terms (so the first replica of a self-affine set can land).
func (p *Plugin) satisfiesAffinity(s *preFilterState, node *api.Node) bool {
	terms := s.pod.RequiredAffinityTerms
	if len(terms) == 0 {
		return true
	}
	all := true
	for i := range terms {
		v, ok := node.Labels[terms[i].TopologyKey]
		if !ok || s.affinityCounts[topologyPair{terms[i].TopologyKey, v}] == 0 {
			all = false
			break
		}
	}
	if all {
		return true
	}
	if len(s.affinityCounts) > 0 {
		return false
	}
	for i := range terms {
		if _, ok := node.Labels[terms[i].TopologyKey]; !ok || !terms[i].Matches(s.pod.Pod) {
			return false
		}
	}
	return true
}

type errString string

func (e errString) Error() string { return string(e) }

const errNoPreFilter = errString("InterPodAffinity: PreFilter state missing")

// scoreState maps topology domains to the summed weights of matching terms.
type scoreState struct {
	scores map[topologyPair]int64
}

// PreScore implements framework.PreScorePlugin: it sums, per topology
// domain, the weights of the preferred terms (the incoming pod's against
// existing pods, and the existing pods' against the incoming one; required
// affinity of existing pods counts with hardPodAffinityWeight).
func (p *Plugin) PreScore(_ context.Context, state *framework.CycleState, pod *api.Pod, _ []*framework.NodeInfo) *framework.Status {
	pi := framework.NewPodInfo(pod)
	lister := p.handle.SnapshotSharedLister()
	nodes := lister.HavePodsWithAffinity()
	hasOwn := len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinity) > 0
	if hasOwn {
		nodes = lister.List()
	}
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &scoreState{scores: map[topologyPair]int64{}}
	add := func(t *framework.AffinityTerm, node *api.Node, target *api.Pod, mult int64) {
		if v, ok := node.Labels[t.TopologyKey]; ok && t.Matches(target) {
			s.scores[topologyPair{t.TopologyKey, v}] += int64(t.Weight) * mult
		}
	}
	for _, n := range nodes {
		node := n.Node()
		if node == nil {
			continue
		}
		pods := n.PodsWithAffinity
		if hasOwn {
			pods = n.Pods
		}
		for _, existing := range pods {
			for i := range pi.PreferredAffinityTerms {
				add(&pi.PreferredAffinityTerms[i], node, existing.Pod, 1)
			}
			for i := range pi.PreferredAntiAffinity {
				add(&pi.PreferredAntiAffinity[i], node, existing.Pod, -1)
			}
			for i := range existing.PreferredAffinityTerms {
				add(&existing.PreferredAffinityTerms[i], node, pod, 1)
			}
			for i := range existing.PreferredAntiAffinity {
				add(&existing.PreferredAntiAffinity[i], node, pod, -1)
			}
			for i := range existing.RequiredAffinityTerms {
				t := existing.RequiredAffinityTerms[i]
				t.Weight = hardPodAffinityWeight
				add(&t, node, pod, 1)
			}
		}
	}
	if len(s.scores) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreKey, s)
	return nil
}

// Score implements framework.ScorePlugin: the sum over the node's labels
// of the domain scores (may be negative before normalization).
func (p *Plugin) Score(_ context.Context, state *framework.CycleState, _ *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	v, ok := state.Read(preScoreKey)
	if !ok {
		return 0, nil
	}
	s := v.(*scoreState)
	var score int64
	for pair, w := range s.scores {
		if v, has := n.Node().Labels[pair.key]; has && v == pair.value {
			score += w
		}
	}
	return score, nil
}

// NormalizeScore implements framework.ScoreNormalizer: min-max scaling to
// [0, 100], as kube.
func (p *Plugin) NormalizeScore(_ context.Context, state *framework.CycleState, _ *api.Pod, scores []framework.NodeScore) *framework.Status {
	if _, ok := state.Read(preScoreKey); !ok || len(scores) == 0 {
		return nil
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	for i := range scores {
		if hi > lo {
			scores[i].Score = framework.MaxNodeScore * (scores[i].Score - lo) / (hi - lo)
		} else {
			scores[i].Score = 0
		}
	}
	return nil
}
