package review

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/serviceaccount"
)

// Authenticator finds the user of a request; TokenReview hands it a request
// that carries only the reviewed bearer token.
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (*request.User, bool, error)
}

// Reviewer answers reviews.
type Reviewer struct {
	// Authorizer answers access reviews and lists rules (authz.RulesFor).
	Authorizer authz.Authorizer
	// Authenticator answers TokenReviews; nil: every token is refused.
	Authenticator Authenticator
	// APIAudiences are the API's audiences (--api-audiences): what a
	// TokenReview without spec.audiences asks for, and the audiences of
	// tokens that name none (static and bootstrap tokens).
	APIAudiences []string
	// Now stamps SelfSubjectReviews (time.Now if nil).
	Now func() time.Time
}

// Review answers obj, a freshly decoded review of kind ri created in
// namespace (LocalSubjectAccessReview only), by filling its status; it
// returns obj, or an error Status as kube-apiserver's.
func (rv *Reviewer) Review(ctx context.Context, ri api.ResourceInfo, namespace string, obj api.Object) (api.Object, error) {
	user, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no user present on request"))
	}
	obj.GetTypeMeta().APIVersion, obj.GetTypeMeta().Kind = ri.GroupVersion(), ri.Kind
	switch o := obj.(type) {
	case *api.SubjectAccessReview:
		if errs := append(validateEmptyMeta(o.ObjectMeta), validateSARSpec(&o.Spec, field.NewPath("spec"))...); len(errs) > 0 {
			return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: ri.Group, Kind: ri.Kind}, "", errs)
		}
		o.Status = rv.authorize(ctx, specAttributes(&o.Spec))
	case *api.LocalSubjectAccessReview:
		if errs := validateLocalSAR(o); len(errs) > 0 {
			return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: ri.Group, Kind: ri.Kind}, "", errs)
		}
		if o.Namespace == "" {
			o.Namespace = namespace
		}
		if o.Namespace != namespace {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		if o.Spec.ResourceAttributes.Namespace != namespace {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", namespace))
		}
		o.Status = rv.authorize(ctx, specAttributes(&o.Spec))
	case *api.SelfSubjectAccessReview:
		if errs := append(validateEmptyMeta(o.ObjectMeta), validateAttributes(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes, field.NewPath("spec"))...); len(errs) > 0 {
			return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: ri.Group, Kind: ri.Kind}, "", errs)
		}
		o.Status = rv.authorize(ctx, attributes(user, o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes))
	case *api.SelfSubjectRulesReview:
		if o.Spec.Namespace == "" {
			return nil, apierrors.NewBadRequest("no namespace on request")
		}
		rules, incomplete, err := authz.RulesFor(ctx, rv.Authorizer, user, o.Spec.Namespace)
		o.Status = rulesStatus(rules)
		o.Status.Incomplete = incomplete
		if err != nil {
			o.Status.EvaluationError = err.Error()
		}
	case *api.TokenReview:
		if o.Spec.Token == "" {
			return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication.k8s.io")
		}
		o.Status = rv.reviewTokenFor(ctx, o.Spec.Token, o.Spec.Audiences)
	case *api.SelfSubjectReview:
		now := time.Now
		if rv.Now != nil {
			now = rv.Now
		}
		o.ObjectMeta = api.ObjectMeta{CreationTimestamp: api.NewTime(now())}
		o.Status.UserInfo = userInfo(user)
	default:
		return nil, apierrors.NewInternalError(fmt.Errorf("%s is not a review kind", ri.Kind))
	}
	return obj, nil
}

