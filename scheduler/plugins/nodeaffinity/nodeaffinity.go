package nodeaffinity

import (
	"context"
	"slices"
	"strconv"

	"github.com/minik8s/minik8s/api"
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

func required(pod *api.Pod) *api.NodeSelector {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// PreFilter implements framework.PreFilterPlugin: pods without a
// nodeSelector or required affinity skip the filter.
func (Plugin) PreFilter(_ context.Context, _ *framework.CycleState, pod *api.Pod) *framework.Status {
	if len(pod.Spec.NodeSelector) == 0 && required(pod) == nil {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	if !Matches(pod, n.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

// Matches reports whether node satisfies pod's nodeSelector and required
// node affinity.
func Matches(pod *api.Pod, node *api.Node) bool {
	for k, v := range pod.Spec.NodeSelector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	if ns := required(pod); ns != nil {
		return MatchesNodeSelector(ns, node)
	}
	return true
}

// MatchesNodeSelector reports whether any term of ns matches node (the
// terms are ORed; a term with no requirements matches nothing).
func MatchesNodeSelector(ns *api.NodeSelector, node *api.Node) bool {
	for i := range ns.NodeSelectorTerms {
		if MatchesTerm(&ns.NodeSelectorTerms[i], node) {
			return true
		}
	}
	return false
}

// MatchesTerm reports whether every requirement of term matches node.
func MatchesTerm(term *api.NodeSelectorTerm, node *api.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for i := range term.MatchExpressions {
		r := &term.MatchExpressions[i]
		v, ok := node.Labels[r.Key]
		if !matchRequirement(r, v, ok) {
			return false
		}
	}
	for i := range term.MatchFields {
		r := &term.MatchFields[i]
		if r.Key != "metadata.name" {
			return false
		}
		if !matchRequirement(r, node.Name, true) {
			return false
		}
	}
	return true
}

func matchRequirement(r *api.NodeSelectorRequirement, value string, present bool) bool {
	switch r.Operator {
	case api.NodeSelectorOpIn:
		return present && slices.Contains(r.Values, value)
	case api.NodeSelectorOpNotIn:
		return !present || !slices.Contains(r.Values, value)
	case api.NodeSelectorOpExists:
		return present
	case api.NodeSelectorOpDoesNotExist:
		return !present
	case api.NodeSelectorOpGt, api.NodeSelectorOpLt:
		if !present || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(value, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == api.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
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
		if t.Weight != 0 && MatchesTerm(&t.Preference, n.Node()) {
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
