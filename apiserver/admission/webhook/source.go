package webhook

import (
	"net/url"
	"strconv"
	"time"

	"github.com/minik8s/minik8s/api"
)

// Source lists the webhook configurations, sorted by name, from the watch
// caches. The objects are shared: never modified.
type Source interface {
	MutatingWebhookConfigurations() []*api.MutatingWebhookConfiguration
	ValidatingWebhookConfigurations() []*api.ValidatingWebhookConfiguration
}

// ServiceResolver gives the https URL (scheme and host) a Service port is
// reached at.
type ServiceResolver interface {
	ResolveEndpoint(namespace, name string, port int32) (*url.URL, error)
}

// The kinds of webhook configuration, as the hooks' ids and the compiled
// matchConditions are keyed: a mutating and a validating configuration may
// share a name.
const (
	kindMutating   = "mutating"
	kindValidating = "validating"
)

// hook is one webhook of either kind, with its defaults resolved.
type hook struct {
	// id identifies the webhook: kind, configuration name and index.
	id                string
	configuration     string
	configurationRV   string
	mutating          bool
	name              string
	clientConfig      api.WebhookClientConfig
	rules             []api.RuleWithOperations
	ignoreFailures    bool
	equivalent        bool
	namespaceSelector *api.LabelSelector
	objectSelector    *api.LabelSelector
	sideEffects       api.SideEffectClass
	timeout           time.Duration
	reviewVersions    []string
	reinvokeIfNeeded  bool
	matchConditions   []api.MatchCondition
}

// kind is kindMutating or kindValidating.
func (h *hook) kind() string {
	if h.mutating {
		return kindMutating
	}
	return kindValidating
}

func newHook(kind, config, rv string, index int, name string, cc api.WebhookClientConfig, rules []api.RuleWithOperations,
	fp *api.FailurePolicyType, mp *api.MatchPolicyType, ns, obj *api.LabelSelector, se *api.SideEffectClass,
	timeout *int32, versions []string, conditions []api.MatchCondition) hook {
	h := hook{
		id: kind + "/" + config + "/" + strconv.Itoa(index), mutating: kind == kindMutating, configuration: config, configurationRV: rv, name: name, clientConfig: cc, rules: rules,
		ignoreFailures:    fp != nil && *fp == api.FailurePolicyIgnore,
		equivalent:        mp == nil || *mp == api.MatchPolicyEquivalent,
		namespaceSelector: ns, objectSelector: obj, timeout: 10 * time.Second,
		reviewVersions: versions, matchConditions: conditions,
	}
	if se != nil {
		h.sideEffects = *se
	}
	if timeout != nil {
		h.timeout = time.Duration(*timeout) * time.Second
	}
	return h
}

func mutatingHooks(configs []*api.MutatingWebhookConfiguration) []hook {
	var out []hook
	for _, c := range configs {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			h := newHook(kindMutating, c.Name, c.ResourceVersion, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector,
				w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions)
			h.reinvokeIfNeeded = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == api.ReinvocationIfNeeded
			out = append(out, h)
		}
	}
	return out
}

func validatingHooks(configs []*api.ValidatingWebhookConfiguration) []hook {
	var out []hook
	for _, c := range configs {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			out = append(out, newHook(kindValidating, c.Name, c.ResourceVersion, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy,
				w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions))
		}
	}
	return out
}
