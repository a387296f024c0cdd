package validation

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// The kinds served for issue 25 are checked for their main rules with
// Kubernetes' messages (pkg/apis/{scheduling,node,networking}/validation
// of v1.37.2). FlowSchemas, PriorityLevelConfigurations,
// MutatingAdmissionPolicies and their bindings, NetworkPolicies and
// ClusterTrustBundles get their object metadata checked only: kube's
// deeper rules for them are not written yet.

// Kubernetes' priority bounds and the classes it reserves.
const (
	// HighestUserDefinablePriority is the highest value a PriorityClass
	// not named system-* may have.
	HighestUserDefinablePriority = 1000000000
	systemPriorityClassPrefix    = "system-"
)

// SystemPriorityClasses are the classes the apiserver creates at start,
// the only system-* names allowed, with these values.
var SystemPriorityClasses = []api.PriorityClass{
	{ObjectMeta: api.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000,
		Description: "Used for system critical pods that must not be moved from their current node."},
	{ObjectMeta: api.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000,
		Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
}

// validateBuiltinKinds checks a kind of issue 25 being created, or
// updated when old is not nil; ok is false for the other kinds.
func validateBuiltinKinds(obj, old api.Object) (errs field.ErrorList, ok bool) {
	switch o := obj.(type) {
	case *api.PriorityClass:
		errs = validatePriorityClass(o)
		if old != nil {
			o2 := old.(*api.PriorityClass)
			if o.Value != o2.Value {
				errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
			}
			errs = append(errs, validateImmutable(o.PreemptionPolicy, o2.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
		}
	case *api.RuntimeClass:
		p := field.NewPath("handler")
		if o.Handler == "" {
			errs = append(errs, field.Required(p, ""))
		} else {
			for _, msg := range naming.NameIsDNSLabel(o.Handler, false) {
				errs = append(errs, field.Invalid(p, o.Handler, msg))
			}
		}
		// kube's declarative check of it prints no value.
		if old != nil && o.Handler != old.(*api.RuntimeClass).Handler {
			errs = append(errs, field.Invalid(p, (*string)(nil), fieldImmutableErrorMsg))
		}
	case *api.IngressClass:
		p := field.NewPath("spec", "controller")
		if old != nil {
			errs = append(errs, validateImmutable(o.Spec.Controller, old.(*api.IngressClass).Spec.Controller, p)...)
		}
		if len(o.Spec.Controller) > 250 {
			errs = append(errs, field.TooLong(p, "", 250))
		}
		errs = append(errs, domainPrefixedPath(p, o.Spec.Controller)...)
	case *api.Ingress:
		errs = validateIngressSpec(&o.Spec, field.NewPath("spec"))
	case *api.MutatingAdmissionPolicy:
		errs = validateMutatingAdmissionPolicy(&o.Spec, field.NewPath("spec"))
	case *api.MutatingAdmissionPolicyBinding:
		errs = validateMutatingAdmissionPolicyBinding(&o.Spec, field.NewPath("spec"))
	case *api.NetworkPolicy, *api.FlowSchema, *api.PriorityLevelConfiguration, *api.ClusterTrustBundle:
		// Metadata only, for now (see above).
	default:
		return nil, false
	}
	return errs, true
}

func validatePriorityClass(pc *api.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

// knownSystemPriorityClass is kube's IsKnownSystemPriorityClass.
func knownSystemPriorityClass(pc *api.PriorityClass) error {
	for _, s := range SystemPriorityClasses {
		if s.Name == pc.Name {
			if s.Value != pc.Value {
				return fmt.Errorf("value of %v PriorityClass must be %v", s.Name, s.Value)
			}
			if s.GlobalDefault != pc.GlobalDefault {
				return fmt.Errorf("globalDefault of %v PriorityClass must be %v", s.Name, s.GlobalDefault)
			}
			return nil
		}
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}

func validatePreemptionPolicy(p *api.PreemptionPolicy, path *field.Path) field.ErrorList {
	switch *p {
	case api.PreemptLowerPriority, api.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, string(*p), []string{string(api.PreemptLowerPriority), string(api.PreemptNever)})}
}

// domainPrefixedPath is apimachinery's IsDomainPrefixedPath: a DNS
// subdomain, a slash, and a path.
func domainPrefixedPath(p *field.Path, dpPath string) field.ErrorList {
	if dpPath == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	segments := strings.SplitN(dpPath, "/", 2)
	if len(segments) != 2 || segments[0] == "" || segments[1] == "" {
		return field.ErrorList{field.Invalid(p, dpPath, "must be a domain-prefixed path (such as \"acme.io/foo\")")}
	}
	var errs field.ErrorList
	host, path := segments[0], segments[1]
	for _, msg := range naming.IsDNS1123Subdomain(host) {
		errs = append(errs, field.Invalid(p, host, msg))
	}
	for _, c := range path {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=/%", c) {
			errs = append(errs, field.Invalid(p, path, "Invalid path"))
			break
		}
	}
	return errs
}

func validateIngressSpec(spec *api.IngressSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		// kube prints the empty rules as null.
		errs = append(errs, field.Invalid(p, (*string)(nil), "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i, r := range spec.Rules {
		rp := p.Child("rules").Index(i)
		if r.Host != "" {
			if net.ParseIP(r.Host) != nil {
				errs = append(errs, field.Invalid(rp.Child("host"), r.Host, "must be a DNS name, not an IP address"))
			}
			if !strings.Contains(r.Host, "*") {
				for _, msg := range naming.IsDNS1123Subdomain(r.Host) {
					errs = append(errs, field.Invalid(rp.Child("host"), r.Host, msg))
				}
			}
		}
		if r.HTTP == nil {
			continue
		}
		hp := rp.Child("http")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(hp.Child("paths"), ""))
		}
		for j := range r.HTTP.Paths {
			errs = append(errs, validateHTTPIngressPath(&r.HTTP.Paths[j], hp.Child("paths").Index(j))...)
		}
	}
	if spec.IngressClassName != nil {
		for _, msg := range naming.IsDNS1123Subdomain(*spec.IngressClassName) {
			errs = append(errs, field.Invalid(p.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return errs
}

func validateHTTPIngressPath(path *api.HTTPIngressPath, p *field.Path) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *path.PathType {
	case "Exact", "Prefix":
		if !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
	case "ImplementationSpecific":
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *path.PathType, []string{"Exact", "ImplementationSpecific", "Prefix"}))
	}
	return append(errs, validateIngressBackend(&path.Backend, p.Child("backend"))...)
}

func validateIngressBackend(b *api.IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Service != nil:
		var errs field.ErrorList
		if b.Service.Name == "" {
			errs = append(errs, field.Required(p.Child("service", "name"), ""))
		} else {
			for _, msg := range naming.NameIsDNS1035Label(b.Service.Name, false) {
				errs = append(errs, field.Invalid(p.Child("service", "name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
		case port.Name == "" && port.Number == 0:
			errs = append(errs, field.Required(p, "port name or number is required"))
		}
		return errs
	case b.Resource == nil:
		return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
	}
	return nil
}

// mutatingOperations are the operations a mutating admission policy may
// match: kube's list (CONNECT included).
var mutatingOperations = []string{"*", "CONNECT", "CREATE", "UPDATE"}

func validateMutatingAdmissionPolicy(spec *api.MutatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.FailurePolicy == nil {
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	} else if !slices.Contains(failurePolicies, string(*spec.FailurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), string(*spec.FailurePolicy), failurePolicies))
	}
	if spec.ParamKind != nil {
		errs = append(errs, validateParamKind(spec.ParamKind, p.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(spec.MatchConstraints, p.Child("matchConstraints"))...)
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
		errs = append(errs, mutatingRuleOperations(spec.MatchConstraints, p.Child("matchConstraints"))...)
	}
	errs = append(errs, validateMatchConditions(spec.MatchConditions, p.Child("matchConditions"))...)
	for i, v := range spec.Variables {
		vp := p.Child("variables").Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(p.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range spec.Mutations {
		mp := p.Child("mutations").Index(i)
		switch m.PatchType {
		case "":
			errs = append(errs, field.Required(mp.Child("patchType"), ""))
		case "JSONPatch":
			if m.JSONPatch == nil {
				errs = append(errs, field.Required(mp.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
			}
			if m.ApplyConfiguration != nil {
				errs = append(errs, field.Invalid(mp.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
			}
		case "ApplyConfiguration":
			if m.ApplyConfiguration == nil {
				errs = append(errs, field.Required(mp.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
			}
			if m.JSONPatch != nil {
				errs = append(errs, field.Invalid(mp.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
			}
		default:
			errs = append(errs, field.NotSupported(mp.Child("patchType"), string(m.PatchType), []string{"ApplyConfiguration", "JSONPatch"}))
		}
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(p.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(reinvocations, string(spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), string(spec.ReinvocationPolicy), reinvocations))
	}
	return errs
}

func validateMutatingAdmissionPolicyBinding(spec *api.MutatingAdmissionPolicyBindingSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(p.Child("policyName"), ""))
	} else {
		for _, msg := range naming.NameIsDNSSubdomain(spec.PolicyName, false) {
			errs = append(errs, field.Invalid(p.Child("policyName"), spec.PolicyName, msg))
		}
	}
	errs = append(errs, validateParamRef(spec.ParamRef, p.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(spec.MatchResources, p.Child("matchResources"))...)
	if spec.MatchResources != nil {
		errs = append(errs, mutatingRuleOperations(spec.MatchResources, p.Child("matchResources"))...)
	}
	return errs
}

func mutatingRuleOperations(m *api.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !slices.Contains(mutatingOperations, string(op)) {
				errs = append(errs, field.NotSupported(p.Child("resourceRules", "operations"), string(op), mutatingOperations))
			}
		}
	}
	return errs
}
