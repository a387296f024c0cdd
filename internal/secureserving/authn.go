package secureserving

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// The users and groups authentication gives.
const (
	anonymousUser      = "system:anonymous"
	unauthenticated    = "system:unauthenticated"
	authenticatedGroup = "system:authenticated"
)

// User is who a request comes from.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string]api.ExtraValue
}

// errInvalidToken is the bearer token authenticator's answer to a token
// the apiserver does not vouch for (kube's "invalid bearer token").
var errInvalidToken = errors.New("invalid bearer token")

// authenticator is kube's delegating authenticator: client certificate,
// then bearer token, then anonymous; a certificate or token that fails is
// an error (401), not anonymous.
type authenticator struct {
	// clientCAs verifies client certificates; nil (or a nil pool) skips
	// them.
	clientCAs func() *x509.CertPool
	// tokens reviews bearer tokens; nil ignores them.
	tokens *TokenReviewer
}

// authenticate returns the request's user, or an error for 401.
func (a *authenticator) authenticate(r *http.Request) (*User, error) {
	var errs []error
	if pool := a.certPool(); pool != nil && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		u, err := certificateUser(pool, r.TLS.PeerCertificates)
		if err == nil {
			return u, nil
		}
		errs = append(errs, err)
	}
	if a.tokens != nil {
		if token, ok := bearerToken(r); ok {
			u, err := a.tokens.Review(r.Context(), token)
			if err == nil {
				// Nobody below needs the token; kube removes it too.
				r.Header.Del("Authorization")
				return u, nil
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &User{Name: anonymousUser, Groups: []string{unauthenticated}}, nil
}

func (a *authenticator) certPool() *x509.CertPool {
	if a.clientCAs == nil {
		return nil
	}
	return a.clientCAs()
}

// certificateUser verifies a client certificate chain: CN is the user,
// each O a group.
func certificateUser(roots *x509.CertPool, chain []*x509.Certificate) (*User, error) {
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, fmt.Errorf("verifying certificate %q failed: %w", leaf.Subject.CommonName, err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, errors.New("client certificate without a common name")
	}
	return &User{Name: leaf.Subject.CommonName, Groups: withAuthenticated(leaf.Subject.Organization)}, nil
}

// bearerToken is the token of "Authorization: Bearer TOKEN"; an empty
// one counts as given (and fails).
func bearerToken(r *http.Request) (string, bool) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") {
		return "", false
	}
	return parts[1], true
}

// withAuthenticated adds system:authenticated to an authenticated user's
// groups, as kube's AuthenticatedGroupAdder does.
func withAuthenticated(groups []string) []string {
	if slices.Contains(groups, authenticatedGroup) {
		return slices.Clone(groups)
	}
	return append(slices.Clone(groups), authenticatedGroup)
}

// TokenReviewer asks the apiserver who a bearer token belongs to with a
// TokenReview, as kube's webhook token authenticator does (the secure
// ports here, and the kubelet's --authentication-token-webhook), keeping
// answers (authenticated or not; not errors) for TTL under the token's
// SHA-256.
type TokenReviewer struct {
	Client *client.Client
	TTL    time.Duration

	cache ttlCache[[sha256.Size]byte, *User]
}

// ErrInvalidToken is Review's answer to a token the apiserver does not
// vouch for.
var ErrInvalidToken = errInvalidToken

// Review returns the token's user (with system:authenticated), or
// ErrInvalidToken.
func (t *TokenReviewer) Review(ctx context.Context, token string) (*User, error) {
	if token == "" {
		return nil, errInvalidToken
	}
	key := sha256.Sum256([]byte(token))
	if u, ok := t.cache.get(key); ok {
		if u == nil {
			return nil, errInvalidToken
		}
		return u, nil
	}
	tr := api.TokenReview{TypeMeta: api.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
		Spec: api.TokenReviewSpec{Token: token}}
	body, err := json.Marshal(tr)
	if err != nil {
		return nil, err
	}
	b, err := t.Client.Do(ctx, client.Request{Method: http.MethodPost, Path: "/apis/authentication.k8s.io/v1/tokenreviews", Body: body})
	if err != nil {
		return nil, fmt.Errorf("token review: %w", err)
	}
	var out api.TokenReview
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("token review: %w", err)
	}
	var u *User
	if out.Status.Authenticated {
		s := out.Status.User
		u = &User{Name: s.Username, UID: s.UID, Groups: withAuthenticated(s.Groups), Extra: s.Extra}
	}
	t.cache.put(key, u, t.TTL)
	if u == nil {
		return nil, errInvalidToken
	}
	return u, nil
}

// ttlCache keeps values for a time each; expired entries are dropped as
// new ones come in, so it holds at most what one TTL brings.
type ttlCache[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]ttlEntry[V]
	sweep   time.Time
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func (c *ttlCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || !time.Now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[K, V]) put(k K, v V, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[K]ttlEntry[V]{}
	}
	if now.After(c.sweep) {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		c.sweep = now.Add(ttl)
	}
	c.entries[k] = ttlEntry[V]{v, now.Add(ttl)}
}
