package describers

import (
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minik8s/minik8s/api"
)

// ResourceQuotas and LimitRanges are read as k8s.io/api's types: their
// quantities print (and convert between formats) exactly as kube's do.

// quotaScopeHelp is kubectl's explanation of each built-in quota scope.
var quotaScopeHelp = map[corev1.ResourceQuotaScope]string{
	corev1.ResourceQuotaScopeTerminating:    "Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.",
	corev1.ResourceQuotaScopeNotTerminating: "Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.",
	corev1.ResourceQuotaScopeBestEffort:     "Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.",
	corev1.ResourceQuotaScopeNotBestEffort:  "Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.",
}

func sortedScopes(q *corev1.ResourceQuota) []string {
	scopes := make([]string, 0, len(q.Spec.Scopes))
	for _, s := range q.Spec.Scopes {
		scopes = append(scopes, string(s))
	}
	slices.Sort(scopes)
	return scopes
}

// describeQuota is kubectl's ResourceQuotaDescriber: each hard limit with
// its use, the use shown in the limit's format.
func describeQuota(w *prefixWriter, q *corev1.ResourceQuota) {
	w.write(level0, "Name:\t%s\n", q.Name)
	w.write(level0, "Namespace:\t%s\n", q.Namespace)
	if scopes := sortedScopes(q); len(scopes) > 0 {
		w.write(level0, "Scopes:\t%s\n", strings.Join(scopes, ", "))
		for _, s := range scopes {
			if help := quotaScopeHelp[corev1.ResourceQuotaScope(s)]; help != "" {
				w.write(level0, " * %s\n", help)
			}
		}
	}
	w.write(level0, "Resource\tUsed\tHard\n")
	w.write(level0, "--------\t----\t----\n")
	for _, name := range slices.Sorted(maps.Keys(q.Status.Hard)) {
		hard := q.Status.Hard[name]
		used := q.Status.Used[name]
		if hard.Format != used.Format {
			used = *resource.NewQuantity(used.Value(), hard.Format)
		}
		w.write(level0, "%v\t%v\t%v\n", name, used.String(), hard.String())
	}
}

// describeLimitRange is kubectl's LimitRangeDescriber.
func describeLimitRange(w *prefixWriter, lr *corev1.LimitRange) {
	w.write(level0, "Name:\t%s\n", lr.Name)
	w.write(level0, "Namespace:\t%s\n", lr.Namespace)
	w.write(level0, "Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n")
	w.write(level0, "----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n")
	limitRangeItems(w, lr.Spec, "")
}

// limitRangeItems writes a line per item and resource. kubectl walks the
// resources in map order; they are sorted here.
func limitRangeItems(w *prefixWriter, spec corev1.LimitRangeSpec, prefix string) {
	for _, item := range spec.Limits {
		names := map[corev1.ResourceName]bool{}
		for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			for k := range l {
				names[k] = true
			}
		}
		value := func(l corev1.ResourceList, k corev1.ResourceName) string {
			if q, ok := l[k]; ok {
				return q.String()
			}
			return "-"
		}
		for _, k := range slices.Sorted(maps.Keys(names)) {
			w.write(level0, "%s%s\t%v\t%v\t%v\t%v\t%v\t%v\n", prefix, item.Type, k,
				value(item.Min, k), value(item.Max, k), value(item.DefaultRequest, k), value(item.Default, k), value(item.MaxLimitRequestRatio, k))
		}
	}
}

// namespaceQuotas is kubectl's DescribeResourceQuotas: every quota of a
// namespace, by name.
func namespaceQuotas(w *prefixWriter, quotas []corev1.ResourceQuota) {
	if len(quotas) == 0 {
		w.write(level0, "No resource quota.\n")
		return
	}
	slices.SortFunc(quotas, func(a, b corev1.ResourceQuota) int { return strings.Compare(a.Name, b.Name) })
	w.write(level0, "Resource Quotas\n")
	for i := range quotas {
		q := &quotas[i]
		w.write(level1, "Name:\t%s\n", q.Name)
		if scopes := sortedScopes(q); len(scopes) > 0 {
			w.write(level1, "Scopes:\t%s\n", strings.Join(scopes, ", "))
			for _, s := range scopes {
				if help := quotaScopeHelp[corev1.ResourceQuotaScope(s)]; help != "" {
					w.write(level1, "* %s\n", help)
				}
			}
		}
		w.write(level1, "Resource\tUsed\tHard\n")
		w.write(level1, "--------\t---\t---\n")
		for _, name := range slices.Sorted(maps.Keys(q.Status.Hard)) {
			hard := q.Status.Hard[name]
			used := q.Status.Used[name]
			w.write(level1, "%s\t%s\t%s\n", string(name), used.String(), hard.String())
		}
	}
}

// namespaceLimitRanges is kubectl's DescribeLimitRanges: the items of all
// the namespace's LimitRanges in one table.
func namespaceLimitRanges(w *prefixWriter, lrs []corev1.LimitRange) {
	if len(lrs) == 0 {
		w.write(level0, "No LimitRange resource.\n")
		return
	}
	w.write(level0, "Resource Limits\n Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n")
	w.write(level0, " ----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n")
	for _, lr := range lrs {
		limitRangeItems(w, lr.Spec, " ")
	}
}

// describeNamespace follows kubectl's NamespaceDescriber: the phase, the
// conditions, then the namespace's quotas and limit ranges (nil when the
// server serves no such kind).
func describeNamespace(w *prefixWriter, ns *api.Namespace, quotas []corev1.ResourceQuota, limits []corev1.LimitRange) {
	w.write(level0, "Name:\t%s\n", ns.Name)
	w.labels("Labels", ns.Labels)
	w.annotations("Annotations", ns.Annotations)
	w.write(level0, "Status:\t%s\n", ns.Status.Phase)
	if len(ns.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n")
		w.write(level1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
		w.write(level1, "----\t------\t------------------\t------\t-------\n")
		for _, c := range ns.Status.Conditions {
			w.write(level1, "%v\t%v\t%s\t%v\t%v\n", c.Type, c.Status, c.LastTransitionTime.Time.Format(time.RFC1123Z), c.Reason, c.Message)
		}
	}
	if quotas != nil {
		w.write(level0, "\n")
		namespaceQuotas(w, quotas)
	}
	if limits != nil {
		w.write(level0, "\n")
		namespaceLimitRanges(w, limits)
	}
}
