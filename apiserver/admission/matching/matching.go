package matching

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/admission"
)

// Target is the resource a request matched a rule as: its own, or with
// matchPolicy Equivalent the equivalent one a rule named, with the
// conversions of the objects to and from it.
type Target struct {
	Resource    api.ResourceInfo
	Subresource string
	ToTarget    func(api.Object) api.Object // nil: the same kind
	FromTarget  func(api.Object) api.Object
}

// equivalent is a resource served at two group-versions over one
// storage, with the conversions between them.
type equivalent struct {
	a, b       gvr
	aToB, bToA func(api.Object) api.Object
}

type gvr struct{ group, version, resource string }

func (g gvr) of(r api.ResourceInfo) bool {
	return r.Group == g.group && r.Version == g.version && r.Resource == g.resource
}

// equivalents are the resources minik8s serves twice, as kube's
// EquivalentResourceMapper has them: core/v1 and events.k8s.io/v1 Events,
// autoscaling/v2 and v1 HorizontalPodAutoscalers.
var equivalents = []equivalent{{
	a:    gvr{"", "v1", "events"},
	b:    gvr{"events.k8s.io", "v1", "events"},
	aToB: func(o api.Object) api.Object { return api.EventToV1(o.(*api.Event)) },
	bToA: func(o api.Object) api.Object { return api.EventFromV1(o.(*api.EventV1)) },
}, {
	a:    gvr{"autoscaling", "v2", "horizontalpodautoscalers"},
	b:    gvr{"autoscaling", "v1", "horizontalpodautoscalers"},
	aToB: func(o api.Object) api.Object { return api.HPAToV1(o.(*api.HorizontalPodAutoscaler)) },
	bToA: func(o api.Object) api.Object { return api.HPAFromV1(o.(*api.HorizontalPodAutoscalerV1)) },
}}

// Equivalents returns the resources equivalent to r (served in another
// group or version over the same storage), as targets of r's requests.
func Equivalents(r api.ResourceInfo, sub string) []Target {
	var out []Target
	for _, e := range equivalents {
		from, to, conv, back := e.a, e.b, e.aToB, e.bToA
		if e.b.of(r) {
			from, to, conv, back = e.b, e.a, e.bToA, e.aToB
		}
		if !from.of(r) {
			continue
		}
		for _, info := range api.Resources {
			if to.of(info) {
				out = append(out, Target{Resource: info, Subresource: sub, ToTarget: conv, FromTarget: back})
			}
		}
	}
	return out
}

// Exempt reports whether a request escapes webhooks and policies: writes
// of the admission configurations themselves, so that a broken webhook can
// always be removed (kube's IsExemptAdmissionConfigurationResource).
func Exempt(a *admission.Attributes) bool {
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

// Namespaces reads namespaces for namespaceSelectors and policies.
type Namespaces interface {
	// Namespace returns namespace name; found is false when it does not
	// exist.
	Namespace(ctx context.Context, name string) (ns *api.Namespace, found bool, err error)
}

// NamespaceMatches applies a namespaceSelector: cluster-scoped objects
// other than Namespaces always match; a Namespace is matched on its own
// labels. An error is an internal error to answer the request with.
func NamespaceMatches(ctx context.Context, nss Namespaces, sel *api.LabelSelector, a *admission.Attributes) (bool, error) {
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
		ns, found, err := nss.Namespace(ctx, a.Namespace)
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		if !found {
			return false, apierrors.NewInternalError(fmt.Errorf("namespaces %q not found", a.Namespace))
		}
		set = ns.Labels
	}
	return s.Matches(labels.Set(set)), nil
}

// ObjectMatches applies an objectSelector to the new or the old object:
// either matching is enough.
func ObjectMatches(sel *api.LabelSelector, a *admission.Attributes) (bool, error) {
	if sel == nil || len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return true, nil
	}
	s, err := labels.SelectorFromLabelSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	for _, o := range []api.Object{a.Object, a.OldObject} {
		// The options of a CONNECT have no metadata and match no selector
		// (kube's matchObject fails on them).
		if o == nil || o.GetObjectMeta() == nil {
			continue
		}
		if s.Matches(labels.Set(o.GetObjectMeta().Labels)) {
			return true, nil
		}
	}
	return false, nil
}

// MatchResources applies a policy's matchConstraints or a binding's
// matchResources to a request, as kube's policy matcher does: selectors,
// then excludeResourceRules, then resourceRules (all resources when there
// are none) with their resourceNames, then equivalent resources under
// matchPolicy Equivalent. It returns the target the request matched as.
func MatchResources(ctx context.Context, nss Namespaces, m *api.MatchResources, a *admission.Attributes) (*Target, error) {
	nsOK, nsErr := NamespaceMatches(ctx, nss, m.NamespaceSelector, a)
	if !nsOK && nsErr == nil {
		return nil, nil
	}
	objOK, objErr := ObjectMatches(m.ObjectSelector, a)
	if !objOK && objErr == nil {
		return nil, nil
	}
	equivalent := m.MatchPolicy != nil && *m.MatchPolicy == api.MatchPolicyEquivalent
	if t := namedRulesMatch(m.ExcludeResourceRules, equivalent, a); t != nil {
		return nil, nil
	}
	t := &Target{Resource: a.Resource, Subresource: a.Subresource}
	if len(m.ResourceRules) > 0 {
		if t = namedRulesMatch(m.ResourceRules, equivalent, a); t == nil {
			return nil, nil
		}
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if objErr != nil {
		return nil, objErr
	}
	return t, nil
}

func namedRulesMatch(rules []api.NamedRuleWithOperations, equivalent bool, a *admission.Attributes) *Target {
	named := func(r *api.NamedRuleWithOperations) bool {
		return len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name)
	}
	for i := range rules {
		r := &rules[i]
		if RuleMatches(&r.RuleWithOperations, a.Operation, a.Resource, a.Subresource, a.Namespace) && named(r) {
			return &Target{Resource: a.Resource, Subresource: a.Subresource}
		}
	}
	if !equivalent {
		return nil
	}
	for i := range rules {
		r := &rules[i]
		for _, eq := range Equivalents(a.Resource, a.Subresource) {
			if RuleMatches(&r.RuleWithOperations, a.Operation, eq.Resource, eq.Subresource, a.Namespace) && named(r) {
				return &eq
			}
		}
	}
	return nil
}
