package rbacrules

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// Compacted is rules broken down, compacted and sorted as kubectl shows
// them. kubectl's describe merges the verbs of one resource without
// repeats (k8s.io/kubectl/pkg/util/rbac); auth can-i --list keeps the
// repeats: dedupVerbs chooses.
func Compacted(rules []api.PolicyRule, dedupVerbs bool) []api.PolicyRule {
	var broken []api.PolicyRule
	for _, r := range rules {
		broken = append(broken, r.Breakdown()...)
	}
	out := compact(broken, dedupVerbs)
	sort.SliceStable(out, func(i, j int) bool { return String(out[i]) < String(out[j]) })
	return out
}

// compact is kubectl's CompactRules: the verbs of rules for the same group,
// resource and name are merged into the first of them.
func compact(rules []api.PolicyRule, dedupVerbs bool) []api.PolicyRule {
	type key struct{ group, resource, name string }
	var out []api.PolicyRule
	merged := map[key]int{}
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.ResourceNames) > 1 {
			out = append(out, r)
			continue
		}
		k := key{r.APIGroups[0], r.Resources[0], ""}
		if len(r.ResourceNames) == 1 {
			k.name = "\x00" + r.ResourceNames[0] // apart from a rule without names
		}
		i, ok := merged[k]
		if !ok {
			merged[k] = len(out)
			r.Verbs = slices.Clone(r.Verbs)
			out = append(out, r)
			continue
		}
		for _, v := range r.Verbs {
			if !dedupVerbs || !slices.Contains(out[i].Verbs, v) {
				out[i].Verbs = append(out[i].Verbs, v)
			}
		}
	}
	return out
}

// String is rbac/v1 PolicyRule's String(), by which kubectl sorts rules.
func String(r api.PolicyRule) string {
	return fmt.Sprintf("&PolicyRule{Verbs:%v,APIGroups:%v,Resources:%v,ResourceNames:%v,NonResourceURLs:%v,}",
		List(r.Verbs), List(r.APIGroups), List(r.Resources), List(r.ResourceNames), List(r.NonResourceURLs))
}

// List formats a string list as Go's %v does: [a b].
func List(s []string) string { return "[" + strings.Join(s, " ") + "]" }

// CombineResourceGroup is kubectl's CombineResourceGroup: "pods",
// "deployments.apps", "deployments.apps/scale".
func CombineResourceGroup(resources, groups []string) string {
	if len(resources) == 0 {
		return ""
	}
	res, sub, hasSub := strings.Cut(resources[0], "/")
	if len(groups) > 0 && groups[0] != "" {
		res += "." + groups[0]
	}
	if hasSub {
		res += "/" + sub
	}
	return res
}
