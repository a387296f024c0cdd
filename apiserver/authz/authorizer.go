package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/fields"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Well-known users and groups, as in k8s.io/apiserver/pkg/authentication/user.
const (
	SystemPrivilegedGroup = "system:masters"
	NodesGroup            = "system:nodes"
	AllAuthenticated      = "system:authenticated"
	AllUnauthenticated    = "system:unauthenticated"
	// ServiceAccountsGroup holds every service account.
	ServiceAccountsGroup = "system:serviceaccounts"
	// BootstrappersGroup holds the users of bootstrap tokens
	// ("system:bootstrap:<token-id>").
	BootstrappersGroup    = "system:bootstrappers"
	KubeScheduler         = "system:kube-scheduler"
	KubeControllerManager = "system:kube-controller-manager"
	KubeProxy             = "system:kube-proxy"

	// NodeUserPrefix starts the user name of a kubelet: "system:node:NAME".
	NodeUserPrefix = "system:node:"
	// ServiceAccountUserPrefix starts a service account's user name:
	// "system:serviceaccount:NAMESPACE:NAME".
	ServiceAccountUserPrefix = "system:serviceaccount:"
)

// Decision is an authorizer's answer.
type Decision int

// Decisions. NoOpinion lets the next authorizer of a Union decide; when no
// authorizer allows, the request is refused.
const (
	NoOpinion Decision = iota
	Allow
	Deny
)

// String returns the decision's name.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "NoOpinion"
}

// Attributes describe the request being authorized.
type Attributes struct {
	User *request.User
	// Verb is the API verb (get, list, watch, create, update, patch, delete,
	// deletecollection) of a resource request, the lower-case HTTP method
	// of any other.
	Verb        string
	APIGroup    string
	APIVersion  string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	// Path is the URL path, matched by non-resource rules.
	Path              string
	IsResourceRequest bool
	// FieldSelector and LabelSelector are the parsed selectors of a list,
	// watch or deletecollection (kube's GetFieldSelector and
	// GetLabelSelector): nil when the request has none or an empty one,
	// or when it did not parse, which the ...Err fields then say.
	// Authorizers may allow a narrower request on them (a kubelet listing
	// pods with spec.nodeName=itself); a parse error never allows more.
	FieldSelector    fields.Requirements
	FieldSelectorErr error
	LabelSelector    []labels.Requirement
	LabelSelectorErr error
}

// AttributesFrom builds the attributes of a parsed request. As in
// kube-apiserver, a request for one namespace object (/api/v1/namespaces/NS)
// is in that namespace, so a RoleBinding in NS can grant reading it.
func AttributesFrom(info *request.Info, user *request.User) Attributes {
	a := Attributes{
		User: user, Verb: info.Verb, APIGroup: info.APIGroup, APIVersion: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name,
		Path: info.Path, IsResourceRequest: info.IsResourceRequest,
	}
	if a.IsResourceRequest && a.APIGroup == "" && a.Resource == "namespaces" && a.Name != "" {
		a.Namespace = a.Name
	}
	if info.FieldSelector != "" {
		if sel, err := fields.Parse(info.FieldSelector); err != nil {
			a.FieldSelectorErr = err
		} else if reqs := sel.Requirements(); len(reqs) > 0 {
			a.FieldSelector = reqs
		}
	}
	if info.LabelSelector != "" {
		if reqs, err := labels.ParseToRequirements(info.LabelSelector); err != nil {
			a.LabelSelectorErr = err
		} else if len(reqs) > 0 {
			a.LabelSelector = reqs
		}
	}
	return a
}

// fieldSelectorRequires reports whether a's field selector has the term
// field=value ("=" or "==", which Kubernetes parses alike).
func (a Attributes) fieldSelectorRequires(field, value string) bool {
	for _, r := range a.FieldSelector {
		if r.Field == field && r.Value == value && (r.Operator == fields.Equals || r.Operator == fields.DoubleEquals) {
			return true
		}
	}
	return false
}

// userName returns the name of a's user, "" without one.
func (a Attributes) userName() string {
	if a.User == nil {
		return ""
	}
	return a.User.Name
}

// Authorizer decides whether a request may proceed. reason explains the
// decision (it ends the 403 message); an error means the decision could
// not be made, and a request no one allowed then fails with 500.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize implements Authorizer.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// union asks its authorizers in order.
type union []Authorizer

// Union asks the authorizers in order, as kube-apiserver's chain does: the
// first Allow or Deny is the answer, with its reason; when all have no
// opinion, the reasons are joined with newlines, each after the name of
// its authorizer when it has one (Named: "node: can only list/watch
// pods with spec.nodeName field selector"), and the errors aggregated.
func Union(authorizers ...Authorizer) Authorizer { return union(slices.Clone(authorizers)) }

// named is an authorizer with the name a Union puts before its reasons.
type named struct {
	name string
	Authorizer
}

