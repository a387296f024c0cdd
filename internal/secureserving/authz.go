package secureserving

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// decision is an authorizer's answer.
type decision struct {
	allowed bool
	reason  string
}

// authorizer is kube's delegating authorizer: the always-allowed groups,
// then the always-allowed paths, then a SubjectAccessReview.
type authorizer struct {
	groups []string
	// exact and prefixes are AlwaysAllowPaths ("/healthz", "/debug/*").
	exact    map[string]bool
	prefixes []string
	// reviews asks the apiserver; nil refuses what the rest do not allow.
	reviews *AccessReviewer
}

func newAuthorizer(o AuthorizationOptions, reviews *AccessReviewer) *authorizer {
	a := &authorizer{groups: o.AlwaysAllowGroups, exact: map[string]bool{}, reviews: reviews}
	for _, p := range o.AlwaysAllowPaths {
		p = strings.TrimPrefix(p, "/")
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			a.prefixes = append(a.prefixes, prefix)
		} else {
			a.exact[p] = true
		}
	}
	return a
}

// authorize decides whether u may verb path; an error is 500.
func (a *authorizer) authorize(ctx context.Context, u *User, verb, path string) (decision, error) {
	for _, g := range u.Groups {
		if slices.Contains(a.groups, g) {
			return decision{allowed: true}, nil
		}
	}
	p := strings.TrimPrefix(path, "/")
	if a.exact[p] {
		return decision{allowed: true}, nil
	}
	for _, prefix := range a.prefixes {
		if strings.HasPrefix(p, prefix) {
			return decision{allowed: true}, nil
		}
	}
	if a.reviews == nil {
		return decision{}, nil
	}
	return a.reviews.review(ctx, u, verb, path)
}

// AccessReviewer asks the apiserver SubjectAccessReviews and keeps the
// answers, allowed ones for AllowTTL and the others for DenyTTL (not
// errors), as kube's webhook authorizer does: the secure ports here, and
// the kubelet's nodes/SUBRESOURCE checks.
type AccessReviewer struct {
	Client            *client.Client
	AllowTTL, DenyTTL time.Duration

	cache ttlCache[string, decision]
}

// review asks whether u may verb the non-resource path.
func (a *AccessReviewer) review(ctx context.Context, u *User, verb, path string) (decision, error) {
	allowed, reason, err := a.Review(ctx, api.SubjectAccessReviewSpec{User: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra,
		NonResourceAttributes: &api.NonResourceAttributes{Path: path, Verb: verb}})
	return decision{allowed: allowed, reason: reason}, err
}

// Review answers spec, from the cache while the answer is fresh.
func (a *AccessReviewer) Review(ctx context.Context, spec api.SubjectAccessReviewSpec) (allowed bool, reason string, err error) {
	key, err := cacheKey(spec)
	if err != nil {
		return false, "", err
	}
	if d, ok := a.cache.get(key); ok {
		return d.allowed, d.reason, nil
	}
	sar := api.SubjectAccessReview{TypeMeta: api.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"}, Spec: spec}
	body, err := json.Marshal(sar)
	if err != nil {
		return false, "", err
	}
	b, err := a.Client.Do(ctx, client.Request{Method: http.MethodPost, Path: "/apis/authorization.k8s.io/v1/subjectaccessreviews", Body: body})
	if err != nil {
		return false, "", fmt.Errorf("subject access review: %w", err)
	}
	var out api.SubjectAccessReview
	if err := json.Unmarshal(b, &out); err != nil {
		return false, "", fmt.Errorf("subject access review: %w", err)
	}
	ttl := a.DenyTTL
	if out.Status.Allowed {
		ttl = a.AllowTTL
	}
	a.cache.put(key, decision{out.Status.Allowed, out.Status.Reason}, ttl)
	return out.Status.Allowed, out.Status.Reason, nil
}

// cacheKey is the review's spec with its groups in order, so the same
// question is the same key.
func cacheKey(spec api.SubjectAccessReviewSpec) (string, error) {
	spec.Groups = slices.Clone(spec.Groups)
	sort.Strings(spec.Groups)
	b, err := json.Marshal(spec)
	return string(b), err
}
