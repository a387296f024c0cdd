package daemon

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/leaderelection"
)

// ClientOptions are the flags that say how a daemon reaches the apiserver.
type ClientOptions struct {
	Kubeconfig string
	// Master overrides the kubeconfig's server URL (--master).
	Master string
	QPS    float64
	Burst  int
}

// AddFlags registers --kubeconfig, --master, --kube-api-qps and --kube-api-burst.
func (o *ClientOptions) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file with the apiserver's address and this component's credentials.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the apiserver (overrides the server in the kubeconfig).")
	fs.Float64Var(&o.QPS, "kube-api-qps", o.QPS, "QPS to use while talking with the apiserver.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst to use while talking with the apiserver.")
}

// Client builds the API client for component ("kube-scheduler"), from the
// kubeconfig (--kubeconfig, then $KUBECONFIG) or, with only --master, an
// unauthenticated client to that URL.
func (o *ClientOptions) Client(component string) (*client.Client, error) {
	var cfg *client.Config
	if o.Kubeconfig == "" && os.Getenv(kubeconfig.EnvVar) == "" && o.Master != "" {
		cfg = &client.Config{Host: o.Master}
	} else {
		kc, err := kubeconfig.LoadDefault(o.Kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg, err = kc.ClientConfig("")
		if err != nil {
			return nil, err
		}
		if o.Master != "" {
			cfg.Host = o.Master
		}
	}
	cfg.QPS = float32(o.QPS)
	cfg.Burst = o.Burst
	cfg.UserAgent = client.UserAgentFor(component)
	return client.New(cfg)
}

// LeaderElectionOptions are kube's --leader-elect-* flags.
type LeaderElectionOptions struct {
	LeaderElect       bool
	LeaseDuration     time.Duration
	RenewDeadline     time.Duration
	RetryPeriod       time.Duration
	ResourceNamespace string
	ResourceName      string
}

// DefaultLeaderElection returns kube's defaults (on; 15 s / 10 s / 2 s; Lease
// kube-system/NAME).
func DefaultLeaderElection(name string) LeaderElectionOptions {
	return LeaderElectionOptions{
		LeaderElect:       true,
		LeaseDuration:     leaderelection.DefaultLeaseDuration,
		RenewDeadline:     leaderelection.DefaultRenewDeadline,
		RetryPeriod:       leaderelection.DefaultRetryPeriod,
		ResourceNamespace: "kube-system",
		ResourceName:      name,
	}
}

// AddFlags registers the --leader-elect* flags.
func (o *LeaderElectionOptions) AddFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Start a leader election client and gain leadership before doing any work; lets replicated instances run safely.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long non-leaders wait after the last observed renewal before trying to take over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader keeps retrying to renew before it stops leading.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How long candidates wait between tries to acquire or renew.")
	fs.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, "Namespace of the Lease used for leader election.")
	fs.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, "Name of the Lease used for leader election.")
}

// Run calls run with a context that ends when leadership is lost (or ctx
// ends). Without --leader-elect it calls run(ctx) directly. Losing the lease
// is an error (the process should exit and restart, as kube components do).
func (o *LeaderElectionOptions) Run(ctx context.Context, c *client.Client, identity string, run func(context.Context) error) error {
	if !o.LeaderElect {
		return run(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	err := leaderelection.Run(ctx, leaderelection.Config{
		Client:          c,
		Namespace:       o.ResourceNamespace,
		Name:            o.ResourceName,
		Identity:        identity,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				done <- run(ctx)
				cancel()
			},
			OnStoppedLeading: func() {},
		},
	})
	select {
	case runErr := <-done:
		if runErr != nil {
			return runErr
		}
	default:
	}
	return err
}

// Identity is the leader election identity kube components use: host name
// plus a random suffix.
func Identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return host + "_" + uuid.NewString()
}

// SignalContext ends on SIGINT or SIGTERM.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
