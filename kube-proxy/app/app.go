package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/podroutes"
	"github.com/minik8s/minik8s/kubelet/netpol"
	"github.com/minik8s/minik8s/kubelet/proxy"
)

// NewCommand is kube-proxy's command line: flags, validation, run.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "kube-proxy",
		Long: `The Kubernetes network proxy runs on each node. It keeps the node's iptables
rules for the Services' ClusterIPs, node ports, external IPs and load-balancer
addresses in step with their EndpointSlices. Beside it run the NetworkPolicy
enforcer (--run-firewall) and the routes to the other nodes' pod CIDRs
(--pod-routes), which need the same cluster-wide reads.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
	}
}

// Run runs the node's network loops until ctx ends (or, with --cleanup,
// removes their rules and returns).
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	if o.Cleanup {
		return cleanup(log)
	}
	c, err := o.Client.Client("kube-proxy")
	if err != nil {
		return err
	}
	nodeName, err := o.NodeName()
	if err != nil {
		return err
	}
	metrics := daemon.NewServer(o.MetricsBindAddress, log)
	loops, health, err := o.loops(c, nodeName, metrics, log)
	if err != nil {
		return err
	}
	var healthLn net.Listener
	if o.HealthzBindAddress != "" {
		if healthLn, err = daemon.Listen(o.HealthzBindAddress); err != nil {
			return fmt.Errorf("--healthz-bind-address: %w", err)
		}
	}
	serve := func(ctx context.Context) error {
		errc := make(chan error, 2)
		var wg sync.WaitGroup
		wg.Go(func() { errc <- metrics.Serve(ctx) })
		if healthLn != nil {
			wg.Go(func() { errc <- serveHealth(ctx, healthLn, health, log) })
		}
		wg.Wait()
		close(errc)
		var errs []error
		for err := range errc {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	log.Info("kube-proxy starting", "node", nodeName, "mode", o.mode(), "clusterCIDR", o.ClusterCIDR,
		"runFirewall", o.RunFirewall, "podRoutes", o.PodRoutes)
	return daemon.ServeAndRun(ctx, serve, func(ctx context.Context) error {
		return runAll(ctx, loops)
	})
}

// serveHealth serves kube-proxy's /healthz and /livez on ln until ctx ends.
func serveHealth(ctx context.Context, ln net.Listener, h *proxyHealth, log *slog.Logger) error {
	srv := daemon.NewHTTPServer(h.Handler())
	log.Info("serving healthz", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("proxy healthz: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-errc
	return nil
}

// loop is one of kube-proxy's node loops.
type loop struct {
	name string
	run  func(context.Context) error
}

// loops builds the service proxy, the NetworkPolicy enforcer (or the
// removal of its rules) and the pod routes on one informer factory, and
// the proxy's health state, fed by the Service and EndpointSlice events
// and by the proxy's rule writes.
func (o *Options) loops(c *client.Client, nodeName string, metrics *daemon.Server, log *slog.Logger) ([]loop, *proxyHealth, error) {
	f := informer.NewFactory(c, informer.FactoryOptions{Logger: log})
	nodes := informer.Shared[api.Node](f, "", client.ListOptions{})
	health := newProxyHealth(2*o.SyncPeriod, func() *api.Node {
		for _, n := range nodes.Store().List() {
			if n.Name == nodeName {
				return n
			}
		}
		return nil
	})
	watch := &syncWatcher{Registerer: metrics.Registry}
	var out []loop
	p, err := proxy.New(proxy.Config{Mode: o.mode(), Client: c, Factory: f, NodeName: nodeName, ClusterCIDR: o.ClusterCIDR,
		MinSyncPeriod: o.MinSyncPeriod, SyncPeriod: o.SyncPeriod, Logger: log.With("loop", "proxy"), Metrics: watch})
	if err != nil {
		return nil, nil, err
	}
	out = append(out, loop{"service proxy", p.Run})
	queued := func() { health.QueuedUpdate() }
	informer.Shared[api.Service](f, "", client.ListOptions{}).AddEventHandler(informer.Handler[api.Service]{
		OnAdd: func(*api.Service, bool) { queued() }, OnUpdate: func(_, _ *api.Service) { queued() }, OnDelete: func(*api.Service, bool) { queued() }})
	informer.Shared[api.EndpointSlice](f, "", client.ListOptions{}).AddEventHandler(informer.Handler[api.EndpointSlice]{
		OnAdd: func(*api.EndpointSlice, bool) { queued() }, OnUpdate: func(_, _ *api.EndpointSlice) { queued() }, OnDelete: func(*api.EndpointSlice, bool) { queued() }})
	out = append(out, loop{"proxy health", func(ctx context.Context) error {
		f.Start(ctx) // the node informer, when nothing else started it
		watchWrites(ctx, watch, health)
		return nil
	}})
	if o.RunFirewall {
		e, err := netpol.New(netpol.Config{Client: c, Factory: f, NodeName: nodeName, MinSyncPeriod: o.MinSyncPeriod,
			Logger: log.With("loop", "netpol"), Metrics: metrics.Registry})
		if err != nil {
			return nil, nil, err
		}
		out = append(out, loop{"network policy", e.Run})
	} else {
		out = append(out, loop{"network policy cleanup", func(context.Context) error {
			if err := netpol.Cleanup(proxy.IPTables{}); err != nil {
				log.Warn("removing network policy rules", "err", err)
			}
			return nil
		}})
	}
	if o.PodRoutes {
		out = append(out, loop{"pod routes", podroutes.New(podroutes.Config{Client: c, Factory: f, NodeName: nodeName,
			ResyncPeriod: o.SyncPeriod, Logger: log.With("loop", "routes")}).Run})
	}
	metrics.AddCheck(daemon.Check{Name: "proxy-rules", Ready: true, Func: func() error {
		if watch.writes() == 0 {
			return errors.New("service rules not written yet")
		}
		return nil
	}})
	return out, health, nil
}

// watchWrites marks health updated whenever the proxy's write counter
// moves, until ctx ends.
func watchWrites(ctx context.Context, w *syncWatcher, h *proxyHealth) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	last := 0.0
	for {
		if n := w.writes(); n != last {
			last = n
			h.Updated()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runAll runs the loops until ctx ends or one fails, which stops the rest.
func runAll(ctx context.Context, loops []loop) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, len(loops))
	for _, l := range loops {
		wg.Go(func() {
			if err := l.run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("%s: %w", l.name, err)
				cancel()
			}
		})
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// cleanup removes the service and network policy rules (--cleanup).
func cleanup(log *slog.Logger) error {
	var errs []error
	if err := proxy.Cleanup(proxy.IPTables{}); err != nil {
		errs = append(errs, fmt.Errorf("service rules: %w", err))
	}
	if err := netpol.Cleanup(proxy.IPTables{}); err != nil {
		errs = append(errs, fmt.Errorf("network policy rules: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	log.Info("removed the service and network policy rules")
	return nil
}
