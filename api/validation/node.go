package validation

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// ValidateNode checks a node being created: its name, taints, resource
// amounts and pod CIDRs.
func ValidateNode(node *api.Node) field.ErrorList {
	errs := ValidateObjectMeta(&node.ObjectMeta, false, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateNodeCommon(node)...)
}

func validateNodeCommon(node *api.Node) field.ErrorList {
	// Kubernetes reports taint errors under metadata.taints; they are
	// reported here under the field that holds them, spec.taints.
	errs := validateNodeTaints(node.Spec.Taints, field.NewPath("spec", "taints"))
	errs = append(errs, validateNodeResources(node)...)
	errs = append(errs, validatePodCIDRs(&node.Spec)...)
	return errs
}

// nodePodCIDRs returns the node's pod CIDRs; podCIDR alone stands for a
// one-element podCIDRs, as Kubernetes' conversion treats it.
func nodePodCIDRs(spec *api.NodeSpec) []string {
	if len(spec.PodCIDRs) == 0 && spec.PodCIDR != "" {
		return []string{spec.PodCIDR}
	}
	return spec.PodCIDRs
}

func validatePodCIDRs(spec *api.NodeSpec) field.ErrorList {
	var errs field.ErrorList
	if spec.PodCIDR != "" {
		for _, msg := range naming.IsValidCIDRForLegacyField(spec.PodCIDR, false) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "podCIDR"), spec.PodCIDR, msg))
		}
		if len(spec.PodCIDRs) > 0 && spec.PodCIDRs[0] != spec.PodCIDR {
			errs = append(errs, field.Invalid(field.NewPath("spec", "podCIDR"), spec.PodCIDR, "must match the first element of `podCIDRs`"))
		}
	}
	p := field.NewPath("spec", "podCIDRs")
	invalid := false
	for i, c := range spec.PodCIDRs {
		for _, msg := range naming.IsValidCIDRForLegacyField(c, false) {
			errs = append(errs, field.Invalid(p.Index(i), c, msg))
			invalid = true
		}
	}
	if invalid || len(spec.PodCIDRs) < 2 {
		return errs
	}
	if len(spec.PodCIDRs) > 2 || isIPv6(spec.PodCIDRs[0]) == isIPv6(spec.PodCIDRs[1]) {
		errs = append(errs, field.Invalid(p, goValue{spec.PodCIDRs}, "may specify no more than one CIDR for each IP family"))
	}
	seen := map[string]bool{}
	for i, c := range spec.PodCIDRs {
		if seen[c] {
			errs = append(errs, field.Duplicate(p.Index(i), c))
		}
		seen[c] = true
	}
	return errs
}

// validateNodeTaints: keys are label names, values label values, effects
// known, and no two taints share key and effect.
func validateNodeTaints(taints []api.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[api.TaintEffect]map[string]bool{}
	for i, t := range taints {
		ip := p.Index(i)
		errs = append(errs, ValidateLabelName(t.Key, ip.Child("key"))...)
		if msgs := naming.IsValidLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, joinMsgs(msgs)))
		}
		if t.Effect == "" {
			errs = append(errs, field.Required(ip.Child("effect"), ""))
		} else {
			errs = append(errs, validateTaintEffect(t.Effect, ip.Child("effect"))...)
		}
		if seen[t.Effect][t.Key] {
			dup := field.Duplicate(ip, goValue{t})
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = map[string]bool{}
		}
		seen[t.Effect][t.Key] = true
	}
	return errs
}

func joinMsgs(msgs []string) string {
	out := ""
	for i, m := range msgs {
		if i > 0 {
			out += ";"
		}
		out += m
	}
	return out
}

func validateNodeResources(node *api.Node) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedResourceNames(node.Status.Capacity) {
		errs = append(errs, validateResourceQuantityValue(k, node.Status.Capacity[k], field.NewPath("status", "capacity", string(k)))...)
	}
	for _, k := range sortedResourceNames(node.Status.Allocatable) {
		errs = append(errs, validateResourceQuantityValue(k, node.Status.Allocatable[k], field.NewPath("status", "allocatable", string(k)))...)
	}
	return errs
}

// ValidateNodeUpdate checks a node update (also used for nodes/status):
// pod CIDRs and providerID may only go from unset to set, externalID never
// changes, and status addresses are unique.
func ValidateNodeUpdate(node, old *api.Node) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&node.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateNodeCommon(node)...)
	seen := map[api.NodeAddress]bool{}
	for i, a := range node.Status.Addresses {
		if seen[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), goValue{a}))
		}
		seen[a] = true
	}
	if oldCIDRs := nodePodCIDRs(&old.Spec); len(oldCIDRs) > 0 && !semanticEqual(oldCIDRs, nodePodCIDRs(&node.Spec)) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != node.Spec.ProviderID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	if node.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return errs
}
