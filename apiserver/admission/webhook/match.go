package webhook

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/admission/policy"
)

// match decides whether h is called for a, and with what. A selector
// error counts only for a webhook whose rules match.
func (d *dispatcher) match(ctx context.Context, h *hook, a *admission.Attributes) (*matching.Target, error) {
	nsOK, nsErr := matching.NamespaceMatches(ctx, d.namespaces, h.namespaceSelector, a)
	if !nsOK && nsErr == nil {
		return nil, nil
	}
	objOK, objErr := matching.ObjectMatches(h.objectSelector, a)
	if !objOK && objErr == nil {
		return nil, nil
	}
	var t *matching.Target
	for i := range h.rules {
		if matching.RuleMatches(&h.rules[i], a.Operation, a.Resource, a.Subresource, a.Namespace) {
			t = &matching.Target{Resource: a.Resource, Subresource: a.Subresource}
			break
		}
	}
	if t == nil && h.equivalent {
	search:
		for _, eq := range matching.Equivalents(a.Resource, a.Subresource) {
			for i := range h.rules {
				if matching.RuleMatches(&h.rules[i], a.Operation, eq.Resource, eq.Subresource, a.Namespace) {
					t = &eq
					break search
				}
			}
		}
	}
	if t == nil {
		return nil, nil
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if objErr != nil {
		return nil, objErr
	}
	if len(h.matchConditions) > 0 {
		ok, err := d.matchConditions(h).Match(ctx, a, t, d.authorizer)
		if err != nil || !ok {
			return nil, err
		}
	}
	return t, nil
}

// compiledConditions is a webhook's compiled matchConditions as of its
// configuration's resourceVersion.
type compiledConditions struct {
	rv         string
	conditions *policy.MatchConditions
}

// matchConditions returns h's compiled matchConditions, compiled once per
// configuration version.
func (d *dispatcher) matchConditions(h *hook) *policy.MatchConditions {
	kind := "validating"
	if h.mutating {
		kind = "admit"
	}
	fp := api.FailurePolicyFail
	if h.ignoreFailures {
		fp = api.FailurePolicyIgnore
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	byID := d.conditions[h.kind()]
	if c, ok := byID[h.id]; ok && c.rv == h.configurationRV {
		return c.conditions
	}
	c := &compiledConditions{rv: h.configurationRV, conditions: policy.CompileMatchConditions(h.matchConditions, &fp, kind, h.name)}
	if byID == nil {
		byID = map[string]*compiledConditions{}
		if d.conditions == nil {
			d.conditions = map[string]map[string]*compiledConditions{}
		}
		d.conditions[h.kind()] = byID
	}
	byID[h.id] = c
	return c.conditions
}

// retainConditions forgets the compiled matchConditions of kind's webhooks
// that hooks (all the webhooks of that kind now) no longer has: their
// configuration was deleted, lost webhooks, or changed (another
// resourceVersion). A request whose hooks all have their conditions
// cached, and nothing else cached, costs a look-up per hook.
func (d *dispatcher) retainConditions(kind string, hooks []hook) {
	d.mu.Lock()
	defer d.mu.Unlock()
	byID := d.conditions[kind]
	if len(byID) == 0 {
		return
	}
	live := 0
	for i := range hooks {
		if c, ok := byID[hooks[i].id]; ok && c.rv == hooks[i].configurationRV {
			live++
		}
	}
	if live == len(byID) {
		return
	}
	current := make(map[string]string, len(hooks))
	for i := range hooks {
		current[hooks[i].id] = hooks[i].configurationRV
	}
	for id, c := range byID {
		if rv, ok := current[id]; !ok || rv != c.rv {
			delete(byID, id)
		}
	}
}
