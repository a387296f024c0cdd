package tainttoleration

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/podplacement"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "TaintToleration"

// Plugin is the TaintToleration filter and score.
type Plugin struct{}

var (
	_ framework.FilterPlugin    = Plugin{}
	_ framework.ScorePlugin     = Plugin{}
	_ framework.ScoreNormalizer = Plugin{}
)

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	if len(n.Taints) == 0 {
		return nil
	}
	taint, found := podplacement.FindUntoleratedTaint(n.Taints, pod.Spec.Tolerations, api.TaintEffectNoSchedule, api.TaintEffectNoExecute)
	if !found {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value))
}

// Score implements framework.ScorePlugin: the number of PreferNoSchedule
// taints the pod does not tolerate (tolerations with an empty or
// PreferNoSchedule effect count).
func (Plugin) Score(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	var count int64
	for i := range n.Taints {
		t := &n.Taints[i]
		if t.Effect != api.TaintEffectPreferNoSchedule {
			continue
		}
		tolerated := false
		for j := range pod.Spec.Tolerations {
			tol := &pod.Spec.Tolerations[j]
			if (tol.Effect == "" || tol.Effect == api.TaintEffectPreferNoSchedule) && podplacement.ToleratesTaint(tol, t) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			count++
		}
	}
	return count, nil
}

// NormalizeScore implements framework.ScoreNormalizer: fewer taints score higher.
func (Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *api.Pod, scores []framework.NodeScore) *framework.Status {
	framework.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}
