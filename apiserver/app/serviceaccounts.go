package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/serviceaccount"
)

// serviceAccounts is the apiserver's service-account identity: keys, token
// issuing (TokenRequest), the authenticator and OIDC discovery.
type serviceAccounts struct {
	keys     *serviceaccount.Keys
	requests *serviceaccount.TokenRequests
	authn    *serviceaccount.Authenticator
	oidc     *serviceaccount.Discovery
}

// loadServiceAccountKeys reads the key files, or makes sa.key and sa.pub in
// the certificate directory on first start when none is given (an
// apiserver without HTTPS signs with a key of its own, kept in memory).
func (a *APIServer) loadServiceAccountKeys() (*serviceaccount.Keys, error) {
	o := a.opts
	switch {
	case o.ServiceAccountSigningKeyFile != "":
		k, err := serviceaccount.LoadKeys(o.ServiceAccountSigningKeyFile, o.ServiceAccountKeyFiles)
		if err != nil {
			return nil, fmt.Errorf("--service-account-signing-key-file, --service-account-key-file: %w", err)
		}
		return k, nil
	case o.SecurePort > 0 || o.SecureListener != nil:
		k, err := serviceaccount.EnsureKeys(o.CertDir)
		if err != nil {
			return nil, fmt.Errorf("service account key in %s: %w", o.CertDir, err)
		}
		return k, nil
	default:
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		return serviceaccount.NewKeys(key)
	}
}

// apiAudiences are --api-audiences, or the issuers.
func (o *Options) apiAudiences() []string {
	if len(o.APIAudiences) > 0 {
		return o.APIAudiences
	}
	return o.ServiceAccountIssuers
}

// newServiceAccounts wires the token issuer, authenticator and discovery
// documents once the stores exist.
func (a *APIServer) newServiceAccounts(keys *serviceaccount.Keys, getter *objectGetter) (*serviceAccounts, error) {
	o := a.opts
	issuer := serviceaccount.NewIssuer(o.ServiceAccountIssuers[0], keys)
	sa := &serviceAccounts{
		keys: keys,
		requests: &serviceaccount.TokenRequests{Issuer: issuer, Getter: getter, Audiences: o.apiAudiences(),
			MaxExpirationSeconds: int64(o.ServiceAccountMaxTokenExpiration.Seconds()), ExtendExpiration: o.ServiceAccountExtendTokenExpiration},
		authn: serviceaccount.NewAuthenticator(keys, o.ServiceAccountIssuers, o.apiAudiences(), getter),
	}
	// kube-apiserver serves discovery only for an https issuer URL; the
	// JWKS is at the apiserver's external address.
	if u, err := url.Parse(issuer.URL); err == nil && u.Scheme == "https" && u.Host != "" {
		jwks := o.ServiceAccountJWKSURI
		if jwks == "" {
			jwks = a.externalURL() + serviceaccount.JWKSPath
		}
		oidc, err := serviceaccount.NewDiscovery(issuer.URL, jwks, keys)
		if err != nil {
			return nil, err
		}
		sa.oidc = oidc
	}
	return sa, nil
}

// externalURL is the https URL of this apiserver before it listens, at its
// advertise address (kube-apiserver's external address), so that pods can
// fetch what it names; 127.0.0.1 when there is no address to advertise.
func (a *APIServer) externalURL() string {
	host := "127.0.0.1"
	if ip := a.advertiseIP(); ip != nil {
		host = ip.String()
	}
	port := a.opts.SecurePort
	if l := a.opts.SecureListener; l != nil {
		if addr, ok := l.Addr().(*net.TCPAddr); ok {
			port = addr.Port
		}
	}
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// objectGetter reads what tokens name, from the watch caches first and
// etcd when a cache has not seen the object; missing is NotFound.
type objectGetter struct{ sas, pods, secrets, nodes *registry.Store }

var _ serviceaccount.Getter = (*objectGetter)(nil)

func get[T any](ctx context.Context, s *registry.Store, ns, name string) (*T, error) {
	if s == nil {
		return nil, fmt.Errorf("the resource is not served")
	}
	v, found, err := lookup[T](ctx, s, ns, name, false)
	if err == nil && !found {
		err = apierrors.NewNotFound(s.GR, name)
	}
	return v, err
}

func (g *objectGetter) GetServiceAccount(ctx context.Context, ns, name string) (*api.ServiceAccount, error) {
	return get[api.ServiceAccount](ctx, g.sas, ns, name)
}

func (g *objectGetter) GetPod(ctx context.Context, ns, name string) (*api.Pod, error) {
	return get[api.Pod](ctx, g.pods, ns, name)
}

func (g *objectGetter) GetSecret(ctx context.Context, ns, name string) (*api.Secret, error) {
	return get[api.Secret](ctx, g.secrets, ns, name)
}

func (g *objectGetter) GetNode(ctx context.Context, name string) (*api.Node, error) {
	return get[api.Node](ctx, g.nodes, "", name)
}
