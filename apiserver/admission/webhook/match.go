package webhook

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
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
		// matchConditions need CEL, which the webhook dispatcher does not
		// evaluate yet: say so rather than call or skip the webhook silently.
		return nil, apierrors.NewInternalError(fmt.Errorf("webhook %q: matchConditions are not supported by this apiserver yet", h.name))
	}
	return t, nil
}
