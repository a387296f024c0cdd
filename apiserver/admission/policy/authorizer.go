package policy

import (
	"context"

	k8sauthorizer "k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
)

// celAuthorizer answers the CEL authorizer library (authorizer.group(...)
// .resource(...).check(verb)) with the apiserver's authorizer.
type celAuthorizer struct{ az authz.Authorizer }

var _ k8sauthorizer.UnconditionalAuthorizer = celAuthorizer{}

// unconditional returns az for the CEL libraries, or nil without one
// (expressions using the authorizer then fail to evaluate).
func unconditional(az authz.Authorizer) k8sauthorizer.UnconditionalAuthorizer {
	if az == nil {
		return nil
	}
	return celAuthorizer{az}
}

func (c celAuthorizer) Authorize(ctx context.Context, a k8sauthorizer.Attributes) (k8sauthorizer.Decision, string, error) {
	var u *request.User
	if ui := a.GetUser(); ui != nil {
		u = &request.User{Name: ui.GetName(), UID: ui.GetUID(), Groups: ui.GetGroups(), Extra: ui.GetExtra()}
	}
	d, reason, err := c.az.Authorize(ctx, authz.Attributes{User: u, Verb: a.GetVerb(), APIGroup: a.GetAPIGroup(),
		APIVersion: a.GetAPIVersion(), Resource: a.GetResource(), Subresource: a.GetSubresource(), Namespace: a.GetNamespace(),
		Name: a.GetName(), Path: a.GetPath(), IsResourceRequest: a.IsResourceRequest()})
	switch d {
	case authz.Allow:
		return k8sauthorizer.DecisionAllow, reason, err
	case authz.Deny:
		return k8sauthorizer.DecisionDeny, reason, err
	}
	return k8sauthorizer.DecisionNoOpinion, reason, err
}
