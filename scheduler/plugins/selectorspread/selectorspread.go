package selectorspread

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "SelectorSpread"

// zoneWeighting is how much the zone spread counts against the node spread
// when nodes have zone labels (kube's 2/3).
const zoneWeighting = 2.0 / 3.0

const preScoreKey framework.StateKey = "PreScore" + Name

// Plugin is the spreading score.
type Plugin struct {
	handle framework.Handle
}

var (
	_ framework.PreScorePlugin  = (*Plugin)(nil)
	_ framework.ScorePlugin     = (*Plugin)(nil)
	_ framework.ScoreNormalizer = (*Plugin)(nil)
)

// New returns the plugin reading nodes through h.
func New(h framework.Handle) *Plugin { return &Plugin{handle: h} }

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// PreScore implements framework.PreScorePlugin: pods without a controller
// skip spreading.
func (p *Plugin) PreScore(_ context.Context, state *framework.CycleState, pod *api.Pod, _ []*framework.NodeInfo) *framework.Status {
	ref := api.GetControllerOf(&pod.ObjectMeta)
	if ref == nil || ref.UID == "" {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreKey, ref.UID)
	return nil
}

// Score implements framework.ScorePlugin: the number of sibling pods on
// the node.
func (p *Plugin) Score(_ context.Context, state *framework.CycleState, _ *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	v, _ := state.Read(preScoreKey)
	uid, _ := v.(api.UID)
	return int64(n.OwnerCounts[uid]), nil
}

// NormalizeScore implements framework.ScoreNormalizer: 100 for a node
// without siblings down to 0 for the most crowded, blended with the same
// measure per zone.
func (p *Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *api.Pod, scores []framework.NodeScore) *framework.Status {
	lister := p.handle.SnapshotSharedLister()
	var maxNode int64
	zoneCounts := map[string]int64{}
	zones := make([]string, len(scores))
	for i, s := range scores {
		maxNode = max(maxNode, s.Score)
		if ni, ok := lister.Get(s.Name); ok && ni.Node() != nil {
			if z := zoneKey(ni.Node()); z != "" {
				zones[i] = z
				zoneCounts[z] += s.Score
			}
		}
	}
	var maxZone int64
	for _, c := range zoneCounts {
		maxZone = max(maxZone, c)
	}
	for i := range scores {
		f := float64(framework.MaxNodeScore)
		if maxNode > 0 {
			f = float64(framework.MaxNodeScore) * float64(maxNode-scores[i].Score) / float64(maxNode)
		}
		if len(zoneCounts) > 0 && zones[i] != "" {
			z := float64(framework.MaxNodeScore)
			if maxZone > 0 {
				z = float64(framework.MaxNodeScore) * float64(maxZone-zoneCounts[zones[i]]) / float64(maxZone)
			}
			f = f*(1-zoneWeighting) + zoneWeighting*z
		}
		scores[i].Score = int64(f)
	}
	return nil
}

// zoneKey is the node's region and zone, "" when unlabeled.
func zoneKey(n *api.Node) string {
	zone, region := n.Labels[api.LabelTopologyZone], n.Labels[api.LabelTopologyRegion]
	if zone == "" && region == "" {
		return ""
	}
	return region + ":\x00:" + zone
}
