package clusterdns

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
)

// Options are the cluster-dns flags.
type Options struct {
	Client     daemon.ClientOptions
	Listen     string
	Domain     string
	Upstreams  []string
	ResolvConf string
	HealthPort int
	TTL        uint
}

// DefaultOptions listens on :53 for cluster.local and forwards to the
// resolvers of /etc/resolv.conf (the node's, with dnsPolicy: Default).
func DefaultOptions() Options {
	return Options{
		Client: daemon.ClientOptions{QPS: 20, Burst: 50}, Listen: ":53", Domain: "cluster.local",
		ResolvConf: "/etc/resolv.conf", HealthPort: 8080, TTL: 5,
	}
}

// AddFlags registers the flags, by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	o.Client.AddFlags(fss.FlagSet("misc"))
	fs := fss.FlagSet("DNS")
	fs.StringVar(&o.Listen, "listen", o.Listen, "UDP and TCP address to answer DNS on.")
	fs.StringVar(&o.Domain, "cluster-domain", o.Domain, "The cluster's DNS domain.")
	fs.Func("upstream", "A resolver (`host:port`) for names outside the cluster domain; repeatable. Default: the nameservers of --resolv-conf.", func(s string) error {
		if err := validateHostPort(s, false); err != nil {
			return err
		}
		o.Upstreams = append(o.Upstreams, s)
		return nil
	})
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "resolv.conf whose nameservers are the upstreams when --upstream is not given.")
	fs.UintVar(&o.TTL, "ttl", o.TTL, "TTL in seconds of answers about cluster names.")
	fss.FlagSet("serving").IntVar(&o.HealthPort, "health-port", o.HealthPort, "Port of /healthz, /readyz and /metrics (plain HTTP); 0 disables.")
}

// maxTTL is the largest TTL DNS allows (RFC 2181: 2^31 - 1 seconds).
const maxTTL = 1<<31 - 1

// Validate checks the flag values; it reads no file.
func (o *Options) Validate() error {
	var errs []error
	if err := validateHostPort(o.Listen, true); err != nil {
		errs = append(errs, fmt.Errorf("--listen: %w", err))
	}
	if d := strings.TrimSuffix(o.Domain, "."); d == "" || len(naming.IsDNS1123Subdomain(d)) > 0 {
		errs = append(errs, fmt.Errorf("--cluster-domain %q is not a domain name", o.Domain))
	}
	if err := daemon.ValidatePort("health-port", o.HealthPort, true); err != nil {
		errs = append(errs, err)
	}
	if o.TTL < 1 || o.TTL > maxTTL {
		errs = append(errs, fmt.Errorf("--ttl must be in [1, %d] seconds, got %d", maxTTL, o.TTL))
	}
	if err := o.Client.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateHostPort checks "host:port" with a numeric port and an IP host;
// listen also allows ":53" (every address) and "localhost".
func validateHostPort(s string, listen bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be a number in [1, 65535]", s)
	}
	if listen && (host == "" || host == "localhost") {
		return nil
	}
	if net.ParseIP(host) == nil {
		return fmt.Errorf("%q: host must be an IP address", s)
	}
	return nil
}

// NewCommand is cluster-dns's command line: flags, validation, run.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "cluster-dns",
		Long: `cluster-dns is the cluster's DNS server: it answers for Services and Pods under
the cluster domain from the API, and forwards other names upstream. It runs
as a Deployment in kube-system behind the kube-dns Service.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
	}
}

// Run serves DNS until ctx ends. What the flags point at is checked first,
// before anything is logged: the kubeconfig, the resolv.conf (when no
// --upstream is given) and the DNS and health ports.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	c, err := o.Client.Client("cluster-dns")
	if err != nil {
		return err
	}
	ups := o.Upstreams
	if len(ups) == 0 && o.ResolvConf != "" {
		if ups, err = UpstreamsFromResolvConf(o.ResolvConf); err != nil {
			return fmt.Errorf("--resolv-conf %s: %w", o.ResolvConf, err)
		}
		if len(ups) == 0 {
			log.Warn("no upstream resolvers; names outside the cluster get SERVFAIL", "resolvConf", o.ResolvConf)
		}
	}
	udp, err := net.ListenPacket("udp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	defer udp.Close()
	tcp, err := daemon.Listen(o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	defer tcp.Close()
	health := daemon.NewServer("", log)
	var healthLn net.Listener
	if o.HealthPort > 0 {
		health.Addr = net.JoinHostPort("", strconv.Itoa(o.HealthPort))
		if healthLn, err = daemon.Listen(health.Addr); err != nil {
			return fmt.Errorf("--health-port: %w", err)
		}
		defer healthLn.Close()
	}
	srv, err := New(Config{Client: c, Domain: o.Domain, Upstreams: ups, TTL: uint32(o.TTL), Logger: log, Metrics: health.Registry})
	if err != nil {
		return err
	}
	health.AddCheck(daemon.InformerSyncCheck(srv.Ready))
	var serve func(context.Context) error
	if healthLn != nil {
		serve = func(ctx context.Context) error { return health.ServeListener(ctx, healthLn) }
	}
	return daemon.ServeAndRun(ctx, serve, func(ctx context.Context) error {
		if err := srv.Start(ctx); err != nil {
			return err
		}
		log.Info("serving DNS", "listen", o.Listen, "domain", o.Domain, "upstreams", strings.Join(ups, ","))
		if err := srv.ServeOn(ctx, udp, tcp); err != nil {
			return fmt.Errorf("serve DNS on %s: %w", o.Listen, err)
		}
		return nil
	})
}
