package validation

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// The admissionregistration.k8s.io/v1 kinds, with the rules and messages of
// Kubernetes' pkg/apis/admissionregistration/validation. CEL expressions
// are only checked for presence here; the apiserver compiles them (the api
// package does not depend on a CEL implementation).

var (
	failurePolicies    = []string{string(api.FailurePolicyFail), string(api.FailurePolicyIgnore)}
	matchPolicies      = []string{string(api.MatchPolicyEquivalent), string(api.MatchPolicyExact)}
	noSideEffects      = []string{string(api.SideEffectClassNone), string(api.SideEffectClassNoneOnDryRun)}
	ruleOperations     = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	reinvocations      = []string{string(api.ReinvocationIfNeeded), string(api.ReinvocationNever)}
	ruleScopes         = []string{"*", string(api.ClusterScope), string(api.NamespacedScope)}
	validationActions  = []string{string(api.ValidationActionAudit), string(api.ValidationActionDeny), string(api.ValidationActionWarn)}
	policyReasons      = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	reviewVersions     = []string{"v1", "v1beta1"}
	maxAuditAnnotation = 20
)

// webhookFields are the fields the two webhook kinds share.
type webhookFields struct {
	name                    string
	clientConfig            api.WebhookClientConfig
	rules                   []api.RuleWithOperations
	failurePolicy           *api.FailurePolicyType
	matchPolicy             *api.MatchPolicyType
	namespaceSelector       *api.LabelSelector
	objectSelector          *api.LabelSelector
	sideEffects             *api.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	matchConditions         []api.MatchCondition
}

func mutatingFields(w *api.MutatingWebhook) webhookFields {
	return webhookFields{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector,
		w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions}
}

func validatingFields(w *api.ValidatingWebhook) webhookFields {
	return webhookFields{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector,
		w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions}
}

// validateWebhooks checks the webhooks of a configuration: each one, their
// admissionReviewVersions, and that their names are unique.
func validateWebhooks(hooks []webhookFields, extra func(i int, p *field.Path) field.ErrorList) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, h := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(&h, p)...)
		if extra != nil {
			errs = append(errs, extra(i, p)...)
		}
		errs = append(errs, validateAdmissionReviewVersions(h.admissionReviewVersions, p.Child("admissionReviewVersions"))...)
		if h.name != "" {
			if seen[h.name] {
				errs = append(errs, field.Duplicate(p.Child("name"), h.name))
			}
			seen[h.name] = true
		}
	}
	return errs
}

func validateWebhook(h *webhookFields, p *field.Path) field.ErrorList {
	errs := naming.IsFullyQualifiedName(p.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], p.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil && !slices.Contains(failurePolicies, string(*h.failurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), string(*h.failurePolicy), failurePolicies))
	}
	if h.matchPolicy != nil && !slices.Contains(matchPolicies, string(*h.matchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), string(*h.matchPolicy), matchPolicies))
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of "+strings.Join(noSideEffects, ", ")))
	} else if !slices.Contains(noSideEffects, string(*h.sideEffects)) {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), string(*h.sideEffects), noSideEffects))
	}
	if t := h.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	errs = append(errs, ValidateLabelSelector(h.namespaceSelector, LabelSelectorOptions{}, p.Child("namespaceSelector"))...)
	errs = append(errs, ValidateLabelSelector(h.objectSelector, LabelSelectorOptions{}, p.Child("objectSelector"))...)
	errs = append(errs, validateClientConfig(&h.clientConfig, p.Child("clientConfig"))...)
	errs = append(errs, validateMatchConditions(h.matchConditions, p.Child("matchConditions"))...)
	return errs
}

func validateClientConfig(cc *api.WebhookClientConfig, p *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(p, "exactly one of url or service is required")}
	case cc.URL != nil:
		return validateWebhookURL(*cc.URL, p.Child("url"))
	default:
		return validateWebhookService(cc.Service, p.Child("service"))
	}
}