// authorize asks the authorizer, as the SubjectAccessReview registry does:
// an error does not fail the review, it is reported in evaluationError.
func (rv *Reviewer) authorize(ctx context.Context, a authz.Attributes) api.SubjectAccessReviewStatus {
	d, reason, err := rv.Authorizer.Authorize(ctx, a)
	st := api.SubjectAccessReviewStatus{Allowed: d == authz.Allow, Denied: d == authz.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

// reviewTokenFor is kube-apiserver's TokenReview: the token must be valid
// for one of the requested audiences (the API's when none), and
// status.audiences are those it is valid for. Service-account tokens carry
// their audiences; the others are valid for the API's alone.
func (rv *Reviewer) reviewTokenFor(ctx context.Context, token string, audiences []string) api.TokenReviewStatus {
	requested := audiences
	if len(requested) == 0 {
		requested = rv.APIAudiences
	}
	st := rv.reviewToken(serviceaccount.WithAudiences(ctx, requested), token)
	if !st.Authenticated {
		return st
	}
	has := rv.APIAudiences
	if strings.HasPrefix(st.User.Username, serviceAccountPrefix) {
		if auds := serviceaccount.TokenAudiences(token); len(auds) > 0 {
			has = auds
		}
	}
	if len(has) == 0 {
		st.Audiences = audiences
		return st
	}
	for _, a := range requested {
		if slices.Contains(has, a) {
			st.Audiences = append(st.Audiences, a)
		}
	}
	if len(st.Audiences) == 0 {
		return api.TokenReviewStatus{Error: fmt.Sprintf("token audiences %q is invalid for the target audiences %q", has, requested)}
	}
	return st
}

const serviceAccountPrefix = "system:serviceaccount:"

// reviewToken authenticates a request carrying only the token, so exactly
// the bearer-token authenticators that guard requests decide.
func (rv *Reviewer) reviewToken(ctx context.Context, token string) api.TokenReviewStatus {
	if rv.Authenticator == nil {
		return api.TokenReviewStatus{}
	}
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/", http.NoBody)
	r.Header.Set("Authorization", "Bearer "+token)
	u, ok, err := rv.Authenticator.AuthenticateRequest(r)
	st := api.TokenReviewStatus{Authenticated: ok && err == nil}
	if err != nil {
		st.Error = err.Error()
	}
	if st.Authenticated && u != nil {
		st.User = userInfo(u)
	}
	return st
}

func userInfo(u *request.User) api.UserInfo {
	out := api.UserInfo{Username: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}
	for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
		if out.Extra == nil {
			out.Extra = map[string]api.ExtraValue{}
		}
		out.Extra[k] = slices.Clone(u.Extra[k])
	}
	return out
}

// specAttributes are the attributes of a SubjectAccessReview: its user is
// the spec's, taken literally (no groups added).
func specAttributes(spec *api.SubjectAccessReviewSpec) authz.Attributes {
	u := &request.User{Name: spec.User, UID: spec.UID, Groups: slices.Clone(spec.Groups)}
	for k, v := range spec.Extra {
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[k] = slices.Clone(v)
	}
	return attributes(u, spec.ResourceAttributes, spec.NonResourceAttributes)
}

func attributes(u *request.User, res *api.ResourceAttributes, nonRes *api.NonResourceAttributes) authz.Attributes {
	if res != nil {
		return authz.Attributes{User: u, Verb: res.Verb, APIGroup: res.Group, APIVersion: res.Version,
			Resource: res.Resource, Subresource: res.Subresource, Namespace: res.Namespace, Name: res.Name,
			IsResourceRequest: true}
	}
	return authz.Attributes{User: u, Verb: nonRes.Verb, Path: nonRes.Path}
}

// rulesStatus splits rules into resource and non-resource rules.
func rulesStatus(rules []api.PolicyRule) api.SubjectRulesReviewStatus {
	st := api.SubjectRulesReviewStatus{ResourceRules: []api.ResourceRule{}, NonResourceRules: []api.NonResourceRule{}}
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			st.NonResourceRules = append(st.NonResourceRules, api.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
			continue
		}
		st.ResourceRules = append(st.ResourceRules, api.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups,
			Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	return st
}

// validateAttributes is Kubernetes' check that exactly one kind of
// attributes is given.
func validateAttributes(res *api.ResourceAttributes, nonRes *api.NonResourceAttributes, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if res != nil && nonRes != nil {
		errs = append(errs, field.Invalid(p.Child("nonResourceAttributes"), nonRes, "cannot be specified in combination with resourceAttributes"))
	}
	if res == nil && nonRes == nil {
		errs = append(errs, field.Invalid(p.Child("resourceAttributes"), nonRes, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	return errs
}

func validateSARSpec(spec *api.SubjectAccessReviewSpec, p *field.Path) field.ErrorList {
	errs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes, p)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(p.Child("user"), spec.User, "at least one of user or group must be specified"))
	}
	return errs
}

// validateEmptyMeta is Kubernetes' rule that an access review names
// nothing: its metadata must be empty (managed fields aside).
func validateEmptyMeta(m api.ObjectMeta) field.ErrorList {
	m.ManagedFields = nil
	got, _ := json.Marshal(m)
	if want, _ := json.Marshal(api.ObjectMeta{}); string(got) != string(want) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), string(got), "must be empty")}
	}
	return nil
}

func validateLocalSAR(o *api.LocalSubjectAccessReview) field.ErrorList {
	meta := o.ObjectMeta
	meta.Namespace, meta.ManagedFields = "", nil
	errs := validateEmptyMeta(meta)
	if len(errs) > 0 {
		errs[0].Detail = "must be empty except for namespace"
	}
	errs = append(errs, validateSARSpec(&o.Spec, field.NewPath("spec"))...)
	if o.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), o.Spec.NonResourceAttributes, "disallowed on this kind of request"))
	}
	return errs
}
