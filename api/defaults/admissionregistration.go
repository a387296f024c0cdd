package defaults

import "github.com/minik8s/minik8s/api"

// admissionRegistration defaults the admissionregistration.k8s.io/v1 kinds
// as Kubernetes' SetObjectDefaults_* do; it reports whether obj is one of
// them.
func admissionRegistration(obj api.Object) bool {
	switch o := obj.(type) {
	case *api.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			w := &o.Webhooks[i]
			webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds,
				&w.ClientConfig, w.Rules)
			if w.ReinvocationPolicy == nil {
				w.ReinvocationPolicy = ptr(api.ReinvocationNever)
			}
		}
	case *api.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			w := &o.Webhooks[i]
			webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds,
				&w.ClientConfig, w.Rules)
		}
	case *api.ValidatingAdmissionPolicy:
		if o.Spec.FailurePolicy == nil {
			o.Spec.FailurePolicy = ptr(api.FailurePolicyFail)
		}
		matchResources(o.Spec.MatchConstraints)
	case *api.ValidatingAdmissionPolicyBinding:
		matchResources(o.Spec.MatchResources)
	default:
		return false
	}
	return true
}

func webhookCommon(failure **api.FailurePolicyType, match **api.MatchPolicyType, nsSel, objSel **api.LabelSelector,
	timeout **int32, cc *api.WebhookClientConfig, rules []api.RuleWithOperations) {
	if *failure == nil {
		*failure = ptr(api.FailurePolicyFail)
	}
	if *match == nil {
		*match = ptr(api.MatchPolicyEquivalent)
	}
	if *nsSel == nil {
		*nsSel = &api.LabelSelector{}
	}
	if *objSel == nil {
		*objSel = &api.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr(int32(10))
	}
	if cc.Service != nil && cc.Service.Port == nil {
		cc.Service.Port = ptr(int32(443))
	}
	for i := range rules {
		ruleScope(&rules[i].Rule)
	}
}

func ruleScope(r *api.Rule) {
	if r.Scope == nil {
		r.Scope = ptr(api.AllScopes)
	}
}

func matchResources(m *api.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr(api.MatchPolicyEquivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &api.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &api.LabelSelector{}
	}
	for i := range m.ResourceRules {
		ruleScope(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		ruleScope(&m.ExcludeResourceRules[i].Rule)
	}
}
