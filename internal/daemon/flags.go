package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/leaderelection"
	"github.com/spf13/pflag"
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
func (o *ClientOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file with the apiserver's address and this component's credentials.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the apiserver (overrides the server in the kubeconfig).")
	fs.Float64Var(&o.QPS, "kube-api-qps", o.QPS, "QPS to use while talking with the apiserver.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst to use while talking with the apiserver.")
}

// Validate checks the values of the flags (not the kubeconfig file, which
// Client reads).
func (o *ClientOptions) Validate() error {
	var errs []error
	if math.IsNaN(o.QPS) || math.IsInf(o.QPS, 0) || o.QPS < 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be a number >= 0, got %v", o.QPS))
	}
	if o.Burst < 0 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be >= 0, got %d", o.Burst))
	}
	if o.Master != "" {
		if err := ValidateURL(o.Master); err != nil {
			errs = append(errs, fmt.Errorf("--master: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Client builds the API client for component ("kube-scheduler"), from the
// kubeconfig (--kubeconfig, then $KUBECONFIG), with only --master an
// unauthenticated client to that URL, or with neither inside a pod its
// service account (client.InClusterConfig).
func (o *ClientOptions) Client(component string) (*client.Client, error) {
	cfg, err := o.Config(component)
	if err != nil {
		return nil, err
	}
	return client.New(cfg)
}

// Config is the client configuration Client uses: the kubeconfig's
// server, CA and credentials (or --master alone), with the flags' QPS and
// burst and component's User-Agent.
func (o *ClientOptions) Config(component string) (*client.Config, error) {
	var cfg *client.Config
	noKubeconfig := o.Kubeconfig == "" && os.Getenv(kubeconfig.EnvVar) == ""
	if noKubeconfig && o.Master == "" {
		// In a pod with neither flag: its service account, as client-go's
		// BuildConfigFromFlags("", "") falls back to rest.InClusterConfig.
		if ic, err := client.InClusterConfig(); err == nil {
			cfg = ic
		}
	}
	switch {
	case cfg != nil:
	case noKubeconfig && o.Master != "":
		cfg = &client.Config{Host: o.Master}
	default:
		kc, err := kubeconfig.LoadDefault(o.Kubeconfig)
		if err != nil {
			return nil, o.kubeconfigError(err)
		}
		cfg, err = kc.ClientConfig("")
		if err != nil {
			return nil, o.kubeconfigError(err)
		}
		if o.Master != "" {
			cfg.Host = o.Master
		}
	}
	cfg.QPS = float32(o.QPS)
	cfg.Burst = o.Burst
	cfg.UserAgent = client.UserAgentFor(component)
	return cfg, nil
}

// LeaderElectionClient is a client of the component's own for its lease,
// as kube components keep one ("leader-election" in its user agent): each
// client has its own rate limiter, so a busy work queue at the shipped
// --kube-api-qps cannot delay the renewals until the lease is lost.
func (o *ClientOptions) LeaderElectionClient(component string) (*client.Client, error) {
	return o.Client(component + "/leader-election")
}

// kubeconfigError names the kubeconfig an error is about.
func (o *ClientOptions) kubeconfigError(err error) error {
	if o.Kubeconfig != "" {
		return fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
	}
	return fmt.Errorf("kubeconfig ($%s or ~/%s): %w", kubeconfig.EnvVar, kubeconfig.RecommendedHomeFile, err)
}

// ValidateURL checks an http(s) URL of a server: scheme and host.
func ValidateURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: want an http:// or https:// URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", s)
	}
	return nil
}

// ValidatePort checks a port flag: in [0, 65535] where 0 disables
// serving (allowZero), else in [1, 65535].
func ValidatePort(flagName string, port int, allowZero bool) error {
	min := 1
	if allowZero {
		min = 0
	}
	if port < min || port > 65535 {
		return fmt.Errorf("--%s must be in [%d, 65535], got %d", flagName, min, port)
	}
	return nil
}

// ValidateIP checks a flag that must hold an IP address.
func ValidateIP(flagName, value string) error {
	if net.ParseIP(value) == nil {
		return fmt.Errorf("--%s %q is not an IP address", flagName, value)
	}
	return nil
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
func (o *LeaderElectionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Start a leader election client and gain leadership before doing any work; lets replicated instances run safely.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long non-leaders wait after the last observed renewal before trying to take over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader keeps retrying to renew before it stops leading.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How long candidates wait between tries to acquire or renew.")
	fs.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, "Namespace of the Lease used for leader election.")
	fs.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, "Name of the Lease used for leader election.")
}

// Validate checks the durations as kube's leader election does: lease
// duration > renew deadline > 1.2 x retry period > 0, and a Lease to hold.
func (o *LeaderElectionOptions) Validate() error {
	if !o.LeaderElect {
		return nil
	}
	var errs []error
	if o.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-retry-period must be positive, got %v", o.RetryPeriod))
	}
	if o.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(o.RetryPeriod)) {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%v) must be greater than %v x --leader-elect-retry-period (%v)",
			o.RenewDeadline, leaderelection.JitterFactor, o.RetryPeriod))
	}
	if o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%v) must be greater than --leader-elect-renew-deadline (%v)",
			o.LeaseDuration, o.RenewDeadline))
	}
	if o.LeaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration must be at least 1s (the Lease stores whole seconds), got %v", o.LeaseDuration))
	}
	if o.ResourceNamespace == "" || o.ResourceName == "" {
		errs = append(errs, errors.New("--leader-elect-resource-namespace and --leader-elect-resource-name must not be empty"))
	}
	return errors.Join(errs...)
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
