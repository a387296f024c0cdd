package ingress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/secureserving"
)

// Defaults of the flags.
const (
	DefaultControllerClass = "minik8s.io/ingress-controller"
	DefaultIngressClass    = "minik8s"
	// DefaultSecurePort is ingress-nginx's port of /healthz and /metrics,
	// served here over HTTPS as kube-scheduler serves its own.
	DefaultSecurePort = 10254
)

// Options are the ingress-controller flags.
type Options struct {
	Client    daemon.ClientOptions
	HTTPPort  int
	HTTPSPort int
	// Serving serves /healthz, /livez, /readyz and /metrics over HTTPS on
	// --secure-port, authenticated and authorized by the apiserver, as
	// kube-scheduler and kube-controller-manager serve theirs.
	Serving          secureserving.Options
	ControllerClass  string
	IngressClass     string
	PublishAddresses []string
}

// DefaultOptions serve HTTP on 80 and HTTPS on 443 for the "minik8s"
// class of controller minik8s.io/ingress-controller.
func DefaultOptions() Options {
	return Options{Client: daemon.ClientOptions{QPS: 20, Burst: 50}, HTTPPort: 80, HTTPSPort: 443,
		Serving:         secureserving.DefaultOptions(DefaultSecurePort, "ingress-controller"),
		ControllerClass: DefaultControllerClass, IngressClass: DefaultIngressClass}
}

// AddFlags registers the flags, by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	o.Client.AddFlags(fss.FlagSet("misc"))
	fs := fss.FlagSet("ingress")
	fs.StringVar(&o.ControllerClass, "controller-class", o.ControllerClass, "The spec.controller of the IngressClasses whose Ingresses this controller serves.")
	fs.StringVar(&o.IngressClass, "ingress-class", o.IngressClass, "Name of the controller's IngressClass; Ingresses whose deprecated kubernetes.io/ingress.class annotation names it are served too.")
	fs.Func("publish-address", "An address (`IP or DNS name`) written into the status.loadBalancer.ingress of the Ingresses served; repeatable. None: the status is left alone.", func(s string) error {
		if err := validateAddress(s); err != nil {
			return err
		}
		o.PublishAddresses = append(o.PublishAddresses, s)
		return nil
	})
	fs.IntVar(&o.HTTPPort, "http-port", o.HTTPPort, "Port to serve the Ingresses' HTTP on.")
	fs.IntVar(&o.HTTPSPort, "https-port", o.HTTPSPort, "Port to serve the Ingresses' HTTPS on.")
	o.Serving.AddFlags(fss)
}

func validateAddress(s string) error {
	if net.ParseIP(s) != nil {
		return nil
	}
	if len(naming.IsDNS1123Subdomain(s)) > 0 {
		return fmt.Errorf("%q is neither an IP address nor a DNS name", s)
	}
	return nil
}

// Validate checks the flag values; it reads no file.
func (o *Options) Validate() error {
	errs := []error{
		daemon.ValidatePort("http-port", o.HTTPPort, false),
		daemon.ValidatePort("https-port", o.HTTPSPort, false),
		o.Serving.Validate(),
		o.Client.Validate(),
	}
	if o.HTTPPort == o.HTTPSPort {
		errs = append(errs, fmt.Errorf("--http-port and --https-port must differ, both are %d", o.HTTPPort))
	}
	if p := o.Serving.SecurePort; p != 0 && (p == o.HTTPPort || p == o.HTTPSPort) {
		errs = append(errs, fmt.Errorf("--secure-port %d is also --http-port or --https-port", p))
	}
	// IngressClass' own rule for spec.controller: a domain-prefixed path.
	domain, path, ok := strings.Cut(o.ControllerClass, "/")
	if !ok || path == "" || len(naming.IsDNS1123Subdomain(domain)) > 0 || len(o.ControllerClass) > 250 {
		errs = append(errs, fmt.Errorf("--controller-class %q must be a domain-prefixed path such as %s", o.ControllerClass, DefaultControllerClass))
	}
	if msgs := naming.IsDNS1123Subdomain(o.IngressClass); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--ingress-class %q: %s", o.IngressClass, strings.Join(msgs, "; ")))
	}
	return errors.Join(errs...)
}

// NewCommand is ingress-controller's command line: flags, validation, run.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "ingress-controller",
		Long: `ingress-controller serves the cluster's Ingresses of its IngressClass over HTTP
and HTTPS: it routes by host and path to the ready endpoints of the backend
Services, presents the certificates of the Ingresses' TLS Secrets by SNI and
publishes its addresses in the Ingresses' status.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
	}
}

// Run serves until ctx ends. The kubeconfig, the files of the secure
// serving flags and the ports are checked first.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	c, err := o.Client.Client("ingress-controller")
	if err != nil {
		return err
	}
	listen := func(flag string, port int) (net.Listener, error) {
		l, err := daemon.Listen(net.JoinHostPort("", strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		return l, nil
	}
	httpLn, err := listen("http-port", o.HTTPPort)
	if err != nil {
		return err
	}
	defer httpLn.Close()
	httpsLn, err := listen("https-port", o.HTTPSPort)
	if err != nil {
		return err
	}
	defer httpsLn.Close()
	endpoints := daemon.NewServer("", log)
	secure, err := secureserving.New(o.Serving, endpoints.Handler(), log)
	if err != nil {
		return err
	}
	ctrl, err := New(Config{Client: c, Class: Class{Controller: o.ControllerClass, Name: o.IngressClass},
		PublishAddresses: o.PublishAddresses, Logger: log, Metrics: endpoints.Registry})
	if err != nil {
		return err
	}
	endpoints.AddCheck(daemon.InformerSyncCheck(ctrl.Ready))
	if len(o.PublishAddresses) == 0 {
		log.Info("no --publish-address: the Ingresses' status is left alone")
	}
	return daemon.ServeAndRun(ctx, secure.Serve, func(ctx context.Context) error {
		// The controller's loops stop (cancel runs first) before Run
		// returns, whichever way the proxy stopped.
		ctx, cancel := context.WithCancel(ctx)
		defer ctrl.Wait()
		defer cancel()
		if err := ctrl.Start(ctx); err != nil {
			return err
		}
		log.Info("ingress controller started", "controllerClass", o.ControllerClass, "ingressClass", o.IngressClass,
			"publish", strings.Join(o.PublishAddresses, ","))
		return ctrl.Serve(ctx, httpLn, httpsLn)
	})
}
