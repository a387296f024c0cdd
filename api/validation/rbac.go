package validation

import (
	"fmt"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// validateRBACName is Kubernetes' ValidateRBACName: role and binding names
// only need to be path segments, so "system:node" is a valid name.
var validateRBACName NameFunc = naming.ValidatePathSegmentName

// ValidateRole checks a namespaced role: metadata and each rule.
func ValidateRole(r *api.Role) field.ErrorList {
	errs := ValidateObjectMeta(&r.ObjectMeta, true, validateRBACName, field.NewPath("metadata"))
	for i := range r.Rules {
		errs = append(errs, ValidatePolicyRule(&r.Rules[i], true, field.NewPath("rules").Index(i))...)
	}
	return errs
}

// ValidateRoleUpdate checks an update of a role.
func ValidateRoleUpdate(r, old *api.Role) field.ErrorList {
	errs := ValidateRole(r)
	return append(errs, ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidateClusterRole checks a cluster role: metadata, each rule (which may
// name non-resource URLs) and the aggregation rule's selectors.
func ValidateClusterRole(r *api.ClusterRole) field.ErrorList {
	errs := ValidateObjectMeta(&r.ObjectMeta, false, validateRBACName, field.NewPath("metadata"))
	for i := range r.Rules {
		errs = append(errs, ValidatePolicyRule(&r.Rules[i], false, field.NewPath("rules").Index(i))...)
	}
	if ar := r.AggregationRule; ar != nil {
		p := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(ar.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range ar.ClusterRoleSelectors {
			errs = append(errs, ValidateLabelSelector(&ar.ClusterRoleSelectors[i], LabelSelectorOptions{}, p.Index(i))...)
		}
	}
	return errs
}

// ValidateClusterRoleUpdate checks an update of a cluster role.
func ValidateClusterRoleUpdate(r, old *api.ClusterRole) field.ErrorList {
	errs := ValidateClusterRole(r)
	return append(errs, ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidatePolicyRule checks one rule: verbs are required; a rule is either
// about non-resource URLs (cluster roles only) or about resources, which
// then need API groups and resources.
func ValidatePolicyRule(rule *api.PolicyRule, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Verbs) == 0 {
		errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), printable(rule.NonResourceURLs), "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), printable(rule.NonResourceURLs), "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

// ValidateRoleBinding checks a role binding: its roleRef (a Role or
// ClusterRole of the RBAC group) and subjects.
func ValidateRoleBinding(b *api.RoleBinding) field.ErrorList {
	errs := ValidateObjectMeta(&b.ObjectMeta, true, validateRBACName, field.NewPath("metadata"))
	errs = append(errs, validateRoleRef(&b.RoleRef, []string{"Role", "ClusterRole"})...)
	for i := range b.Subjects {
		errs = append(errs, ValidateSubject(&b.Subjects[i], true, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// ValidateRoleBindingUpdate checks an update of a role binding; its roleRef
// cannot change (delete and recreate the binding instead).
func ValidateRoleBindingUpdate(b, old *api.RoleBinding) field.ErrorList {
	errs := ValidateRoleBinding(b)
	errs = append(errs, ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(errs, validateRoleRefUnchanged(b.RoleRef, old.RoleRef)...)
}

// ValidateClusterRoleBinding checks a cluster role binding: its roleRef (a
// ClusterRole) and subjects, whose service accounts need a namespace.
func ValidateClusterRoleBinding(b *api.ClusterRoleBinding) field.ErrorList {
	errs := ValidateObjectMeta(&b.ObjectMeta, false, validateRBACName, field.NewPath("metadata"))
	errs = append(errs, validateRoleRef(&b.RoleRef, []string{"ClusterRole"})...)
	for i := range b.Subjects {
		errs = append(errs, ValidateSubject(&b.Subjects[i], false, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// ValidateClusterRoleBindingUpdate checks an update of a cluster role
// binding; its roleRef cannot change.
func ValidateClusterRoleBindingUpdate(b, old *api.ClusterRoleBinding) field.ErrorList {
	errs := ValidateClusterRoleBinding(b)
	errs = append(errs, ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(errs, validateRoleRefUnchanged(b.RoleRef, old.RoleRef)...)
}

func validateRoleRef(ref *api.RoleRef, kinds []string) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("roleRef")
	if ref.APIGroup != api.RBACGroupName {
		errs = append(errs, field.NotSupported(p.Child("apiGroup"), ref.APIGroup, []string{api.RBACGroupName}))
	}
	if !slices.Contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(p.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range validateRBACName(ref.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

func validateRoleRefUnchanged(ref, old api.RoleRef) field.ErrorList {
	if ref == old {
		return nil
	}
	// Kubernetes prints its internal type here.
	v := rawText(fmt.Sprintf("rbac.RoleRef{APIGroup:%q, Kind:%q, Name:%q}", ref.APIGroup, ref.Kind, ref.Name))
	return field.ErrorList{field.Invalid(field.NewPath("roleRef"), v, "cannot change roleRef")}
}

// ValidateSubject checks one subject of a binding: a name, a supported
// kind, the apiGroup that kind requires, and for service accounts a valid
// name and (in cluster role bindings) a namespace.
func ValidateSubject(s *api.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	switch s.Kind {
	case api.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range naming.ValidateServiceAccountName(s.Name, false) {
				errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case api.UserKind, api.GroupKind:
		if s.APIGroup != api.RBACGroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{api.RBACGroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{api.ServiceAccountKind, api.UserKind, api.GroupKind}))
	}
	return errs
}
