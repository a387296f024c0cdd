package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/secureserving"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/queue"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

// Component is the name the scheduler reports as (events, user agent).
const Component = "default-scheduler"

// Options are kube-scheduler's flags.
type Options struct {
	Client         daemon.ClientOptions
	LeaderElection daemon.LeaderElectionOptions
	// Serving serves /healthz, /livez, /readyz and /metrics over HTTPS
	// on --secure-port 10259, authenticated and authorized by the
	// apiserver, as kube-scheduler does.
	Serving secureserving.Options
	// PercentageOfNodesToScore: 0 is kube's adaptive default.
	PercentageOfNodesToScore int
	PodInitialBackoff        time.Duration
	PodMaxBackoff            time.Duration
	// Parallelism is the number of goroutines filtering and scoring.
	Parallelism int
}

// DefaultOptions returns kube-scheduler's defaults.
func DefaultOptions() Options {
	return Options{
		Client:            daemon.ClientOptions{QPS: 50, Burst: 100},
		LeaderElection:    daemon.DefaultLeaderElection("kube-scheduler"),
		Serving:           secureserving.DefaultOptions(10259, "kube-scheduler"),
		PodInitialBackoff: queue.DefaultPodInitialBackoff,
		PodMaxBackoff:     queue.DefaultPodMaxBackoff,
		Parallelism:       framework.DefaultParallelism,
	}
}

// AddFlags registers every flag, by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	o.Client.AddFlags(fss.FlagSet("misc"))
	fs := fss.FlagSet("scheduling")
	fs.IntVar(&o.PercentageOfNodesToScore, "percentage-of-nodes-to-score", o.PercentageOfNodesToScore, "Percentage of all nodes to find feasible before scoring stops looking (at least 100 nodes); 0 means adaptive: 50% minus 1% per 125 nodes, at least 5%.")
	fs.DurationVar(&o.PodInitialBackoff, "pod-initial-backoff", o.PodInitialBackoff, "Initial back-off of an unschedulable pod; doubled per attempt.")
	fs.DurationVar(&o.PodMaxBackoff, "pod-max-backoff", o.PodMaxBackoff, "Maximum back-off of an unschedulable pod.")
	fs.IntVar(&o.Parallelism, "parallelism", o.Parallelism, "Goroutines used to filter and score nodes.")
	o.Serving.AddFlags(fss)
	o.LeaderElection.AddFlags(fss.FlagSet("leader election"))
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.PercentageOfNodesToScore < 0 || o.PercentageOfNodesToScore > 100 {
		errs = append(errs, fmt.Errorf("--percentage-of-nodes-to-score must be in [0, 100], got %d", o.PercentageOfNodesToScore))
	}
	if o.PodInitialBackoff <= 0 || o.PodMaxBackoff < o.PodInitialBackoff {
		errs = append(errs, fmt.Errorf("--pod-initial-backoff (%v) must be positive and at most --pod-max-backoff (%v)", o.PodInitialBackoff, o.PodMaxBackoff))
	}
	if o.Parallelism <= 0 {
		errs = append(errs, fmt.Errorf("--parallelism must be positive, got %d", o.Parallelism))
	}
	if err := o.Serving.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Client.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.LeaderElection.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// NewCommand is the scheduler's command line: flags, --config
// (KubeSchedulerConfiguration), validation, run.
func NewCommand() daemon.Command { return newCommand(Run) }

func newCommand(run func(context.Context, Options, *slog.Logger) error) daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "scheduler",
		Long: `The scheduler watches pending pods and the nodes, picks a node for each pod
(filter, then score) and records the choice with POST pods/NAME/binding,
while it holds the kube-scheduler lease.`,
		Flags:    opts.AddFlags,
		Config:   ConfigFile,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return run(ctx, opts, log) },
	}
}

// App is one scheduler process: its endpoints, their secure server and
// its scheduler.
type App struct {
	Options Options
	// Server holds the health checks, the metrics registry and the
	// endpoints' routes; Secure serves them.
	Server    *daemon.Server
	Secure    *secureserving.Server
	Scheduler *scheduling.Scheduler
	log       *slog.Logger
	run       func(ctx context.Context) error
}

// New builds the daemon: client, metrics server and scheduler.
func New(opts Options, log *slog.Logger) (*App, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	c, err := opts.Client.Client("scheduler")
	if err != nil {
		return nil, err
	}
	// Events and the lease have clients of their own, as in kube-scheduler:
	// a burst of bindings at the shipped QPS must not starve either.
	ec, err := opts.Client.Client("scheduler")
	if err != nil {
		return nil, err
	}
	lec, err := opts.Client.LeaderElectionClient("scheduler")
	if err != nil {
		return nil, err
	}
	srv := daemon.NewServer("", log)
	secure, err := secureserving.New(opts.Serving, srv.Handler(), log)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	b := events.NewBroadcaster(ec, events.Options{Component: Component, Host: host, Logger: log})
	s, err := scheduling.New(scheduling.Config{
		Client:                   c,
		Recorder:                 b.Recorder(),
		Logger:                   log,
		Registry:                 srv.Registry,
		PercentageOfNodesToScore: int32(opts.PercentageOfNodesToScore),
		PodInitialBackoff:        opts.PodInitialBackoff,
		PodMaxBackoff:            opts.PodMaxBackoff,
		Parallelism:              opts.Parallelism,
	})
	if err != nil {
		return nil, err
	}
	srv.AddCheck(daemon.Check{Name: "sched-handler-sync", Ready: true, Func: func() error {
		if !s.HasSynced() {
			return errors.New("waiting for the pod and node informers to sync")
		}
		return nil
	}})
	a := &App{Options: opts, Server: srv, Secure: secure, Scheduler: s, log: log}
	identity := daemon.Identity()
	a.run = func(ctx context.Context) error {
		// Informers start before the election, as in kube-scheduler, so a
		// standby takes over with warm caches. They stop (cancel runs
		// first) before Run returns, also when the lease is lost.
		ctx, cancel := context.WithCancel(ctx)
		s.StartInformers(ctx)
		defer s.WaitInformers()
		defer cancel()
		go func() {
			if s.WaitForCacheSync(ctx) {
				log.Info("informers synced", "nodes", s.Cache.NodeCount())
			}
		}()
		return opts.LeaderElection.Run(ctx, lec, identity, func(ctx context.Context) error {
			log.Info("leading; starting to schedule", "identity", identity)
			go b.Run(ctx)
			return s.Run(ctx)
		})
	}
	return a, nil
}

// Run serves health and metrics and schedules while leading, until ctx
// ends (SIGTERM) or leadership is lost.
func (a *App) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() { srvErr <- a.Secure.Serve(ctx) }()
	runErr := a.run(ctx)
	cancel()
	if err := <-srvErr; err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// Run builds and runs the daemon.
func Run(ctx context.Context, opts Options, log *slog.Logger) error {
	a, err := New(opts, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}
