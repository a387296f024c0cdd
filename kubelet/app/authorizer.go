package app

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/server"
)

// SubjectAccessReviews authorizes kubelet requests with the apiserver, as
// the kubelet's --authorization-mode=Webhook does: a SubjectAccessReview
// of verb on nodes/SUBRESOURCE named after the node. Answers are cached,
// allowed ones for 5 minutes and denied ones for DeniedTTL (default 30
// seconds, the kubelet's --authorization-webhook-cache-unauthorized-ttl).
type SubjectAccessReviews struct {
	Client    *client.Client
	NodeName  string
	DeniedTTL time.Duration

	mu    sync.Mutex
	cache map[string]decision
}

type decision struct {
	allowed bool
	reason  string
	expires time.Time
}

var _ server.Authorizer = (*SubjectAccessReviews)(nil)

// Authorize implements server.Authorizer.
func (a *SubjectAccessReviews) Authorize(ctx context.Context, user string, groups []string, verb, sub string) (bool, string, error) {
	key := strings.Join([]string{user, strings.Join(groups, ","), verb, sub}, "\x00")
	now := time.Now()
	a.mu.Lock()
	if d, ok := a.cache[key]; ok && now.Before(d.expires) {
		a.mu.Unlock()
		return d.allowed, d.reason, nil
	}
	a.mu.Unlock()
	sar := api.SubjectAccessReview{TypeMeta: api.TypeMeta{Kind: "SubjectAccessReview", APIVersion: "authorization.k8s.io/v1"},
		Spec: api.SubjectAccessReviewSpec{User: user, Groups: groups,
			ResourceAttributes: &api.ResourceAttributes{Verb: verb, Version: "v1", Resource: "nodes", Subresource: sub, Name: a.NodeName}}}
	body, _ := json.Marshal(sar)
	b, err := a.Client.Do(ctx, client.Request{Method: "POST", Path: "/apis/authorization.k8s.io/v1/subjectaccessreviews", Body: body})
	if err != nil {
		return false, "", err
	}
	var out api.SubjectAccessReview
	if err := json.Unmarshal(b, &out); err != nil {
		return false, "", err
	}
	ttl := a.DeniedTTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	if out.Status.Allowed {
		ttl = 5 * time.Minute
	}
	a.mu.Lock()
	if a.cache == nil {
		a.cache = map[string]decision{}
	}
	a.cache[key] = decision{out.Status.Allowed, out.Status.Reason, now.Add(ttl)}
	a.mu.Unlock()
	return out.Status.Allowed, out.Status.Reason, nil
}