func validateWebhookURL(raw string, p *field.Path) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(p, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

func validateWebhookService(s *api.ServiceReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if s.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	}
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	if msgs := naming.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(p.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if s.Path == nil || *s.Path == "/" || *s.Path == "" {
		return errs
	}
	path := *s.Path
	if path == "//" {
		return append(errs, field.Invalid(p.Child("path"), path, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(path, "/") {
		errs = append(errs, field.Invalid(p.Child("path"), path, "must start with a '/'"))
	}
	rest := strings.TrimSuffix(path[1:], "/")
	for i, seg := range strings.Split(rest, "/") {
		if seg == "" {
			errs = append(errs, field.Invalid(p.Child("path"), path, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range naming.IsDNS1123Subdomain(seg) {
			errs = append(errs, field.Invalid(p.Child("path"), path, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}

func validateAdmissionReviewVersions(versions []string, p *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "must specify one of "+strings.Join(reviewVersions, ", "))}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	accepted := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range naming.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		accepted = accepted || slices.Contains(reviewVersions, v)
	}
	if !accepted {
		errs = append(errs, field.Invalid(p, asJSON(versions), "must include at least one of "+strings.Join(reviewVersions, ", ")))
	}
	return errs
}

func validateRuleWithOperations(r *api.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, api.OperationAll) {
		errs = append(errs, field.Invalid(p.Child("operations"), asJSON(r.Operations), "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(ruleOperations, string(op)) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), string(op), ruleOperations))
		}
	}
	return append(errs, validateRule(&r.Rule, p)...)
}

func validateRule(r *api.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), asJSON(r.APIGroups), "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), asJSON(r.APIVersions), "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateRuleResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !slices.Contains(ruleScopes, string(*r.Scope)) {
		errs = append(errs, field.NotSupported(p.Child("scope"), string(*r.Scope), ruleScopes))
	}
	return errs
}

func validateRuleResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	wildSubOf, wildResOf := map[string]bool{}, map[string]bool{}
	doubleWild, singleWild, plainResource := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		doubleWild = doubleWild || rs == "*/*"
		singleWild = singleWild || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plainResource = rs != "*"
			continue
		}
		if wildSubOf[res] {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildResOf[sub] {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSubOf[res] = true
		}
		if res == "*" {
			wildResOf[sub] = true
		}
	}
	if len(resources) > 1 && doubleWild {
		errs = append(errs, field.Invalid(p, asJSON(resources), "if '*/*' is present, must not specify other resources"))
	}
	if singleWild && plainResource {
		errs = append(errs, field.Invalid(p, asJSON(resources), "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

func validateMatchConditions(m []api.MatchCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(m) > 64 {
		errs = append(errs, field.TooMany(p, len(m), 64))
	}
	seen := map[string]bool{}
	for i, c := range m {
		ip := p.Index(i)
		if strings.TrimSpace(c.Expression) == "" {
			errs = append(errs, field.Required(ip.Child("expression"), ""))
		}
		if c.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, validateQualifiedName(c.Name, ip.Child("name"))...)
			if seen[c.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
			}
			seen[c.Name] = true
		}
	}
	return errs
}

// validateAdmissionRegistration checks the fields besides metadata of an
// admissionregistration.k8s.io kind; ok is false for the other kinds.
// Kubernetes checks updates as creates (relaxing rules an old object already
// broke, which minik8s never stored).
func validateAdmissionRegistration(obj api.Object) (errs field.ErrorList, ok bool) {
	switch o := obj.(type) {
	case *api.MutatingWebhookConfiguration:
		return validateMutatingWebhookConfiguration(o), true
	case *api.ValidatingWebhookConfiguration:
		return validateValidatingWebhookConfiguration(o), true
	case *api.ValidatingAdmissionPolicy:
		return validateValidatingAdmissionPolicy(o), true
	case *api.ValidatingAdmissionPolicyBinding:
		return validateValidatingAdmissionPolicyBinding(o), true
	}
	return nil, false
}

func validateMutatingWebhookConfiguration(c *api.MutatingWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	hooks := make([]webhookFields, len(c.Webhooks))
	for i := range c.Webhooks {
		hooks[i] = mutatingFields(&c.Webhooks[i])
	}
	return append(errs, validateWebhooks(hooks, func(i int, p *field.Path) field.ErrorList {
		if r := c.Webhooks[i].ReinvocationPolicy; r != nil && !slices.Contains(reinvocations, string(*r)) {
			return field.ErrorList{field.NotSupported(p.Child("reinvocationPolicy"), string(*r), reinvocations)}
		}
		return nil
	})...)
}

func validateValidatingWebhookConfiguration(c *api.ValidatingWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	hooks := make([]webhookFields, len(c.Webhooks))
	for i := range c.Webhooks {
		hooks[i] = validatingFields(&c.Webhooks[i])
	}
	return append(errs, validateWebhooks(hooks, nil)...)
}

func validateValidatingAdmissionPolicy(vap *api.ValidatingAdmissionPolicy) field.ErrorList {
	var errs field.ErrorList
	spec, p := &vap.Spec, field.NewPath("spec")
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
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(p.Child("validations"), msg), field.Required(p.Child("auditAnnotations"), msg))
	}
	for i, v := range spec.Validations {
		errs = append(errs, validateValidation(&v, p.Child("validations").Index(i))...)
	}
	if len(spec.AuditAnnotations) > maxAuditAnnotation {
		errs = append(errs, field.Invalid(p.Child("auditAnnotations"), asJSON(spec.AuditAnnotations),
			fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotation)))
	}
	keys := map[string]bool{}
	for i, a := range spec.AuditAnnotations {
		ap := p.Child("auditAnnotations").Index(i)
		if vap.Name != "" {
			errs = append(errs, validateQualifiedName(vap.Name+"/"+a.Key, ap.Child("key"))...)
		} else {
			errs = append(errs, field.Invalid(ap.Child("key"), a.Key, "requires metadata.name be non-empty"))
		}
		if strings.TrimSpace(a.ValueExpression) == "" {
			errs = append(errs, field.Required(ap.Child("valueExpression"), "valueExpression is not specified"))
		}
		if keys[a.Key] {
			errs = append(errs, field.Duplicate(ap.Child("key"), a.Key))
		}
		keys[a.Key] = true
	}
	return errs
}

func validateValidation(v *api.Validation, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(p.Child("expression"), "expression is not specified"))
	}
	if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
		errs = append(errs, field.Invalid(p.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	}
	msg := strings.TrimSpace(v.Message)
	if v.Message != "" && msg == "" {
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must be non-empty if specified"))
	} else if strings.ContainsAny(msg, "\r\n") {
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !slices.Contains(policyReasons, string(*v.Reason)) {
		errs = append(errs, field.NotSupported(p.Child("reason"), string(*v.Reason), policyReasons))
	}
	return errs
}

func validateParamKind(pk *api.ParamKind, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else {
		group, version, hasGroup := strings.Cut(pk.APIVersion, "/")
		if !hasGroup {
			group, version = "", pk.APIVersion
		}
		switch {
		case strings.Count(pk.APIVersion, "/") > 1:
			errs = append(errs, field.Invalid(p.Child("apiVersion"), pk.APIVersion, "unexpected GroupVersion string: "+pk.APIVersion))
		default:
			if group != "" {
				if msgs := naming.IsDNS1123Subdomain(group); len(msgs) > 0 {
					errs = append(errs, field.Invalid(p.Child("apiVersion"), group, strings.Join(msgs, ",")))
				}
			}
			if version == "" {
				errs = append(errs, field.Invalid(p.Child("apiVersion"), pk.APIVersion, "version must be specified"))
			} else if msgs := naming.IsDNS1035Label(version); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("apiVersion"), version, strings.Join(msgs, ",")))
			}
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := naming.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

func validateMatchResources(m *api.MatchResources, p *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else if !slices.Contains(matchPolicies, string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), string(*m.MatchPolicy), matchPolicies))
	}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, ValidateLabelSelector(m.NamespaceSelector, LabelSelectorOptions{}, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(p.Child("objectSelector"), ""))
	} else {
		errs = append(errs, ValidateLabelSelector(m.ObjectSelector, LabelSelectorOptions{}, p.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], p.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func validateNamedRule(r *api.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, n := range r.ResourceNames {
		for _, msg := range naming.IsValidPathSegmentName(n) {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), n, msg))
		}
		if seen[n] {
			errs = append(errs, field.Duplicate(p.Child("resourceNames").Index(i), n))
		}
		seen[n] = true
	}
	return append(errs, validateRuleWithOperations(&r.RuleWithOperations, p)...)
}

