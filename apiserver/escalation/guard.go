package escalation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// fullAuthority is cluster-admin's rules: what an aggregationRule can
// gather, so only a holder of them may set one.
var fullAuthority = []api.PolicyRule{
	{Verbs: []string{api.VerbAll}, APIGroups: []string{api.APIGroupAll}, Resources: []string{api.ResourceAll}},
	{Verbs: []string{api.VerbAll}, NonResourceURLs: []string{api.NonResourceAll}},
}

// Checker decides whether an RBAC write escalates. Its authorizer answers
// the escalate and bind exceptions (the apiserver's whole chain, as in
// kube-apiserver); its rules are the RBAC objects the authorizer reads.
type Checker struct {
	authorizer authz.Authorizer
	roles      authz.RuleSource
	rbac       *authz.RBAC
}

// New returns a Checker asking a and reading src.
func New(a authz.Authorizer, src authz.RuleSource) *Checker {
	return &Checker{authorizer: a, roles: src, rbac: authz.NewRBAC(src)}
}

// CheckCreate implements registry.WriteGuard for the four RBAC kinds;
// other objects pass.
func (c *Checker) CheckCreate(ctx context.Context, obj api.Object) error {
	return c.check(ctx, obj, nil)
}

// CheckUpdate implements registry.WriteGuard: the new object is checked as
// a create would be, unless the update as sent changed only the fields
// the garbage collector needs to delete it (ownerReferences, finalizers).
func (c *Checker) CheckUpdate(ctx context.Context, obj, sent, old api.Object) error {
	if onlyGCFields(sent, old) {
		return nil
	}
	return c.check(ctx, obj, old)
}

func (c *Checker) check(ctx context.Context, obj, old api.Object) error {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil // the apiserver's own write (bootstrap policy)
	}
	if slices.Contains(u.Groups, authz.SystemPrivilegedGroup) {
		return nil
	}
	switch o := obj.(type) {
	case *api.Role:
		gr := apierrors.GroupResource{Group: api.RBACGroupName, Resource: "roles"}
		if c.escalateAllowed(ctx, u) {
			return nil
		}
		return c.confirm(ctx, u, o.Namespace, gr, o.Name, o.Rules)
	case *api.ClusterRole:
		gr := apierrors.GroupResource{Group: api.RBACGroupName, Resource: "clusterroles"}
		if c.escalateAllowed(ctx, u) {
			return nil
		}
		if err := c.confirm(ctx, u, "", gr, o.Name, o.Rules); err != nil {
			return err
		}
		// An aggregationRule can gather any rules (and, changed, keep a
		// role from being tightened): it takes everything.
		if o.AggregationRule != nil && (old == nil || !reflect.DeepEqual(old.(*api.ClusterRole).AggregationRule, o.AggregationRule)) {
			if err := c.confirm(ctx, u, "", gr, o.Name, fullAuthority); err != nil {
				return apierrors.NewForbidden(gr, o.Name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
			}
		}
		return nil
	case *api.RoleBinding:
		gr := apierrors.GroupResource{Group: api.RBACGroupName, Resource: "rolebindings"}
		return c.confirmBinding(ctx, u, o.Namespace, gr, o.Name, o.RoleRef)
	case *api.ClusterRoleBinding:
		gr := apierrors.GroupResource{Group: api.RBACGroupName, Resource: "clusterrolebindings"}
		return c.confirmBinding(ctx, u, "", gr, o.Name, o.RoleRef)
	}
	return nil
}

// confirmBinding lets a binding through when its author may bind the role
// or holds all of its rules. A role that does not exist is NotFound in
// the words of kube-apiserver, whose role lookup reports it as the
// request's resource: `rolebindings.rbac.authorization.k8s.io "ROLE" not
// found`.
func (c *Checker) confirmBinding(ctx context.Context, u *request.User, namespace string, gr apierrors.GroupResource, name string, ref api.RoleRef) error {
	if c.bindAllowed(ctx, u, namespace, ref) {
		return nil
	}
	var rules []api.PolicyRule
	switch ref.Kind {
	case "Role":
		r, ok := c.roles.GetRole(namespace, ref.Name)
		if !ok {
			return apierrors.NewNotFound(gr, ref.Name)
		}
		rules = r.Rules
	case "ClusterRole":
		r, ok := c.roles.GetClusterRole(ref.Name)
		if !ok {
			return apierrors.NewNotFound(gr, ref.Name)
		}
		rules = r.Rules
	default:
		return fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
	return c.confirm(ctx, u, namespace, gr, name, rules)
}

// confirm is kube's ConfirmNoEscalation: the user's RBAC rules in
// namespace must cover rules; the refusal lists what they lack, sorted.
func (c *Checker) confirm(ctx context.Context, u *request.User, namespace string, gr apierrors.GroupResource, name string, rules []api.PolicyRule) error {
	owned, _, resolveErr := c.rbac.RulesFor(ctx, u, namespace)
	ok, missing := Covers(owned, rules)
	if ok {
		return nil
	}
	var lines []string
	for _, r := range Compact(missing) {
		if s := CompactString(r); !slices.Contains(lines, s) {
			lines = append(lines, s)
		}
	}
	slices.Sort(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: [%v]", resolveErr)
	}
	return apierrors.NewForbidden(gr, name, errors.New(msg))
}

// escalateAllowed is kube's RoleEscalationAuthorized: the "escalate" verb
// on the role the request is for, as the request names it (a create names
// none, so only a rule without resourceNames allows it there).
func (c *Checker) escalateAllowed(ctx context.Context, u *request.User) bool {
	info, ok := request.InfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIGroup != api.RBACGroupName || (info.Resource != "roles" && info.Resource != "clusterroles") {
		return false
	}
	return c.allowed(ctx, authz.Attributes{User: u, Verb: "escalate", APIGroup: info.APIGroup, APIVersion: "*",
		Resource: info.Resource, Name: info.Name, Namespace: info.Namespace, IsResourceRequest: true})
}

// bindAllowed is kube's BindingAuthorized: the "bind" verb on the
// referenced role, in the binding's namespace ("" for a
// ClusterRoleBinding).
func (c *Checker) bindAllowed(ctx context.Context, u *request.User, namespace string, ref api.RoleRef) bool {
	a := authz.Attributes{User: u, Verb: "bind", Namespace: namespace, APIGroup: ref.APIGroup, Name: ref.Name, IsResourceRequest: true}
	switch ref.Kind {
	case "ClusterRole":
		a.Resource = "clusterroles"
	case "Role":
		a.Resource = "roles"
	default:
		return false
	}
	return c.allowed(ctx, a)
}

func (c *Checker) allowed(ctx context.Context, a authz.Attributes) bool {
	if c.authorizer == nil {
		return false
	}
	d, _, _ := c.authorizer.Authorize(ctx, a)
	return d == authz.Allow
}

// onlyGCFields is kube's IsOnlyMutatingGCFields: obj differs from old in
// ownerReferences and finalizers only (and managedFields, which the
// server keeps). Everything else counts, the resourceVersion included: an
// unconditional update (none given) is checked whole, as in kube.
func onlyGCFields(obj, old api.Object) bool {
	if old == nil {
		return false
	}
	o := api.DeepCopyObject(obj)
	m, om := o.GetObjectMeta(), old.GetObjectMeta()
	m.OwnerReferences, m.Finalizers, m.ManagedFields = om.OwnerReferences, om.Finalizers, om.ManagedFields
	a, err1 := json.Marshal(o)
	b, err2 := json.Marshal(old)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

var _ registry.WriteGuard = (*Checker)(nil)
