package metricsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/pki"
)

// Options are the flags, named as sigs.k8s.io/metrics-server's.
type Options struct {
	Client      daemon.ClientOptions
	BindAddress string
	SecurePort  int
	// TLSCertFile and TLSKeyFile serve HTTPS; empty: a self-signed
	// certificate made at start (the APIService then needs
	// insecureSkipTLSVerify, as metrics-server's manifest has).
	TLSCertFile, TLSKeyFile string
	MetricResolution        time.Duration
	KubeletInsecureTLS      bool
	KubeletCA               string
	KubeletClientCert       string
	KubeletClientKey        string
	KubeletRequestTimeout   time.Duration
	// RequestHeaderClientCAFile, when set, replaces the CA read from
	// kube-system/extension-apiserver-authentication.
	RequestHeaderClientCAFile string
}

// DefaultOptions are metrics-server's defaults, with its manifest's
// resolution of 15 s.
func DefaultOptions() Options {
	return Options{Client: daemon.ClientOptions{QPS: 20, Burst: 30}, BindAddress: "0.0.0.0", SecurePort: 10250,
		MetricResolution: 15 * time.Second, KubeletRequestTimeout: 10 * time.Second}
}

// AddFlags registers the flags by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	o.Client.AddFlags(fss.FlagSet("misc"))
	fs := fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address on which to listen for the --secure-port port.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port on which to serve HTTPS with authentication and authorization.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "File containing the default x509 Certificate for HTTPS (default: a self-signed certificate made at start).")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "File containing the default x509 private key matching --tls-cert-file.")
	fs = fss.FlagSet("kubelet client")
	fs.DurationVar(&o.MetricResolution, "metric-resolution", o.MetricResolution, "The resolution at which metrics-server will retain metrics, must set value at least 10s.")
	fs.BoolVar(&o.KubeletInsecureTLS, "kubelet-insecure-tls", o.KubeletInsecureTLS, "Do not verify CA of serving certificates presented by Kubelets.  For testing purposes only.")
	fs.StringVar(&o.KubeletCA, "kubelet-certificate-authority", o.KubeletCA, "Path to the CA to use to validate the Kubelet's serving certificates.")
	fs.StringVar(&o.KubeletClientCert, "kubelet-client-certificate", o.KubeletClientCert, "Path to a client cert file for TLS (default: one for "+KubeletClientUser+" requested from the cluster's kube-apiserver-client signer at start).")
	fs.StringVar(&o.KubeletClientKey, "kubelet-client-key", o.KubeletClientKey, "Path to a client key file for TLS.")
	fs.DurationVar(&o.KubeletRequestTimeout, "kubelet-request-timeout", o.KubeletRequestTimeout, "The length of time to wait before giving up on a single request to Kubelet.")
	fs = fss.FlagSet("authentication")
	fs.StringVar(&o.RequestHeaderClientCAFile, "requestheader-client-ca-file", o.RequestHeaderClientCAFile, "Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers (default: from kube-system/extension-apiserver-authentication).")
}

// Validate checks the flag values; it reads no file.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, daemon.ValidatePort("secure-port", o.SecurePort, false), daemon.ValidateIP("bind-address", o.BindAddress), o.Client.Validate())
	if o.MetricResolution < 10*time.Second {
		errs = append(errs, fmt.Errorf("--metric-resolution must be at least 10s, got %s", o.MetricResolution))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file must be given together"))
	}
	if (o.KubeletClientCert == "") != (o.KubeletClientKey == "") {
		errs = append(errs, errors.New("--kubelet-client-certificate and --kubelet-client-key must be given together"))
	}
	if !o.KubeletInsecureTLS && o.KubeletCA == "" {
		errs = append(errs, errors.New("--kubelet-certificate-authority is required unless --kubelet-insecure-tls"))
	}
	return errors.Join(errs...)
}

