package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// ensurePKI prepares the HTTPS side, when it is served: the certificate
// directory (CA and serving certificate made on first start), the TLS
// config, the admin and component kubeconfigs, and the kubelet client
// certificate.
func (a *APIServer) ensurePKI(ctx context.Context) error {
	if a.secureListener == nil {
		return nil
	}
	// The certificate names the advertise address: pods reach this server
	// there through the kubernetes Service, and by it in the OIDC
	// discovery document's jwks_uri.
	bundle, err := pki.EnsureServing(a.opts.CertDir, pki.ServingOptions{AdvertiseAddress: a.advertiseIP(), ExtraSANs: a.opts.TLSSANs})
	if err != nil {
		return fmt.Errorf("certificates in %s: %w", a.opts.CertDir, err)
	}
	for _, w := range bundle.Written {
		a.log.Info("wrote certificate", "file", w)
	}
	a.pki = bundle
	if a.tlsConfig, err = bundle.ServerTLSConfig(); err != nil {
		return err
	}
	a.tlsConfig.NextProtos = []string{"h2", "http/1.1"}
	if a.opts.WriteKubeconfig != "" {
		if err := a.writeAdminKubeconfig(bundle); err != nil {
			return err
		}
	}
	if err := a.writeComponentKubeconfigs(bundle); err != nil {
		return err
	}
	if err := a.ensureFrontProxy(); err != nil {
		return err
	}
	if err := a.publishAuthenticationConfig(ctx); err != nil {
		return err
	}
	return a.ensureKubeletClientCert(bundle)
}

// authenticate is the HTTPS port's authentication filter: client
// certificates of the cluster CA, the token file, bootstrap tokens; no
// credentials only on the health checks and /version.
func (a *APIServer) authenticate() func(http.Handler) http.Handler {
	authenticators := append([]authn.Authenticator{authn.NewX509(a.pki.CA.Pool())}, a.tokenAuthenticators()...)
	return authn.Filter(authn.Union(authenticators...), authn.DefaultAnonymousPaths)
}

// tokenAuthenticators check bearer tokens: the token file, bootstrap
// tokens, service-account tokens. They guard the HTTPS port and answer TokenReviews.
func (a *APIServer) tokenAuthenticators() []authn.Authenticator {
	var out []authn.Authenticator
	if a.tokens != nil {
		out = append(out, a.tokens)
	}
	out = append(out, authn.NewBootstrapToken(&secretGetter{store: a.Store("", "secrets")}))
	if a.sa != nil {
		out = append(out, a.sa.authn)
	}
	return out
}

// ServerURL is the https URL clients use, from the advertise address.
func (a *APIServer) serverURL() string {
	host := a.opts.AdvertiseAddress
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	port := a.opts.SecurePort
	if a.secureListener != nil {
		port = a.secureListener.Addr().(*net.TCPAddr).Port
	}
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

func (a *APIServer) writeAdminKubeconfig(b *pki.Bundle) error {
	cfg := kubeconfig.NewForCluster(a.serverURL(), b.CA.CertPEM(), pki.AdminUser,
		kubeconfig.AuthInfo{ClientCertificateData: b.AdminCertPEM, ClientKeyData: b.AdminKeyPEM}, "default")
	if err := kubeconfig.Write(a.opts.WriteKubeconfig, cfg); err != nil {
		return fmt.Errorf("--write-kubeconfig: %w", err)
	}
	a.log.Info("wrote admin kubeconfig", "path", a.opts.WriteKubeconfig, "server", a.serverURL())
	return nil
}

// PKI returns the certificate bundle when HTTPS is served.
func (a *APIServer) PKI() *pki.Bundle { return a.pki }

// SecureURL returns the https URL of the server, once started with HTTPS.
func (a *APIServer) SecureURL() string { return a.serverURL() }

// insecureUser is who a request on the local plain-HTTP port acts as, like
// kube-apiserver's old insecure port: a trusted local administrator.
var insecureUser = &request.User{Name: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}

// trusted is the plain-HTTP port's authentication: every request is
// insecureUser.
func trusted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), insecureUser)))
	})
}

// checkLoopback refuses a plain-HTTP bind address that is not loopback.
func checkLoopback(addr string) error {
	ip := net.ParseIP(addr)
	if addr == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("--insecure-bind-address %q: the unauthenticated plain-HTTP port may only bind to a loopback address", addr)
}

// secretGetter reads Secrets for the bootstrap-token authenticator, from the
// watch cache first and etcd when the cache has not seen it.
type secretGetter struct{ store *registry.Store }

func (g *secretGetter) GetSecret(ctx context.Context, ns, name string) (*api.Secret, error) {
	if g.store == nil {
		return nil, errors.New("the secrets resource is not served")
	}
	s, found, err := lookup[api.Secret](ctx, g.store, ns, name, false)
	if err == nil && !found {
		err = apierrors.NewNotFound(g.store.GR, name)
	}
	return s, err
}

// writeComponentKubeconfigs writes scheduler.kubeconfig,
// controller-manager.kubeconfig and kube-proxy.kubeconfig into the
// certificate directory, each with the component's own client certificate
// (system:kube-scheduler, system:kube-controller-manager,
// system:kube-proxy), so each process talks TLS as itself. Nodes get the
// kube-proxy one for their service proxy and pod routes (kubelet
// --proxy-kubeconfig), which read every Node: the kubelet's own
// credentials may read only its own.
func (a *APIServer) writeComponentKubeconfigs(b *pki.Bundle) error {
	for _, c := range []struct {
		file, user string
		ensure     func() ([]byte, []byte, error)
	}{
		{"scheduler.kubeconfig", pki.SchedulerUser, b.EnsureSchedulerCert},
		{"controller-manager.kubeconfig", pki.ControllerManagerUser, b.EnsureControllerManagerCert},
		{"kube-proxy.kubeconfig", authz.KubeProxy, func() ([]byte, []byte, error) { return b.EnsureClientCert("kube-proxy", authz.KubeProxy, nil) }},
	} {
		certPEM, keyPEM, err := c.ensure()
		if err != nil {
			return fmt.Errorf("client certificate of %s: %w", c.user, err)
		}
		cfg := kubeconfig.NewForCluster(a.serverURL(), b.CA.CertPEM(), c.user,
			kubeconfig.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "")
		if err := kubeconfig.Write(b.Path(c.file), cfg); err != nil {
			return fmt.Errorf("write %s: %w", c.file, err)
		}
	}
	return nil
}
