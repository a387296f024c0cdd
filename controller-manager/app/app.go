package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/secureserving"
	"github.com/minik8s/minik8s/internal/workqueue"
)

// Options are the controller-manager's flags.
type Options struct {
	Client         daemon.ClientOptions
	LeaderElection daemon.LeaderElectionOptions
	Controller     controller.Options
	// Controllers is kube's --controllers list: "*" for the defaults,
	// "name" to enable, "-name" to disable.
	Controllers []string
	// Serving serves /healthz, /livez, /readyz and /metrics over HTTPS
	// on --secure-port 10257, authenticated and authorized by the
	// apiserver, as kube-controller-manager does (Serving.Listener, when
	// set, replaces the port: tests pass one on 127.0.0.1:0).
	Serving secureserving.Options
	// MinResyncPeriod is the informers' resync period.
	MinResyncPeriod time.Duration
}

// DefaultOptions returns kube-controller-manager's defaults.
func DefaultOptions() Options {
	return Options{
		Client:          daemon.ClientOptions{QPS: 50, Burst: 100},
		LeaderElection:  daemon.DefaultLeaderElection("kube-controller-manager"),
		Controller:      controller.DefaultOptions(),
		Controllers:     []string{"*"},
		Serving:         secureserving.DefaultOptions(10257, "kube-controller-manager"),
		MinResyncPeriod: 12 * time.Hour,
	}
}

// AddFlags registers every flag, in kube-controller-manager's --help
// sections.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	fs := fss.FlagSet("generic")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables it. All: "+strings.Join(Names(), ", ")+".")
	fs.DurationVar(&o.MinResyncPeriod, "min-resync-period", o.MinResyncPeriod, "Resync period of the shared informers.")
	o.Serving.AddFlags(fss)
	o.Controller.AddFlags(fss.FlagSet)
	o.LeaderElection.AddFlags(fss.FlagSet("leader election"))
	o.Client.AddFlags(fss.FlagSet("misc"))
}

// Validate checks every flag's value; it reads no file.
func (o *Options) Validate() error {
	var errs []error
	if _, err := o.Enabled(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Serving.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.MinResyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--min-resync-period must be positive, got %v", o.MinResyncPeriod))
	}
	for _, v := range []func() error{o.Client.Validate, o.LeaderElection.Validate, o.Controller.Validate} {
		if err := v(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// NewCommand is the controller-manager's command line: flags, validation, run.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "controller-manager",
		Long: `The controller-manager runs the reconcile loops (replicaset, deployment, node
lifecycle and IPAM, garbage collector, namespace, endpoints, job, service
accounts, root CA publisher...) as API clients, while it holds the
kube-controller-manager lease.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
	}
}

// Enabled resolves --controllers against the known controllers.
func (o *Options) Enabled() ([]string, error) {
	known := map[string]bool{}
	for _, n := range Names() {
		known[n] = true
	}
	on := map[string]bool{}
	star := false
	for _, item := range o.Controllers {
		item = strings.TrimSpace(item)
		switch {
		case item == "*":
			star = true
		case strings.HasPrefix(item, "-"):
			if !known[item[1:]] {
				return nil, fmt.Errorf("--controllers: unknown controller %q", item[1:])
			}
			on[item[1:]] = false
		case item != "":
			if !known[item] {
				return nil, fmt.Errorf("--controllers: unknown controller %q", item)
			}
			on[item] = true
		}
	}
	var out []string
	for _, n := range Names() {
		enabled, set := on[n]
		if (set && enabled) || (!set && star) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Run runs the enabled controllers while this instance holds the
// kube-controller-manager lease, until ctx ends.
func Run(ctx context.Context, opts Options, log *slog.Logger) error {
	enabled, err := opts.Enabled()
	if err != nil {
		return err
	}
	cfg, err := opts.Client.Config("kube-controller-manager")
	if err != nil {
		return err
	}
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	// Events and the lease have clients of their own, as in
	// kube-controller-manager: busy controllers at the shipped QPS must not
	// starve either.
	ec, err := opts.Client.Client("kube-controller-manager")
	if err != nil {
		return err
	}
	lec, err := opts.Client.LeaderElectionClient("kube-controller-manager")
	if err != nil {
		return err
	}
	rootCA, err := rootCA(opts)
	if err != nil {
		return err
	}
	srv := daemon.NewServer("", log)
	if err := workqueue.RegisterMetrics(srv.Registry); err != nil {
		return err
	}
	secure, err := secureserving.New(opts.Serving, srv.Handler(), log)
	if err != nil {
		return err
	}
	// The server stops with the controllers: when the lease is lost the
	// process exits (its supervisor restarts it as a standby).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() { srvErr <- secure.Serve(ctx) }()

	host, _ := os.Hostname()
	identity := daemon.Identity()
	runErr := opts.LeaderElection.Run(ctx, lec, identity, func(ctx context.Context) error {
		log.Info("starting controllers", "controllers", enabled, "identity", identity)
		b := events.NewBroadcaster(ec, events.Options{Component: "controller-manager", Host: host, Logger: log})
		go b.Run(ctx)
		factory := informer.NewFactory(c, informer.FactoryOptions{Resync: opts.MinResyncPeriod, Logger: log, Transform: informer.StripManagedFields})
		cctx := &controller.Context{
			Client:       c,
			ClientConfig: cfg,
			Factory:      factory,
			Events:       b,
			Logger:       log,
			Metrics:      srv.Registry,
			Options:      opts.Controller,
			RootCA:       rootCA,
		}
		return runControllers(ctx, cctx, enabled, factory, log)
	})
	cancel()
	if err := <-srvErr; err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// rootCA is the CA bundle published to pods: --root-ca-file, else the CA
// data of the controller-manager's kubeconfig (kube's fallback too).
func rootCA(opts Options) ([]byte, error) {
	if f := opts.Controller.RootCAFile; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--root-ca-file: %w", err)
		}
		if !bytes.Contains(b, []byte("-----BEGIN CERTIFICATE-----")) {
			return nil, fmt.Errorf("--root-ca-file %s: no PEM certificate in it", f)
		}
		return b, nil
	}
	cfg, err := opts.Client.Config("kube-controller-manager")
	if err != nil {
		return nil, err
	}
	return cfg.CAData, nil
}

func runControllers(ctx context.Context, cctx *controller.Context, enabled []string, factory *informer.Factory, log *slog.Logger) error {
	type started struct {
		name string
		c    controller.Interface
	}
	var ctrls []started
	for _, name := range enabled {
		cc := *cctx
		cc.Logger = log.With("controller", name)
		ctrl, err := constructors[name](&cc)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		ctrls = append(ctrls, started{name, ctrl})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	factory.Start(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, len(ctrls))
	for _, s := range ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.c.Run(ctx, cctx.Options.Workers(s.name)); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("controller %s: %w", s.name, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	factory.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// Names lists every controller this binary knows, sorted.
func Names() []string {
	var out []string
	for n := range constructors {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
