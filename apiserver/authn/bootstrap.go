package authn

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/internal/pki"
)

// SecretGetter reads a Secret. A missing one must be reported with an error
// for which apierrors.IsNotFound is true. The returned Secret is only read.
type SecretGetter interface {
	GetSecret(ctx context.Context, namespace, name string) (*api.Secret, error)
}

// BootstrapToken authenticates bearer tokens "id.secret" against
// kube-system Secrets "bootstrap-token-<id>", with Kubernetes' rules: the
// Secret is of type bootstrap.kubernetes.io/token, not being deleted, its
// token-id and token-secret match (the secret compared in constant time), it
// has not expired and it says usage-bootstrap-authentication: "true". The
// user is system:bootstrap:<id> in system:bootstrappers, the Secret's
// auth-extra-groups (each must match system:bootstrappers:...) and
// system:authenticated. Only Data is read: the registry merges stringData
// into data on write.
type BootstrapToken struct {
	secrets SecretGetter
	now     func() time.Time
}

var (
	_ Authenticator      = (*BootstrapToken)(nil)
	_ TokenAuthenticator = (*BootstrapToken)(nil)
)

// NewBootstrapToken returns a bootstrap token authenticator reading Secrets
// through getter (the apiserver's watch cache).
func NewBootstrapToken(getter SecretGetter) *BootstrapToken {
	return &BootstrapToken{secrets: getter, now: time.Now}
}

// AuthenticateToken implements TokenAuthenticator. A token not of the
// bootstrap form is not ok without error (another authenticator may know
// it); a bootstrap-form token that fails any rule is an error saying which,
// for the log. Errors never contain the token secret.
func (a *BootstrapToken) AuthenticateToken(ctx context.Context, token string) (*request.User, bool, error) {
	id, secret, err := pki.ParseBootstrapToken(token)
	if err != nil {
		return nil, false, nil
	}
	name := pki.BootstrapTokenSecretName(id)
	s, err := a.secrets.GetSecret(ctx, pki.BootstrapTokenNamespace, name)
	if apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("no bootstrap token secret %s/%s", pki.BootstrapTokenNamespace, name)
	}
	if err != nil {
		return nil, false, fmt.Errorf("get bootstrap token secret %s/%s: %w", pki.BootstrapTokenNamespace, name, err)
	}
	fail := func(format string, args ...any) (*request.User, bool, error) {
		return nil, false, fmt.Errorf("bootstrap token secret %s/%s matching bearer token "+format,
			append([]any{s.Namespace, s.Name}, args...)...)
	}
	if s.DeletionTimestamp != nil {
		return fail("is deleted and awaiting removal")
	}
	if s.Type != pki.SecretTypeBootstrapToken || s.Data == nil {
		return fail("has invalid type, expected %s", pki.SecretTypeBootstrapToken)
	}
	if subtle.ConstantTimeCompare(s.Data[pki.BootstrapTokenSecretKey], []byte(secret)) != 1 {
		return fail("has invalid value for key %s", pki.BootstrapTokenSecretKey)
	}
	if string(s.Data[pki.BootstrapTokenIDKey]) != id {
		return fail("has invalid value for key %s, expected %s", pki.BootstrapTokenIDKey, id)
	}
	if pki.BootstrapTokenExpired(s, a.now()) {
		return fail("has expired (%s %q)", pki.BootstrapTokenExpirationKey, s.Data[pki.BootstrapTokenExpirationKey])
	}
	if string(s.Data[pki.BootstrapTokenUsageAuthentication]) != "true" {
		return fail("is not marked %s=true", pki.BootstrapTokenUsageAuthentication)
	}
	groups, err := pki.BootstrapTokenGroups(s)
	if err != nil {
		return fail("has invalid value for key %s: %v", pki.BootstrapTokenExtraGroupsKey, err)
	}
	return withAuthenticated(&request.User{Name: pki.BootstrapUserPrefix + id, Groups: groups}), true, nil
}

// AuthenticateRequest implements Authenticator for bearer tokens.
func (a *BootstrapToken) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	return authenticateBearer(r, a)
}
