package validation

import (
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// ValidateAPIService checks an APIService as kube-aggregator does: its
// name is version.group, priorities in range, and a local one (no
// service) has no TLS settings.
func ValidateAPIService(s *api.APIService) field.ErrorList {
	required := s.Spec.Version + "." + s.Spec.Group
	errs := ValidateObjectMeta(&s.ObjectMeta, false, func(name string, prefix bool) []string {
		if msgs := naming.ValidatePathSegmentName(name, prefix); len(msgs) > 0 {
			return msgs
		}
		if name != required {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)}
		}
		return nil
	}, field.NewPath("metadata"))
	return append(errs, validateAPIServiceSpec(&s.Spec)...)
}

// ValidateAPIServiceUpdate checks an update of an APIService.
func ValidateAPIServiceUpdate(s, old *api.APIService) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, ValidateAPIService(s)...)
}

func validateAPIServiceSpec(s *api.APIServiceSpec) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if s.Group == "" && s.Version != "v1" {
		errs = append(errs, field.Required(spec.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if s.Group != "" {
		for _, msg := range naming.IsDNS1123Subdomain(s.Group) {
			errs = append(errs, field.Invalid(spec.Child("group"), s.Group, msg))
		}
	}
	for _, msg := range naming.IsDNS1035Label(s.Version) {
		errs = append(errs, field.Invalid(spec.Child("version"), s.Version, msg))
	}
	if s.GroupPriorityMinimum <= 0 || s.GroupPriorityMinimum > 20000 {
		errs = append(errs, field.Invalid(spec.Child("groupPriorityMinimum"), s.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if s.VersionPriority <= 0 || s.VersionPriority > 1000 {
		errs = append(errs, field.Invalid(spec.Child("versionPriority"), s.VersionPriority, "must be positive and less than 1000"))
	}
	if s.Service == nil {
		if len(s.CABundle) != 0 {
			errs = append(errs, field.Invalid(spec.Child("caBundle"), fmt.Sprintf("%d bytes", len(s.CABundle)), "local APIServices may not have a caBundle"))
		}
		if s.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), s.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	svc := spec.Child("service")
	if s.Service.Namespace == "" {
		errs = append(errs, field.Required(svc.Child("namespace"), ""))
	}
	if s.Service.Name == "" {
		errs = append(errs, field.Required(svc.Child("name"), ""))
	}
	if s.Service.Port != nil {
		if msgs := naming.IsValidPortNum(int(*s.Service.Port)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(svc.Child("port"), *s.Service.Port, "port is not valid: "+strings.Join(msgs, ", ")))
		}
	}
	if s.InsecureSkipTLSVerify && len(s.CABundle) > 0 {
		errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), s.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return errs
}
