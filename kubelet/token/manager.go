package token

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// Kube's token manager constants.
const (
	maxTTL    = 24 * time.Hour
	maxJitter = 10 * time.Second
	gcPeriod  = time.Minute
)

// Fetcher issues a TokenRequest for a service account.
type Fetcher interface {
	RequestToken(ctx context.Context, namespace, name string, tr *api.TokenRequest) (*api.TokenRequest, error)
}

// APIFetcher calls the apiserver's TokenRequest API.
type APIFetcher struct{ Client *client.Client }

var _ Fetcher = APIFetcher{}

// RequestToken POSTs tr to serviceaccounts/NAME/token.
func (f APIFetcher) RequestToken(ctx context.Context, namespace, name string, tr *api.TokenRequest) (*api.TokenRequest, error) {
	tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenRequest"
	body, err := json.Marshal(tr)
	if err != nil {
		return nil, err
	}
	b, err := f.Client.Do(ctx, client.Request{Method: "POST",
		Path: "/api/v1/namespaces/" + namespace + "/serviceaccounts/" + name + "/token", Body: body})
	if err != nil {
		return nil, err
	}
	var out api.TokenRequest
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode TokenRequest: %w", err)
	}
	if out.Status.Token == "" {
		return nil, fmt.Errorf("the TokenRequest answer has no token")
	}
	return &out, nil
}

// Manager caches the tokens of the node's pods.
type Manager struct {
	fetch Fetcher
	// Now is the clock (tests move it).
	Now func() time.Time
	// jitter returns a random duration in [0, maxJitter).
	jitter func() time.Duration

	mu     sync.Mutex
	cache  map[string]*api.TokenRequest
	lastGC time.Time
}

// NewManager returns a manager fetching tokens with f.
func NewManager(f Fetcher) *Manager {
	return &Manager{fetch: f, Now: time.Now, cache: map[string]*api.TokenRequest{},
		jitter: func() time.Duration { return time.Duration(rand.Float64()*maxJitter.Seconds()) * time.Second }}
}

// GetServiceAccountToken returns a token of service account
// namespace/name as tr asks (audiences, lifetime, bound pod): the cached
// one while it is fresh, else a new one; if asking fails, the cached one
// while it has not expired.
func (m *Manager) GetServiceAccountToken(ctx context.Context, namespace, name string, tr *api.TokenRequest) (*api.TokenRequest, error) {
	key := cacheKey(namespace, name, tr)
	m.mu.Lock()
	m.gcLocked()
	cached := m.cache[key]
	m.mu.Unlock()
	if cached != nil && !m.requiresRefresh(cached) {
		return cached, nil
	}
	fresh, err := m.fetch.RequestToken(ctx, namespace, name, tr)
	if err != nil {
		if cached != nil && !m.expired(cached) {
			return cached, nil
		}
		return nil, err
	}
	if fresh.Spec.ExpirationSeconds == nil {
		fresh.Spec.ExpirationSeconds = tr.Spec.ExpirationSeconds
	}
	m.mu.Lock()
	m.cache[key] = fresh
	m.mu.Unlock()
	return fresh, nil
}

// DeleteServiceAccountToken forgets the tokens bound to a pod.
func (m *Manager) DeleteServiceAccountToken(podUID api.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, tr := range m.cache {
		if r := tr.Spec.BoundObjectRef; r != nil && r.UID == podUID {
			delete(m.cache, k)
		}
	}
}

// requiresRefresh is kube's rule: refresh when the token is older than
// 24 hours, or within 20% of its lifetime of expiring, each less a jitter.
func (m *Manager) requiresRefresh(tr *api.TokenRequest) bool {
	if tr.Spec.ExpirationSeconds == nil {
		return false
	}
	now := m.Now()
	exp := tr.Status.ExpirationTimestamp.Time
	ttl := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	iat := exp.Add(-ttl)
	jitter := m.jitter()
	if now.After(iat.Add(maxTTL - jitter)) {
		return true
	}
	return now.After(exp.Add(-ttl*20/100 - jitter))
}

func (m *Manager) expired(tr *api.TokenRequest) bool {
	return !m.Now().Before(tr.Status.ExpirationTimestamp.Time)
}

// gcLocked drops expired tokens once a minute.
func (m *Manager) gcLocked() {
	now := m.Now()
	if now.Sub(m.lastGC) < gcPeriod {
		return
	}
	m.lastGC = now
	for k, tr := range m.cache {
		if m.expired(tr) {
			delete(m.cache, k)
		}
	}
}

// cacheKey identifies a request as kube's keyFunc: the account, the
// audiences, the lifetime and the bound object.
func cacheKey(namespace, name string, tr *api.TokenRequest) string {
	exp := int64(0)
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	ref := api.BoundObjectReference{}
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	return fmt.Sprintf("%q/%q/%#v/%d/%#v", name, namespace, strings.Join(tr.Spec.Audiences, ","), exp, ref)
}
