package nodeaffinity

import (
	"context"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/podplacement"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeAffinity"

// ErrReasonPod is kube's failure reason for nodeSelector and required affinity.
const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"

// Plugin is the NodeAffinity filter and score.
type Plugin struct{}

var (
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
	_ framework.PreScorePlugin  = Plugin{}
	_ framework.ScorePlugin     = Plugin{}
	_ framework.ScoreNormalizer = Plugin{}
)

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// PreFilter implements framework.PreFilterPlugin: pods without a
// nodeSelector or required affinity skip the filter.
func (Plugin) PreFilter(_ context.Context, _ *framework.CycleState, pod *api.Pod) *framework.Status {
	if len(pod.Spec.NodeSelector) == 0 && podplacement.RequiredNodeSelector(pod) == nil {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	if !podplacement.Matches(pod, n.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

func preferred(pod *api.Pod) []api.PreferredSchedulingTerm {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// PreScore implements framework.PreScorePlugin: pods without preferred
// terms skip scoring.
func (Plugin) PreScore(_ context.Context, _ *framework.CycleState, pod *api.Pod, _ []*framework.NodeInfo) *framework.Status {
	if len(preferred(pod)) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score implements framework.ScorePlugin: the sum of the weights of the
// preferred terms node matches.
func (Plugin) Score(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	var score int64
	for _, t := range preferred(pod) {
		if t.Weight != 0 && podplacement.MatchesTerm(&t.Preference, n.Node()) {
			score += int64(t.Weight)
		}
	}
	return score, nil
}

// NormalizeScore implements framework.ScoreNormalizer.
func (Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *api.Pod, scores []framework.NodeScore) *framework.Status {
	framework.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
	return nil
}
