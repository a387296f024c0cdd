package escalation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// Covers reports whether the owner's rules include every permission of
// the servant's rules, and returns the missing ones broken down to one
// verb on one resource (or URL) each, as Kubernetes' Covers does.
func Covers(owner, servant []api.PolicyRule) (bool, []api.PolicyRule) {
	var missing []api.PolicyRule
	for _, r := range servant {
		for _, sub := range r.Breakdown() {
			if !slices.ContainsFunc(owner, func(o api.PolicyRule) bool { return ruleCovers(o, sub) }) {
				missing = append(missing, sub)
			}
		}
	}
	return len(missing) == 0, missing
}

// ruleCovers is Kubernetes' ruleCovers: a wildcard covers by name only,
// never the other way round ("get" does not cover "*").
func ruleCovers(owner, sub api.PolicyRule) bool {
	verbs := slices.Contains(owner.Verbs, api.VerbAll) || hasAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, api.APIGroupAll) || hasAll(owner.APIGroups, sub.APIGroups)
	resources := resourcesCover(owner.Resources, sub.Resources)
	urls := urlsCover(owner.NonResourceURLs, sub.NonResourceURLs)
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) > 0 && hasAll(owner.ResourceNames, sub.ResourceNames))
	return verbs && groups && resources && names && urls
}

func hasAll(set, want []string) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

// resourcesCover: "*" covers all, "*/scale" covers every resource's scale.
func resourcesCover(set, want []string) bool {
	if slices.Contains(set, api.ResourceAll) || hasAll(set, want) {
		return true
	}
	for _, p := range want {
		if slices.Contains(set, p) {
			continue
		}
		_, sub, ok := strings.Cut(p, "/")
		if !ok || !slices.Contains(set, "*/"+sub) {
			return false
		}
	}
	return true
}

// urlsCover: a URL ending in "*" covers the paths it prefixes.
func urlsCover(set, want []string) bool {
	for _, p := range want {
		if !slices.ContainsFunc(set, func(o string) bool {
			return o == p || (strings.HasSuffix(o, "*") && strings.HasPrefix(p, strings.TrimRight(o, "*")))
		}) {
			return false
		}
	}
	return true
}

// simpleResource keys the rules Compact merges: one group, one resource,
// at most one resource name.
type simpleResource struct {
	group, resource, name string
	named                 bool
}

// Compact merges the verbs of rules on the same single resource (and
// resource name), as Kubernetes' CompactRules does for its messages; other
// rules are kept as they are.
func Compact(rules []api.PolicyRule) []api.PolicyRule {
	var (
		out    []api.PolicyRule
		simple = map[simpleResource]*api.PolicyRule{}
		order  []simpleResource
	)
	for _, r := range rules {
		if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		k := simpleResource{group: r.APIGroups[0], resource: r.Resources[0], named: len(r.ResourceNames) == 1}
		if k.named {
			k.name = r.ResourceNames[0]
		}
		if have, ok := simple[k]; ok {
			for _, v := range r.Verbs {
				if !slices.Contains(have.Verbs, v) {
					have.Verbs = append(have.Verbs, v)
				}
			}
			continue
		}
		c := api.DeepCopy(&r)
		simple[k] = c
		order = append(order, k)
	}
	for _, k := range order {
		out = append(out, *simple[k])
	}
	return out
}

// CompactString is Kubernetes' PolicyRule.CompactString, the form its
// escalation messages list rules in:
// `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`.
func CompactString(r api.PolicyRule) string {
	var parts []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}