// NewCommand is the metrics-server command line.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "metrics-server",
		Long: `metrics-server scrapes the kubelets' resource metrics and serves them as the
metrics.k8s.io/v1beta1 API through the apiserver's aggregation layer, for
kubectl top and the HorizontalPodAutoscaler.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
	}
}

// Run loads what the flags name, then serves until ctx ends.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	c, err := o.Client.Client("metrics-server")
	if err != nil {
		return err
	}
	// Kubelets authenticate client certificates only: without one given,
	// one is requested from the cluster's signer.
	var kcert tls.Certificate
	if o.KubeletClientCert != "" {
		if kcert, err = tls.LoadX509KeyPair(o.KubeletClientCert, o.KubeletClientKey); err != nil {
			return fmt.Errorf("--kubelet-client-certificate: %w", err)
		}
	} else if kcert, err = requestKubeletClientCert(ctx, c, KubeletClientUser); err != nil {
		return err
	}
	ktls := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{kcert}, InsecureSkipVerify: o.KubeletInsecureTLS}
	if o.KubeletCA != "" {
		pool, err := pki.ReadCAPool(o.KubeletCA)
		if err != nil {
			return fmt.Errorf("--kubelet-certificate-authority: %w", err)
		}
		ktls.RootCAs = pool
	}
	serving, err := servingCert(o)
	if err != nil {
		return err
	}
	authn, err := LoadRequestHeader(ctx, c, o.RequestHeaderClientCAFile)
	if err != nil {
		return err
	}
	s, err := New(Config{Client: c, KubeletTLS: ktls, Resolution: o.MetricResolution, KubeletTimeout: o.KubeletRequestTimeout,
		Authn: authn, ServingCert: serving, Logger: log})
	if err != nil {
		return err
	}
	l, err := daemon.Listen(net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return err
	}
	return s.Run(ctx, l)
}

func servingCert(o Options) (tls.Certificate, error) {
	if o.TLSCertFile != "" {
		c, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return c, fmt.Errorf("--tls-cert-file: %w", err)
		}
		return c, nil
	}
	ca, err := pki.NewCA("metrics-server-ca", 0)
	if err != nil {
		return tls.Certificate{}, err
	}
	host, _ := os.Hostname()
	certPEM, keyPEM, err := ca.IssueServing("metrics-server", []string{"localhost", host, "metrics-server.kube-system.svc"}, []net.IP{net.IPv4(127, 0, 0, 1)}, 0)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// LoadRequestHeader reads request-header authentication from
// kube-system/extension-apiserver-authentication, as extension apiservers
// do; caFile, when set, replaces its CA.
func LoadRequestHeader(ctx context.Context, c *client.Client, caFile string) (*RequestHeader, error) {
	cm, err := client.Resource[api.ConfigMap](c).Namespace(api.NamespaceSystem).Get(ctx, "extension-apiserver-authentication")
	if err != nil {
		return nil, fmt.Errorf("reading request-header authentication: %w", err)
	}
	list := func(key string) ([]string, error) {
		var v []string
		if s := cm.Data[key]; s != "" {
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				return nil, fmt.Errorf("extension-apiserver-authentication %s: %w", key, err)
			}
		}
		return v, nil
	}
	rh := &RequestHeader{CAs: x509.NewCertPool()}
	caPEM := []byte(cm.Data["requestheader-client-ca-file"])
	if caFile != "" {
		if caPEM, err = os.ReadFile(caFile); err != nil {
			return nil, fmt.Errorf("--requestheader-client-ca-file: %w", err)
		}
	}
	if !rh.CAs.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no request-header client CA: the apiserver publishes none (is it serving HTTPS with a front-proxy CA?)")
	}
	for key, dst := range map[string]*[]string{"requestheader-allowed-names": &rh.AllowedNames,
		"requestheader-username-headers": &rh.UserHeaders, "requestheader-group-headers": &rh.GroupHeaders} {
		if *dst, err = list(key); err != nil {
			return nil, err
		}
	}
	if len(rh.UserHeaders) == 0 {
		return nil, errors.New("extension-apiserver-authentication names no request-header username header")
	}
	return rh, nil
}
