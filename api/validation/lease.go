package validation

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// ValidateLease checks a lease: positive duration, non-negative transition
// count, and a preferred holder only with a strategy.
func ValidateLease(l *api.Lease) field.ErrorList {
	errs := ValidateObjectMeta(&l.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}

func validateLeaseSpec(s *api.LeaseSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := s.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := s.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	if s.Strategy != nil {
		errs = append(errs, validateQualifiedName(*s.Strategy, p.Child("strategy"))...)
	}
	if s.PreferredHolder != nil && *s.PreferredHolder != "" && (s.Strategy == nil || *s.Strategy == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// ValidateLeaseUpdate checks a lease update.
func ValidateLeaseUpdate(l, old *api.Lease) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&l.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}
