package describe

import (
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/minik8s/minik8s/api"
)

// describeServiceAccount is kubectl's ServiceAccountDescriber: since
// v1.24's bound tokens it lists only the image pull secrets.
func describeServiceAccount(w *prefixWriter, sa *api.ServiceAccount, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", sa.Name)
	w.write(level0, "Namespace:\t%s\n", sa.Namespace)
	w.labels("Labels", sa.Labels)
	w.annotations("Annotations", sa.Annotations)
	const header = "Image pull secrets:"
	if len(sa.ImagePullSecrets) == 0 {
		w.write(level0, "%s\t<none>\n", header)
	}
	for i, s := range sa.ImagePullSecrets {
		prefix := header
		if i > 0 {
			prefix = strings.Repeat(" ", len(header))
		}
		w.write(level0, "%s\t%s\n", prefix, s.Name)
	}
	w.events(evs, now)
}

// describeRules writes a Role's or ClusterRole's rules as kubectl does:
// broken down to one verb, resource and name each, the single-resource
// ones merged back per resource (and name), sorted by their text.
func describeRules(w *prefixWriter, meta *api.ObjectMeta, rules []rbacv1.PolicyRule) {
	var broken []rbacv1.PolicyRule
	for _, r := range rules {
		broken = append(broken, breakdownRule(r)...)
	}
	compact := compactRules(broken)
	slices.SortStableFunc(compact, func(a, b rbacv1.PolicyRule) int { return strings.Compare(a.String(), b.String()) })
	w.write(level0, "Name:\t%s\n", meta.Name)
	w.labels("Labels", meta.Labels)
	w.annotations("Annotations", meta.Annotations)
	w.write(level0, "PolicyRule:\n")
	w.write(level1, "Resources\tNon-Resource URLs\tResource Names\tVerbs\n")
	w.write(level1, "---------\t-----------------\t--------------\t-----\n")
	for _, r := range compact {
		w.write(level1, "%s\t%v\t%v\t%v\n", resourceGroup(r.Resources, r.APIGroups), r.NonResourceURLs, r.ResourceNames, r.Verbs)
	}
}

// breakdownRule splits r into rules of one group, resource, verb and
// resource name each, then one per non-resource URL and verb.
func breakdownRule(r rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := []rbacv1.PolicyRule{}
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if len(r.ResourceNames) == 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range r.ResourceNames {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// compactRules merges the verbs of broken-down rules on the same group,
// resource and resource name; the others are kept as they are.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct{ group, resource, name string }
	var out []rbacv1.PolicyRule
	merged := map[key]int{} // index in simple
	var simple []rbacv1.PolicyRule
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.ResourceNames) > 1 {
			out = append(out, r)
			continue
		}
		k := key{group: r.APIGroups[0], resource: r.Resources[0]}
		if len(r.ResourceNames) == 1 {
			k.name = "/" + r.ResourceNames[0] // apart from a rule without names
		}
		i, ok := merged[k]
		if !ok {
			merged[k] = len(simple)
			simple = append(simple, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames, Verbs: slices.Clone(r.Verbs)})
			continue
		}
		for _, v := range r.Verbs {
			if !slices.Contains(simple[i].Verbs, v) {
				simple[i].Verbs = append(simple[i].Verbs, v)
			}
		}
	}
	return append(out, simple...)
}

// resourceGroup is kubectl's CombineResourceGroup: "resource.group/sub"
// of the first resource and group.
func resourceGroup(resources, groups []string) string {
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

// describeBinding is kubectl's RoleBindingDescriber and
// ClusterRoleBindingDescriber.
func describeBinding(w *prefixWriter, meta *api.ObjectMeta, ref api.RoleRef, subjects []api.Subject) {
	w.write(level0, "Name:\t%s\n", meta.Name)
	w.labels("Labels", meta.Labels)
	w.annotations("Annotations", meta.Annotations)
	w.write(level0, "Role:\n")
	w.write(level1, "Kind:\t%s\n", ref.Kind)
	w.write(level1, "Name:\t%s\n", ref.Name)
	w.write(level0, "Subjects:\n")
	w.write(level1, "Kind\tName\tNamespace\n")
	w.write(level1, "----\t----\t---------\n")
	for _, s := range subjects {
		w.write(level1, "%s\t%s\t%s\n", s.Kind, s.Name, s.Namespace)
	}
}
