package clusterdns

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

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
	LogLevel   string
}

// DefaultOptions listens on :53 for cluster.local and forwards to the
// resolvers of /etc/resolv.conf (the node's, with dnsPolicy: Default).
func DefaultOptions() Options {
	return Options{
		Client: daemon.ClientOptions{QPS: 20, Burst: 50}, Listen: ":53", Domain: "cluster.local",
		ResolvConf: "/etc/resolv.conf", HealthPort: 8080, TTL: 5, LogLevel: "info",
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	o.Client.AddFlags(fs)
	fs.StringVar(&o.Listen, "listen", o.Listen, "UDP and TCP address to answer DNS on.")
	fs.StringVar(&o.Domain, "cluster-domain", o.Domain, "The cluster's DNS domain.")
	fs.Func("upstream", "A resolver (host:port) for names outside the cluster domain; repeatable. Default: the nameservers of --resolv-conf.", func(s string) error {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return err
		}
		o.Upstreams = append(o.Upstreams, s)
		return nil
	})
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "resolv.conf whose nameservers are the upstreams when --upstream is not given.")
	fs.IntVar(&o.HealthPort, "health-port", o.HealthPort, "Port of /healthz, /readyz and /metrics (plain HTTP); 0 disables.")
	fs.UintVar(&o.TTL, "ttl", o.TTL, "TTL in seconds of answers about cluster names.")
	fs.StringVar(&o.LogLevel, "v", o.LogLevel, "Log level: debug, info, warn, error.")
}

// Run serves DNS until ctx ends.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	c, err := o.Client.Client("cluster-dns")
	if err != nil {
		return err
	}
	ups := o.Upstreams
	if len(ups) == 0 && o.ResolvConf != "" {
		if ups, err = UpstreamsFromResolvConf(o.ResolvConf); err != nil {
			log.Warn("no upstream resolvers; names outside the cluster get SERVFAIL", "err", err)
		}
	}
	health := daemon.NewServer("", log)
	if o.HealthPort > 0 {
		health.Addr = net.JoinHostPort("", strconv.Itoa(o.HealthPort))
	}
	srv, err := New(Config{Client: c, Domain: o.Domain, Upstreams: ups, TTL: uint32(o.TTL), Logger: log, Metrics: health.Registry})
	if err != nil {
		return err
	}
	health.AddCheck(daemon.Check{Name: "informer-sync", Ready: true, Func: srv.Ready})
	go func() {
		if err := health.Serve(ctx); err != nil {
			log.Error("health server", "err", err)
		}
	}()
	if err := srv.Start(ctx); err != nil {
		return err
	}
	log.Info("serving DNS", "listen", o.Listen, "domain", o.Domain, "upstreams", strings.Join(ups, ","))
	if err := srv.Serve(ctx, o.Listen); err != nil {
		return fmt.Errorf("serve DNS on %s: %w", o.Listen, err)
	}
	return nil
}
