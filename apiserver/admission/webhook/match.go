package webhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/admission"
)

// target is what a matched webhook is sent: the request's own resource, or
// with matchPolicy Equivalent the equivalent one a rule named, and the
// conversions of the objects to and from it.
type target struct {
	resource    api.ResourceInfo
	subresource string
	toTarget    func(api.Object) api.Object // nil: the same kind
	fromTarget  func(api.Object) api.Object
}

// equivalent is a resource served in two API groups over one storage,
// with the conversions between them.
type equivalent struct {
	a, b       api.GroupResource
	aToB, bToA func(api.Object) api.Object
}

// equivalents are the resources minik8s serves twice: core/v1 and
// events.k8s.io/v1 Events (kube's EquivalentResourceMapper has these and
// every other resource served at several versions, which minik8s does not).
var equivalents = []equivalent{{
	a:    api.GroupResource{Group: "", Resource: "events"},
	b:    api.GroupResource{Group: "events.k8s.io", Resource: "events"},
	aToB: func(o api.Object) api.Object { return api.EventToV1(o.(*api.Event)) },
	bToA: func(o api.Object) api.Object { return api.EventFromV1(o.(*api.EventV1)) },
}}

func equivalentsOf(r api.ResourceInfo, sub string) []target {
	var out []target
	for _, e := range equivalents {
		from, to, conv, back := e.a, e.b, e.aToB, e.bToA
		if r.Group == e.b.Group && r.Resource == e.b.Resource {
			from, to, conv, back = e.b, e.a, e.bToA, e.aToB
		}
		if r.Group != from.Group || r.Resource != from.Resource {
			continue
		}
		if info, ok := api.LookupResource(to.Group, to.Resource); ok {
			out = append(out, target{resource: info, subresource: sub, toTarget: conv, fromTarget: back})
		}
	}
	return out
}

// exempt reports whether a request is never sent to webhooks: writes of the
// admission configurations themselves, so that a broken webhook can always
// be removed (kube's IsExemptAdmissionConfigurationResource).
func exempt(a *admission.Attributes) bool {
	if a.Resource.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch a.Resource.Resource {
	case "validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
		"validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}

// RuleMatches reports whether rule matches an operation on resource (and
// subresource) in namespace ns, as kube's rules.Matcher does.
func RuleMatches(rule *api.RuleWithOperations, op admission.Operation, r api.ResourceInfo, sub, ns string) bool {
	return opMatches(rule.Operations, op) && scopeMatches(rule.Scope, r, ns) &&
		listMatches(rule.APIGroups, r.Group) && listMatches(rule.APIVersions, r.Version) &&
		resourceMatches(rule.Resources, r.Resource, sub)
}

func opMatches(ops []api.OperationType, op admission.Operation) bool {
	for _, o := range ops {
		if o == api.OperationAll || string(o) == string(op) {
			return true
		}
	}
	return false
}

func listMatches(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// scopeMatches: Namespace objects are cluster-scoped whatever their
// request's namespace says.
func scopeMatches(scope *api.ScopeType, r api.ResourceInfo, ns string) bool {
	if scope == nil {
		return true
	}
	isNamespace := r.Group == "" && r.Resource == "namespaces"
	switch *scope {
	case api.NamespacedScope:
		return !isNamespace && ns != ""
	case api.ClusterScope:
		return isNamespace || ns == ""
	}
	return true
}

func resourceMatches(resources []string, res, sub string) bool {
	for _, rs := range resources {
		r, s, _ := strings.Cut(rs, "/")
		if (r == "*" || r == res) && (s == "*" || s == sub) {
			return true
		}
	}
	return false
}

// match decides whether h is called for a, and with what. A selector
// error counts only for a webhook whose rules match.
func (d *dispatcher) match(ctx context.Context, h *hook, a *admission.Attributes) (*target, error) {
	nsOK, nsErr := d.namespaceMatches(ctx, h.namespaceSelector, a)
	if !nsOK && nsErr == nil {
		return nil, nil
	}
	objOK, objErr := objectMatches(h.objectSelector, a)
	if !objOK && objErr == nil {
		return nil, nil
	}
	var t *target
	for i := range h.rules {
		if RuleMatches(&h.rules[i], a.Operation, a.Resource, a.Subresource, a.Namespace) {
			t = &target{resource: a.Resource, subresource: a.Subresource}
			break
		}
	}
	if t == nil && h.equivalent {
	search:
		for _, eq := range equivalentsOf(a.Resource, a.Subresource) {
			for i := range h.rules {
				if RuleMatches(&h.rules[i], a.Operation, eq.resource, eq.subresource, a.Namespace) {
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

// namespaceMatches applies a namespaceSelector: cluster-scoped objects
// other than Namespaces always match; a Namespace is matched on its own
// labels.
func (d *dispatcher) namespaceMatches(ctx context.Context, sel *api.LabelSelector, a *admission.Attributes) (bool, error) {
	if sel == nil || len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return true, nil
	}
	isNamespace := a.Resource.Group == "" && a.Resource.Resource == "namespaces"
	if a.Namespace == "" && !isNamespace {
		return true, nil
	}
	s, err := labels.SelectorFromLabelSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	var set map[string]string
	if isNamespace {
		obj := a.Object
		if obj == nil {
			obj = a.OldObject
		}
		if obj != nil {
			set = obj.GetObjectMeta().Labels
		}
	} else {
		l, found, err := d.namespaces.NamespaceLabels(ctx, a.Namespace)
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		if !found {
			return false, apierrors.NewInternalError(fmt.Errorf("namespaces %q not found", a.Namespace))
		}
		set = l
	}
	return s.Matches(labels.Set(set)), nil
}

// objectMatches applies an objectSelector to the new or the old object:
// either matching is enough.
func objectMatches(sel *api.LabelSelector, a *admission.Attributes) (bool, error) {
	if sel == nil || len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return true, nil
	}
	s, err := labels.SelectorFromLabelSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	for _, o := range []api.Object{a.Object, a.OldObject} {
		if o != nil && s.Matches(labels.Set(o.GetObjectMeta().Labels)) {
			return true, nil
		}
	}
	return false, nil
}
