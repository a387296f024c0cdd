package validation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/api/resource"
)

// standardResources are the unprefixed resource names Kubernetes knows
// (plus hugepages-<size>).
var standardResources = []string{
	"cpu", "memory", "ephemeral-storage", "storage", "pods", "services", "replicationcontrollers",
	"resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "services.nodeports",
	"services.loadbalancers", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
	"requests.storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
}

// integerResources must be whole numbers.
var integerResources = []string{"pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
	"configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"}

const hugePagesPrefix = "hugepages-"

func isHugePages(name api.ResourceName) bool { return strings.HasPrefix(string(name), hugePagesPrefix) }

// isNativeResource: no domain, or a kubernetes.io domain.
func isNativeResource(name api.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/")
}

// isExtendedResource: a domain-prefixed name outside kubernetes.io, such as
// example.com/gpu.
func isExtendedResource(name api.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), "requests.") {
		return false
	}
	return len(naming.IsQualifiedName("requests."+string(name))) == 0
}

// isOvercommitAllowed: requests may be below limits only for native
// resources other than huge pages.
func isOvercommitAllowed(name api.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

func validateResourceName(name api.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, string(name), msg))
	}
	if len(errs) != 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") && !slices.Contains(standardResources, string(name)) && !isHugePages(name) {
		errs = append(errs, field.Invalid(p, string(name), "must be a standard resource type or fully qualified"))
	}
	return errs
}

func validateContainerResourceName(name api.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(name, p)
	if !strings.Contains(string(name), "/") {
		switch {
		case name == api.ResourceCPU, name == api.ResourceMemory, name == api.ResourceEphemeralStorage, isHugePages(name):
		default:
			errs = append(errs, field.Invalid(p, string(name), "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResource(name) {
		errs = append(errs, field.Invalid(p, string(name), "doesn't follow extended resource name standard"))
	}
	return errs
}

// validateResourceQuantityValue: amounts are non-negative, and integers for
// countable and extended resources.
func validateResourceQuantityValue(name api.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), isNegativeErrorMsg))
	}
	if slices.Contains(integerResources, string(name)) || isExtendedResource(name) {
		if q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, q.String(), isNotIntegerErrorMsg))
		}
	}
	return errs
}

// validateHugePagesValue: a huge page amount is a multiple of the page size.
func validateHugePagesValue(name api.ResourceName, q resource.Quantity) error {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), hugePagesPrefix))
	if err != nil || size.Sign() <= 0 {
		return fmt.Errorf("%s is not positive integer multiple of %s", q.String(), name)
	}
	if q.Value()%size.Value() != 0 {
		return fmt.Errorf("%s is not positive integer multiple of %s", q.String(), name)
	}
	return nil
}

// validateResourceRequirements checks a container's requests and limits:
// names, amounts, and requests not above limits (equal to them for
// resources that cannot be overcommitted).
func validateResourceRequirements(r *api.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := p.Child("limits"), p.Child("requests")
	limCPUOrMem, reqCPUOrMem, limHuge, reqHuge := false, false, false, false
	for _, k := range sortedResourceNames(r.Limits) {
		q := r.Limits[k]
		kp := limPath.Key(string(k))
		errs = append(errs, validateContainerResourceName(k, kp)...)
		errs = append(errs, validateResourceQuantityValue(k, q, kp)...)
		if isHugePages(k) {
			limHuge = true
			if err := validateHugePagesValue(k, q); err != nil {
				errs = append(errs, field.Invalid(kp, q.String(), err.Error()))
			}
		}
		if k == api.ResourceCPU || k == api.ResourceMemory {
			limCPUOrMem = true
		}
	}
	for _, k := range sortedResourceNames(r.Requests) {
		q := r.Requests[k]
		kp := reqPath.Key(string(k))
		errs = append(errs, validateContainerResourceName(k, kp)...)
		errs = append(errs, validateResourceQuantityValue(k, q, kp)...)
		if limit, ok := r.Limits[k]; ok {
			if q.Cmp(limit) != 0 && !isOvercommitAllowed(k) {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", k, limit.String())))
			} else if q.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", k, limit.String())))
			}
		} else if !isOvercommitAllowed(k) {
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(k) {
			reqHuge = true
			if err := validateHugePagesValue(k, q); err != nil {
				errs = append(errs, field.Invalid(kp, q.String(), err.Error()))
			}
		}
		if k == api.ResourceCPU || k == api.ResourceMemory {
			reqCPUOrMem = true
		}
	}
	if !limCPUOrMem && !reqCPUOrMem && (limHuge || reqHuge) {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	return errs
}

func sortedResourceNames(rl api.ResourceList) []api.ResourceName {
	names := make([]string, 0, len(rl))
	for k := range rl {
		names = append(names, string(k))
	}
	sortStrings(names)
	out := make([]api.ResourceName, len(names))
	for i, n := range names {
		out[i] = api.ResourceName(n)
	}
	return out
}
