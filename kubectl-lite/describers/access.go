package describers

import (
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubectl-lite/rbacrules"
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
// ones merged back per resource (and name, without repeated verbs),
// sorted by their text.
func describeRules(w *prefixWriter, meta *api.ObjectMeta, rules []rbacv1.PolicyRule) {
	all := make([]api.PolicyRule, 0, len(rules))
	for _, r := range rules {
		all = append(all, api.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames, NonResourceURLs: r.NonResourceURLs})
	}
	w.write(level0, "Name:\t%s\n", meta.Name)
	w.labels("Labels", meta.Labels)
	w.annotations("Annotations", meta.Annotations)
	w.write(level0, "PolicyRule:\n")
	w.write(level1, "Resources\tNon-Resource URLs\tResource Names\tVerbs\n")
	w.write(level1, "---------\t-----------------\t--------------\t-----\n")
	for _, r := range rbacrules.Compacted(all, true) {
		w.write(level1, "%s\t%s\t%s\t%s\n", rbacrules.CombineResourceGroup(r.Resources, r.APIGroups), rbacrules.List(r.NonResourceURLs), rbacrules.List(r.ResourceNames), rbacrules.List(r.Verbs))
	}
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