func validateValidatingAdmissionPolicyBinding(b *api.ValidatingAdmissionPolicyBinding) field.ErrorList {
	var errs field.ErrorList
	spec, p := &b.Spec, field.NewPath("spec")
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(p.Child("policyName"), ""))
	} else {
		for _, msg := range naming.NameIsDNSSubdomain(spec.PolicyName, false) {
			errs = append(errs, field.Invalid(p.Child("policyName"), spec.PolicyName, msg))
		}
	}
	errs = append(errs, validateParamRef(spec.ParamRef, p.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(spec.MatchResources, p.Child("matchResources"))...)
	ap := p.Child("validationActions")
	seen := map[api.ValidationAction]bool{}
	for i, a := range spec.ValidationActions {
		if !slices.Contains(validationActions, string(a)) {
			errs = append(errs, field.NotSupported(ap.Index(i), string(a), validationActions))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(ap.Index(i), string(a)))
		}
		seen[a] = true
	}
	if seen[api.ValidationActionDeny] && seen[api.ValidationActionWarn] {
		errs = append(errs, field.Invalid(ap, asJSON(spec.ValidationActions),
			"must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(ap, "at least one validation action is required"))
	}
	return errs
}

func validateParamRef(pr *api.ParamRef, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	if pr.Name != "" {
		for _, msg := range naming.IsValidPathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), "name and selector are mutually exclusive"))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, ValidateLabelSelector(pr.Selector, LabelSelectorOptions{}, p.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), "name and selector are mutually exclusive"))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(p, "one of name or selector must be specified"))
	}
	actions := []string{string(api.ParameterNotFoundDeny), string(api.ParameterNotFoundAllow)}
	if pr.ParameterNotFoundAction == nil || *pr.ParameterNotFoundAction == "" {
		errs = append(errs, field.Required(p.Child("parameterNotFoundAction"), ""))
	} else if !slices.Contains(actions, string(*pr.ParameterNotFoundAction)) {
		errs = append(errs, field.NotSupported(p.Child("parameterNotFoundAction"), string(*pr.ParameterNotFoundAction), actions))
	}
	return errs
}

// jsonValue renders a bad value as Kubernetes' field errors do for lists
// and structs: as JSON (["v2"], not [v2]).
type jsonValue struct{ v any }

func asJSON(v any) jsonValue { return jsonValue{v} }

func (j jsonValue) String() string {
	data, err := json.Marshal(j.v)
	if err != nil {
		return fmt.Sprintf("%v", j.v)
	}
	return string(data)
}

// isCELIdentifier reports whether s is a CEL identifier that is not a
// reserved word, as Kubernetes requires of variable names.
func isCELIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	switch s {
	case "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
		"import", "let", "loop", "package", "namespace", "return", "var", "void", "while":
		return false
	}
	return true
}
