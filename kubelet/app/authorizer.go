package app

import (
	"context"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/secureserving"
	"github.com/minik8s/minik8s/kubelet/server"
)

// SubjectAccessReviews authorizes kubelet requests with the apiserver, as
// the kubelet's --authorization-mode=Webhook does: a SubjectAccessReview
// of verb on nodes/SUBRESOURCE named after the node. Answers are cached
// (secureserving.AccessReviewer), allowed ones for 5 minutes and denied
// ones for DeniedTTL (default 30 seconds, the kubelet's
// --authorization-webhook-cache-unauthorized-ttl).
type SubjectAccessReviews struct {
	Client    *client.Client
	NodeName  string
	DeniedTTL time.Duration

	once    sync.Once
	reviews *secureserving.AccessReviewer
}

var _ server.Authorizer = (*SubjectAccessReviews)(nil)

// Authorize implements server.Authorizer.
func (a *SubjectAccessReviews) Authorize(ctx context.Context, user string, groups []string, verb, sub string) (bool, string, error) {
	a.once.Do(func() {
		denied := a.DeniedTTL
		if denied <= 0 {
			denied = 30 * time.Second
		}
		a.reviews = &secureserving.AccessReviewer{Client: a.Client, AllowTTL: 5 * time.Minute, DenyTTL: denied}
	})
	return a.reviews.Review(ctx, api.SubjectAccessReviewSpec{User: user, Groups: groups,
		ResourceAttributes: &api.ResourceAttributes{Verb: verb, Version: "v1", Resource: "nodes", Subresource: sub, Name: a.NodeName}})
}

// TokenReviews authenticates bearer tokens with the apiserver, as the
// kubelet's --authentication-token-webhook: a TokenReview, its answer
// cached (secureserving.TokenReviewer).
type TokenReviews struct {
	Reviewer *secureserving.TokenReviewer
}

var _ server.TokenAuthenticator = (*TokenReviews)(nil)

// AuthenticateToken implements server.TokenAuthenticator.
func (t *TokenReviews) AuthenticateToken(ctx context.Context, token string) (string, []string, error) {
	u, err := t.Reviewer.Review(ctx, token)
	if err != nil {
		return "", nil, err
	}
	return u.Name, u.Groups, nil
}