// Named gives a the name a Union puts before the reasons of its no
// opinion, as kube-apiserver names the authorizers of its chain after
// their mode in lower case ("node", "rbac").
func Named(name string, a Authorizer) Authorizer { return named{name: name, Authorizer: a} }

// RulesFor implements RuleResolver for the named authorizer.
func (n named) RulesFor(ctx context.Context, user *request.User, namespace string) ([]api.PolicyRule, bool, error) {
	return RulesFor(ctx, n.Authorizer, user, namespace)
}

func (u union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var (
		errs    []error
		reasons []string
	)
	for _, az := range u {
		d, reason, err := az.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			if n, ok := az.(named); ok {
				reasons = append(reasons, n.name+": "+reason)
			} else {
				reasons = append(reasons, reason)
			}
		}
		if d == Allow || d == Deny {
			return d, reason, err
		}
	}
	return NoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
}

// AlwaysAllow allows every request: for tests and a deliberately insecure
// setup, never a default.
var AlwaysAllow Authorizer = AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
})

// AlwaysDeny refuses every request.
var AlwaysDeny Authorizer = AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) {
	return Deny, "Everything is forbidden.", nil
})

// PrivilegedGroups allows every request of a member of one of the groups.
// kube-apiserver puts it (with system:masters) first in its chain, so the
// cluster admin keeps access whatever the RBAC objects say.
func PrivilegedGroups(groups ...string) Authorizer { return privilegedGroups(slices.Clone(groups)) }

// NodeIdentity returns the node name of a kubelet's user: one named
// "system:node:NAME" in the system:nodes group. isNode is false for every
// other user; a node user with an empty NAME is a node whose name is
// unknown.
func NodeIdentity(u *request.User) (name string, isNode bool) {
	if u == nil || !strings.HasPrefix(u.Name, NodeUserPrefix) || !slices.Contains(u.Groups, NodesGroup) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, NodeUserPrefix), true
}

// sanitizer keeps messages from looking like HTML, as kube-apiserver does.
var sanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// ForbiddenMessage is kube-apiserver's explanation of a refusal, the part
// after "... is forbidden: ": `User "alice" cannot list resource "pods" in
// API group "" in the namespace "default"` (or "at the cluster scope", or
// `cannot get path "/metrics"`), then ": " and the reason if there is one.
func ForbiddenMessage(a Attributes, reason string) string {
	var msg string
	switch {
	case !a.IsResourceRequest:
		msg = fmt.Sprintf("User %q cannot %s path %q", a.userName(), a.Verb, a.Path)
	default:
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		if a.Namespace != "" {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.userName(), a.Verb, resource, a.APIGroup, a.Namespace)
		} else {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.userName(), a.Verb, resource, a.APIGroup)
		}
	}
	msg = sanitizer.Replace(msg)
	if reason != "" {
		msg += ": " + reason
	}
	return msg
}

// RulesAllow reports whether any of the rules allows the request, with
// RBAC's matching: verbs and API groups by name or "*"; resources by name,
// "*", "resource/subresource" or "*/subresource"; resourceNames, when set,
// only for a request that names its object (so never for list, watch,
// create or deletecollection); non-resource URLs by path, "*" or a
// "prefix*" glob.
func RulesAllow(a Attributes, rules ...api.PolicyRule) bool {
	for i := range rules {
		if ruleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

func ruleAllows(a Attributes, r *api.PolicyRule) bool {
	if !verbMatches(r, a.Verb) {
		return false
	}
	if !a.IsResourceRequest {
		return nonResourceURLMatches(r, a.Path)
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	return apiGroupMatches(r, a.APIGroup) && resourceMatches(r, combined, a.Subresource) && resourceNameMatches(r, a.Name)
}

func verbMatches(r *api.PolicyRule, verb string) bool {
	for _, v := range r.Verbs {
		if v == api.VerbAll || v == verb {
			return true
		}
	}
	return false
}

func apiGroupMatches(r *api.PolicyRule, group string) bool {
	for _, g := range r.APIGroups {
		if g == api.APIGroupAll || g == group {
			return true
		}
	}
	return false
}

func resourceMatches(r *api.PolicyRule, combined, subresource string) bool {
	for _, res := range r.Resources {
		if res == api.ResourceAll || res == combined {
			return true
		}
		// "*/scale" matches the scale subresource of every resource.
		if subresource != "" && len(res) == len(subresource)+2 && strings.HasPrefix(res, "*/") && strings.HasSuffix(res, subresource) {
			return true
		}
	}
	return false
}

func resourceNameMatches(r *api.PolicyRule, name string) bool {
	if len(r.ResourceNames) == 0 {
		return true
	}
	return slices.Contains(r.ResourceNames, name)
}

func nonResourceURLMatches(r *api.PolicyRule, path string) bool {
	for _, u := range r.NonResourceURLs {
		if u == api.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}
