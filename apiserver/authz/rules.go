package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// RuleResolver lists the rules an authorizer grants a user in a namespace,
// for SelfSubjectRulesReview (kubectl auth can-i --list). incomplete means
// the authorizer allows more than it can list; err says why.
type RuleResolver interface {
	RulesFor(ctx context.Context, user *request.User, namespace string) (rules []api.PolicyRule, incomplete bool, err error)
}

// RulesFor asks a for the rules of user in namespace: a Union asks its
// members in order and joins their answers; an authorizer that cannot list
// its rules makes the answer incomplete, as in kube-apiserver.
func RulesFor(ctx context.Context, a Authorizer, user *request.User, namespace string) ([]api.PolicyRule, bool, error) {
	if r, ok := a.(RuleResolver); ok {
		return r.RulesFor(ctx, user, namespace)
	}
	return nil, true, fmt.Errorf("%T does not support user rule resolution", a)
}

// RulesFor implements RuleResolver.
func (u union) RulesFor(ctx context.Context, user *request.User, namespace string) ([]api.PolicyRule, bool, error) {
	var (
		all        []api.PolicyRule
		incomplete bool
		errs       []error
	)
	for _, a := range u {
		rules, inc, err := RulesFor(ctx, a, user, namespace)
		all = append(all, rules...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return all, incomplete, errors.Join(errs...)
}

// RulesFor implements RuleResolver: the rules of every ClusterRoleBinding
// of the user, then of every RoleBinding of the user in namespace. Missing
// roles are errors, the rules found are still returned.
func (r *RBAC) RulesFor(_ context.Context, user *request.User, namespace string) ([]api.PolicyRule, bool, error) {
	if user == nil {
		return nil, false, nil
	}
	a := Attributes{User: user}
	var (
		rules []api.PolicyRule
		errs  []error
	)
	for _, b := range r.src.ListClusterRoleBindings() {
		if _, ok := appliesTo(a, b.Subjects, ""); !ok {
			continue
		}
		rs, err := r.roleRules(b.RoleRef, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rules = append(rules, rs...)
	}
	if namespace != "" {
		for _, b := range r.src.ListRoleBindings(namespace) {
			if _, ok := appliesTo(a, b.Subjects, b.Namespace); !ok {
				continue
			}
			rs, err := r.roleRules(b.RoleRef, b.Namespace)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rules = append(rules, rs...)
		}
	}
	return slices.Clone(rules), false, errors.Join(errs...)
}

// RulesFor implements RuleResolver: a node's rules are not enumerable (the
// Node authorizer decides per object); other users get none from it.
func (n *Node) RulesFor(_ context.Context, user *request.User, _ string) ([]api.PolicyRule, bool, error) {
	if _, isNode := NodeIdentity(user); isNode {
		return nil, true, errors.New("node authorizer does not support user rule resolution")
	}
	return nil, false, nil
}

// privilegedGroups allows everything to members of its groups.
type privilegedGroups []string

var (
	_ Authorizer   = privilegedGroups(nil)
	_ RuleResolver = privilegedGroups(nil)
)

func (p privilegedGroups) member(u *request.User) bool {
	if u == nil {
		return false
	}
	for _, g := range u.Groups {
		if slices.Contains(p, g) {
			return true
		}
	}
	return false
}

// Authorize implements Authorizer.
func (p privilegedGroups) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if p.member(a.User) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}

// RulesFor implements RuleResolver: everything, for a member.
func (p privilegedGroups) RulesFor(_ context.Context, user *request.User, _ string) ([]api.PolicyRule, bool, error) {
	if !p.member(user) {
		return nil, false, nil
	}
	return []api.PolicyRule{
		{Verbs: []string{api.VerbAll}, APIGroups: []string{api.APIGroupAll}, Resources: []string{api.ResourceAll}},
		{Verbs: []string{api.VerbAll}, NonResourceURLs: []string{api.NonResourceAll}},
	}, false, nil
}

// RulesFor implements RuleResolver for AlwaysAllow and AlwaysDeny.
func (f AuthorizerFunc) RulesFor(context.Context, *request.User, string) ([]api.PolicyRule, bool, error) {
	return nil, true, errors.New("the authorizer does not support user rule resolution")
}
