package localpath

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// ServiceAccount is the provisioner's own identity, as k3s runs it:
// kube-system/local-path-provisioner-service-account, bound to the
// local-path-provisioner-role cluster role and the role on its helper
// pods' namespace by deploy/addons/local-path-storage.yaml.
const (
	ServiceAccountNamespace = "kube-system"
	ServiceAccountName      = "local-path-provisioner-service-account"
)

// tokenLifetime is asked of each token; it is replaced at 80% of what the
// apiserver granted.
const tokenLifetime = 3600

// credentials give the provisioner's writes its service account's
// identity, the way kube-controller-manager's
// --use-service-account-credentials does for its controllers: the
// controller-manager's client creates the service account when missing
// and asks a token for it (serviceaccounts/token), and a client with that
// bearer token (and the controller-manager's server and CA, never its
// client certificate) does the work. The informers stay the
// controller-manager's.
type credentials struct {
	// base is the controller-manager's client configuration; nil makes
	// the controller-manager's own client do the work (tests on the
	// fakes).
	base    *client.Config
	manager *client.Client
	now     func() time.Time

	mu        sync.Mutex
	current   *client.Client
	refreshAt time.Time
}

// client returns the client of the last token (refresh must have
// succeeded once).
func (k *credentials) client() *client.Client {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.current == nil {
		return k.manager
	}
	return k.current
}

// refresh makes sure a token at most 80% through its lifetime backs the
// client.
func (k *credentials) refresh(ctx context.Context) error {
	if k.base == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.current != nil && k.now().Before(k.refreshAt) {
		return nil
	}
	tr, err := k.token(ctx)
	if err != nil {
		return fmt.Errorf("token of service account %s/%s: %w", ServiceAccountNamespace, ServiceAccountName, err)
	}
	cfg := client.Config{Host: k.base.Host, CAData: k.base.CAData, ServerName: k.base.ServerName, Insecure: k.base.Insecure,
		BearerToken: tr.Status.Token, QPS: k.base.QPS, Burst: k.base.Burst, Timeout: k.base.Timeout,
		UserAgent: k.base.UserAgent + "/local-path-provisioner", MaxRetries: k.base.MaxRetries}
	c, err := client.New(&cfg)
	if err != nil {
		return err
	}
	now := k.now()
	k.current = c
	k.refreshAt = now.Add(tr.Status.ExpirationTimestamp.Sub(now) * 8 / 10)
	return nil
}

// token asks a token for the service account, creating it first when it
// does not exist (as kube's service account client builder does).
func (k *credentials) token(ctx context.Context) (*api.TokenRequest, error) {
	exp := int64(tokenLifetime)
	req := &api.TokenRequest{Spec: api.TokenRequestSpec{Audiences: []string{}, ExpirationSeconds: &exp}}
	sas := client.Resource[api.ServiceAccount](k.manager).Namespace(ServiceAccountNamespace)
	var out api.TokenRequest
	err := sas.Subresource(ServiceAccountName, "token").Post(ctx, req, &out)
	if apierrors.IsNotFound(err) {
		_, err = sas.Create(ctx, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: ServiceAccountName, Namespace: ServiceAccountNamespace}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		err = sas.Subresource(ServiceAccountName, "token").Post(ctx, req, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
