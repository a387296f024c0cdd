package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Options are the kubelet's server flags, named as the Kubernetes kubelet's.
type Options struct {
	Address string
	Port    int
	// ClientCAFile verifies client certificates (default: the cluster CA
	// of the kubeconfig, which the app passes to Config).
	ClientCAFile string
	// TLSCertFile and TLSPrivateKeyFile replace the self-signed serving
	// certificate (bootstrap.EnsureServingCert) when set.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// RotateServerCertificates is kube's --rotate-server-certificates
	// (serverTLSBootstrap in the config file): request the serving
	// certificate from the kubernetes.io/kubelet-serving signer and renew
	// it (bootstrap.ServingManager); the self-signed certificate, or
	// --tls-cert-file's, is served until one is issued.
	RotateServerCertificates bool
	// AuthenticationTokenWebhook authenticates bearer tokens with a
	// TokenReview (kube's --authentication-token-webhook; on here, as the
	// kubelet configuration file's default authentication.webhook.enabled),
	// keeping answers for TokenWebhookCacheTTL.
	AuthenticationTokenWebhook bool
	TokenWebhookCacheTTL       time.Duration
}

// DefaultOptions are the kubelet's defaults.
func DefaultOptions() Options {
	return Options{Address: "0.0.0.0", Port: DefaultPort, AuthenticationTokenWebhook: true, TokenWebhookCacheTTL: 2 * time.Minute}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Address, "address", o.Address, "IP address for the kubelet to serve on (0.0.0.0 or :: for all interfaces)")
	fs.IntVar(&o.Port, "port", o.Port, "port for the kubelet to serve on (HTTPS: logs, exec)")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA bundle that client certificates must chain to (default: the CA of --kubeconfig)")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "serving certificate (default: a self-signed one in --root-dir/pki)")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "key of --tls-cert-file")
	fs.BoolVar(&o.AuthenticationTokenWebhook, "authentication-token-webhook", o.AuthenticationTokenWebhook, "Use the TokenReview API to determine authentication for bearer tokens.")
	fs.DurationVar(&o.TokenWebhookCacheTTL, "authentication-token-webhook-cache-ttl", o.TokenWebhookCacheTTL, "The duration to cache responses from the webhook token authenticator.")
	fs.BoolVar(&o.RotateServerCertificates, "rotate-server-certificates", o.RotateServerCertificates, "Auto-request and rotate the kubelet serving certificates by requesting new certificates from the kube-apiserver when the certificate expiration approaches (signer kubernetes.io/kubelet-serving; the requests need approval, see the apiserver's --approve-kubelet-serving-certificates)")
}

// Validate checks the address and port, and that the certificate and its
// key come together. It reads no file (Certificate and ClientCAs do).
func (o *Options) Validate() error {
	var errs []error
	if net.ParseIP(o.Address) == nil {
		errs = append(errs, fmt.Errorf("--address %q is not an IP address", o.Address))
	}
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port must be in [1, 65535], got %d", o.Port))
	}
	if o.TokenWebhookCacheTTL < 0 {
		errs = append(errs, fmt.Errorf("--authentication-token-webhook-cache-ttl must be >= 0, got %v", o.TokenWebhookCacheTTL))
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file must be given together"))
	}
	return errors.Join(errs...)
}

// Addr is the listen address.
func (o *Options) Addr() string { return net.JoinHostPort(o.Address, strconv.Itoa(o.Port)) }

// ClientCAs is the pool of --client-ca-file, or of defaultCAPEM (the
// kubeconfig's cluster CA) without it.
func (o *Options) ClientCAs(defaultCAPEM []byte) (*x509.CertPool, error) {
	pemData := defaultCAPEM
	if o.ClientCAFile != "" {
		b, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		pemData = b
	}
	if len(pemData) == 0 {
		return nil, errors.New("no client CA: set --client-ca-file (the kubeconfig has no certificate-authority data)")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		if o.ClientCAFile != "" {
			return nil, fmt.Errorf("--client-ca-file %s: no PEM certificate found", o.ClientCAFile)
		}
		return nil, errors.New("client CA of the kubeconfig: no PEM certificate found")
	}
	return pool, nil
}

// Certificate loads --tls-cert-file/--tls-private-key-file; ok is false
// when they are not set and the self-signed certificate should be used.
func (o *Options) Certificate() (cert tls.Certificate, ok bool, err error) {
	switch {
	case o.TLSCertFile == "" && o.TLSPrivateKeyFile == "":
		return tls.Certificate{}, false, nil
	case o.TLSCertFile == "" || o.TLSPrivateKeyFile == "":
		return tls.Certificate{}, false, errors.New("--tls-cert-file and --tls-private-key-file must be given together")
	}
	cert, err = tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("--tls-cert-file: %w", err)
	}
	return cert, true, nil
}
