package podplacement

import (
	"slices"
	"strconv"

	"github.com/minik8s/minik8s/api"
)

// RequiredNodeSelector is the pod's required node affinity (nil when it
// has none).
func RequiredNodeSelector(pod *api.Pod) *api.NodeSelector {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
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
	if ns := RequiredNodeSelector(pod); ns != nil {
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
