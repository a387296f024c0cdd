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
	reviews *accessReviewer
}

func newAuthorizer(o AuthorizationOptions, reviews *accessReviewer) *authorizer {
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

// accessReviewer asks the apiserver with a SubjectAccessReview of a
// non-resource path, keeping allowed answers for allowTTL and the others
// for denyTTL (not errors).
type accessReviewer struct {
	client            *client.Client
	allowTTL, denyTTL time.Duration
	cache             ttlCache[string, decision]
}

func (a *accessReviewer) review(ctx context.Context, u *User, verb, path string) (decision, error) {
	spec := api.SubjectAccessReviewSpec{User: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra,
		NonResourceAttributes: &api.NonResourceAttributes{Path: path, Verb: verb}}
	key, err := cacheKey(spec)
	if err != nil {
		return decision{}, err
	}
	if d, ok := a.cache.get(key); ok {
		return d, nil
	}
	sar := api.SubjectAccessReview{TypeMeta: api.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"}, Spec: spec}
	body, err := json.Marshal(sar)
	if err != nil {
		return decision{}, err
	}
	b, err := a.client.Do(ctx, client.Request{Method: http.MethodPost, Path: "/apis/authorization.k8s.io/v1/subjectaccessreviews", Body: body})
	if err != nil {
		return decision{}, fmt.Errorf("subject access review: %w", err)
	}
	var out api.SubjectAccessReview
	if err := json.Unmarshal(b, &out); err != nil {
		return decision{}, fmt.Errorf("subject access review: %w", err)
	}
	d := decision{allowed: out.Status.Allowed, reason: out.Status.Reason}
	ttl := a.denyTTL
	if d.allowed {
		ttl = a.allowTTL
	}
	a.cache.put(key, d, ttl)
	return d, nil
}

// cacheKey is the review's spec with its groups in order, so the same
// question is the same key.
func cacheKey(spec api.SubjectAccessReviewSpec) (string, error) {
	spec.Groups = slices.Clone(spec.Groups)
	sort.Strings(spec.Groups)
	b, err := json.Marshal(spec)
	return string(b), err
}
