package secureserving

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/minik8s/minik8s/internal/daemon"
)

// Options are kube's secure serving, delegated authentication and
// delegated authorization flags, with their defaults.
type Options struct {
	// BindAddress and SecurePort are where HTTPS is served; SecurePort 0
	// serves nothing.
	BindAddress string
	SecurePort  int
	// CertDir keeps the self-signed certificate (PairName.crt, .key) made
	// when TLSCertFile and TLSPrivateKeyFile are not given; empty keeps
	// it in memory.
	CertDir                        string
	TLSCertFile, TLSPrivateKeyFile string
	// PairName names the self-signed certificate's files:
	// "kube-scheduler", "kube-controller-manager".
	PairName string
	// Listener, when set, is served instead of BindAddress:SecurePort
	// (tests pass one on 127.0.0.1:0).
	Listener net.Listener

	Authentication AuthenticationOptions
	Authorization  AuthorizationOptions
}

// AuthenticationOptions are kube's --authentication-* flags and
// --client-ca-file.
type AuthenticationOptions struct {
	// Kubeconfig reaches the apiserver for TokenReviews and the
	// ConfigMap lookup; empty uses the in-cluster configuration, and
	// outside a pod reviews no token (every token-bearing request is
	// anonymous).
	Kubeconfig string
	// CacheTTL keeps TokenReview answers, authenticated or not.
	CacheTTL time.Duration
	// ClientCAFile verifies client certificates; empty looks the CA up
	// in the cluster unless SkipLookup.
	ClientCAFile string
	SkipLookup   bool
	// TolerateLookupFailure serves on when the lookup fails (without
	// client certificate authentication).
	TolerateLookupFailure bool
}

// AuthorizationOptions are kube's --authorization-* flags.
type AuthorizationOptions struct {
	// Kubeconfig reaches the apiserver for SubjectAccessReviews; empty
	// uses the in-cluster configuration, and outside a pod refuses every
	// request AlwaysAllowPaths and AlwaysAllowGroups do not let through.
	Kubeconfig string
	// AllowCacheTTL and DenyCacheTTL keep SubjectAccessReview answers.
	AllowCacheTTL, DenyCacheTTL time.Duration
	// AlwaysAllowPaths pass without a review: an exact path, or a prefix
	// ending in "*".
	AlwaysAllowPaths []string
	// AlwaysAllowGroups pass whatever they ask (kube: system:masters,
	// which kube-apiserver's authorizer allows everything anyway).
	AlwaysAllowGroups []string
}

// DefaultOptions are kube's defaults for a component serving on port
// with the self-signed certificate pair pairName: all addresses, no
// certificate directory, 10 s caches, /healthz, /readyz and /livez open.
func DefaultOptions(port int, pairName string) Options {
	return Options{
		BindAddress: "0.0.0.0",
		SecurePort:  port,
		PairName:    pairName,
		Authentication: AuthenticationOptions{
			CacheTTL:              10 * time.Second,
			TolerateLookupFailure: true,
		},
		Authorization: AuthorizationOptions{
			AllowCacheTTL:     10 * time.Second,
			DenyCacheTTL:      10 * time.Second,
			AlwaysAllowPaths:  []string{"/healthz", "/readyz", "/livez"},
			AlwaysAllowGroups: []string{"system:masters"},
		},
	}
}

// AddFlags registers the flags in kube's --help sections "secure
// serving", "authentication" and "authorization".
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	fs := fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address on which to listen for the --secure-port port. If blank or an unspecified address (0.0.0.0 or ::), all interfaces will be used.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "File containing the default x509 Certificate for HTTPS (CA cert, if any, concatenated after server cert). If --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory specified by --cert-dir.")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "File containing the default x509 private key matching --tls-cert-file.")

	fs = fss.FlagSet("authentication")
	a := &o.Authentication
	fs.StringVar(&a.Kubeconfig, "authentication-kubeconfig", a.Kubeconfig, "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io. This is optional. If empty, all token requests are considered to be anonymous and no client CA is looked up in the cluster.")
	fs.DurationVar(&a.CacheTTL, "authentication-token-webhook-cache-ttl", a.CacheTTL, "The duration to cache responses from the webhook token authenticator.")
	fs.StringVar(&a.ClientCAFile, "client-ca-file", a.ClientCAFile, "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.")
	fs.BoolVar(&a.SkipLookup, "authentication-skip-lookup", a.SkipLookup, "If false, the authentication-kubeconfig will be used to lookup missing authentication configuration from the cluster.")
	fs.BoolVar(&a.TolerateLookupFailure, "authentication-tolerate-lookup-failure", a.TolerateLookupFailure, "If true, failures to look up missing authentication configuration from the cluster are not considered fatal. Note that this can result in authentication that treats all requests as anonymous.")

	fs = fss.FlagSet("authorization")
	z := &o.Authorization
	fs.StringVar(&z.Kubeconfig, "authorization-kubeconfig", z.Kubeconfig, "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io. This is optional. If empty, all requests not skipped by authorization are forbidden.")
	fs.DurationVar(&z.AllowCacheTTL, "authorization-webhook-cache-authorized-ttl", z.AllowCacheTTL, "The duration to cache 'authorized' responses from the webhook authorizer.")
	fs.DurationVar(&z.DenyCacheTTL, "authorization-webhook-cache-unauthorized-ttl", z.DenyCacheTTL, "The duration to cache 'unauthorized' responses from the webhook authorizer.")
	fs.StringSliceVar(&z.AlwaysAllowPaths, "authorization-always-allow-paths", z.AlwaysAllowPaths, "A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the 'core' kubernetes server.")
}

// Validate checks the flags' values; it reads no file.
func (o *Options) Validate() error {
	var errs []error
	if err := daemon.ValidatePort("secure-port", o.SecurePort, true); err != nil {
		errs = append(errs, err)
	}
	if o.SecurePort > 0 && o.BindAddress != "" {
		if err := daemon.ValidateIP("bind-address", o.BindAddress); err != nil {
			errs = append(errs, err)
		}
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file must be given together"))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"authentication-token-webhook-cache-ttl", o.Authentication.CacheTTL},
		{"authorization-webhook-cache-authorized-ttl", o.Authorization.AllowCacheTTL},
		{"authorization-webhook-cache-unauthorized-ttl", o.Authorization.DenyCacheTTL},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("--%s must not be negative, got %v", d.flag, d.v))
		}
	}
	for _, p := range o.Authorization.AlwaysAllowPaths {
		if i := strings.Index(p, "*"); i >= 0 && i != len(p)-1 {
			errs = append(errs, fmt.Errorf("--authorization-always-allow-paths: only trailing * allowed in %q", p))
		}
	}
	return errors.Join(errs...)
}
