package hollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
	"github.com/prometheus/client_golang/prometheus"
)

// Options are the hollow-nodes flags.
type Options struct {
	Kubeconfig         string
	Count              int
	NamePrefix         string
	StartIndex         int
	NodeLabels         string
	RegisterWithTaints string
	MaxPods            int
	Capacity           string
	// QPS and Burst are the whole process's budget for the pods' and the
	// events' requests (0: 2 QPS per node, at least 100, and twice that
	// burst); the nodes' heartbeats (registration, Lease, status) go
	// through a client without a rate limit, as kube's kubelet's.
	QPS   float64
	Burst int
	// StartConcurrency and StartQPS bound the start ramp (FleetConfig):
	// at most StartConcurrency nodes between their Run and their
	// registration with synced informers (0: no bound), at most StartQPS
	// nodes beginning that per second (0: no bound).
	StartConcurrency  int
	StartQPS          float64
	HealthAddr        string
	RootDir           string
	PodCIDRBase       string
	NodeIPBase        string
	ClusterDNS        string
	ClusterDomain     string
	DeleteNodesOnExit bool
	// HealthListener, when set, replaces listening on HealthAddr (tests
	// pass one on 127.0.0.1:0). Not a flag.
	HealthListener net.Listener
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{
		Count: 1, NamePrefix: "hollow-node-", MaxPods: 110, Capacity: "cpu=4,memory=16Gi,ephemeral-storage=100Gi",
		StartConcurrency: DefaultStartConcurrency,
		HealthAddr:       "127.0.0.1:10290", PodCIDRBase: "10.128.0.0/10", NodeIPBase: "127.1.0.0", ClusterDomain: "cluster.local",
	}
}

// AddFlags registers the flags, by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	fs := fss.FlagSet("misc")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig whose identity may impersonate (system:masters): each hollow node acts as system:node:NAME in system:nodes through it.")
	fs.Float64Var(&o.QPS, "qps", o.QPS, "QPS of the whole process towards the apiserver for the pods and events, shared by every hollow node (0: 2 per node (--count), at least 100). The nodes' heartbeats (registration, Lease, status: about 0.32 QPS a node) are not rate limited, as the kubelet's.")
	fs.IntVar(&o.Burst, "burst", o.Burst, "Burst of the whole process (0: twice the QPS).")
	fs.IntVar(&o.StartConcurrency, "start-concurrency", o.StartConcurrency, "At most this many nodes in their start phase at once (from start until registered with their informers synced); nodes start in index order as others finish, so a large fleet joins in waves. 0: every node at once.")
	fs.Float64Var(&o.StartQPS, "start-qps", o.StartQPS, "At most this many nodes begin their start phase per second (0: no limit).")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "Directory of the hollow nodes' pod files, one directory per node (empty: a temporary directory removed at exit).")
	fs.BoolVar(&o.DeleteNodesOnExit, "delete-nodes-on-exit", o.DeleteNodesOnExit, "On SIGTERM or SIGINT, delete the hollow nodes' Nodes and Leases after stopping them.")
	fs = fss.FlagSet("nodes")
	fs.IntVar(&o.Count, "count", o.Count, "Number of hollow nodes to run.")
	fs.StringVar(&o.NamePrefix, "name-prefix", o.NamePrefix, "Node names are this prefix followed by the node's index.")
	fs.IntVar(&o.StartIndex, "start-index", o.StartIndex, "Index of the first node (several processes run disjoint ranges).")
	fs.StringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "Labels added to every node (key=value,key2=value2), besides kubernetes.io/hostname and "+LabelHollow+"=true.")
	fs.StringVar(&o.RegisterWithTaints, "register-with-taints", o.RegisterWithTaints, "Taints every node registers with: key=value:Effect,key:Effect.")
	fs.IntVar(&o.MaxPods, "max-pods", o.MaxPods, "Pods capacity of each node.")
	fs.StringVar(&o.Capacity, "capacity", o.Capacity, "Machine of each node: cpu (whole cores), memory and ephemeral-storage.")
	fs.StringVar(&o.NodeIPBase, "node-ip-base", o.NodeIPBase, "Node i's InternalIP is this address plus i+1 (default: loopback addresses, so a dial to a hollow kubelet stays on this machine).")
	fs.StringVar(&o.PodCIDRBase, "pod-cidr-base", o.PodCIDRBase, "Node i's pods take addresses from the i-th /24 of this range until the node has a spec.podCIDR.")
	fs.StringVar(&o.ClusterDNS, "cluster-dns", o.ClusterDNS, "Comma-separated DNS server IPs written into ClusterFirst pods' resolv.conf.")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "The cluster's DNS domain.")
	fss.FlagSet("serving").StringVar(&o.HealthAddr, "health-addr", o.HealthAddr, "Address of /healthz, /readyz (ready once every node is Ready) and /metrics (plain HTTP); empty disables.")
}

// Validate checks every flag; it reads no file.
func (o *Options) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Count < 1 || o.Count > 100000 {
		add("--count must be in [1, 100000], got %d", o.Count)
	}
	if o.StartIndex < 0 {
		add("--start-index must be >= 0, got %d", o.StartIndex)
	}
	last := fmt.Sprintf("%s%d", o.NamePrefix, o.StartIndex+max(o.Count, 1)-1)
	if msgs := naming.IsDNS1123Subdomain(last); len(msgs) > 0 || o.NamePrefix == "" {
		add("--name-prefix %q does not make node names (%s): %s", o.NamePrefix, last, strings.Join(msgs, "; "))
	}
	if labels, err := nodestatus.ParseLabels(o.NodeLabels); err != nil {
		add("--node-labels: %v", err)
	} else {
		for k := range labels {
			if !nodestatus.IsKubeletLabel(k) {
				add("--node-labels: %q is in the kubernetes.io or k8s.io namespace and not a label a kubelet may set", k)
			}
		}
	}
	if _, err := nodestatus.ParseTaints(o.RegisterWithTaints); err != nil {
		add("--register-with-taints: %v", err)
	}
	if o.MaxPods < 1 {
		add("--max-pods must be positive, got %d", o.MaxPods)
	}
	if rl, err := nodestatus.ParseResourceList(o.Capacity); err != nil {
		add("--capacity: %v", err)
	} else if _, ok := rl[api.ResourcePods]; ok {
		add("--capacity: give pods with --max-pods")
	}
	if math.IsNaN(o.QPS) || math.IsInf(o.QPS, 0) || o.QPS < 0 {
		add("--qps must be a number >= 0, got %v", o.QPS)
	}
	if o.Burst < 0 {
		add("--burst must be >= 0, got %d", o.Burst)
	}
	if o.StartConcurrency < 0 {
		add("--start-concurrency must be >= 0, got %d", o.StartConcurrency)
	}
	if math.IsNaN(o.StartQPS) || math.IsInf(o.StartQPS, 0) || o.StartQPS < 0 {
		add("--start-qps must be a number >= 0, got %v", o.StartQPS)
	}
	if o.HealthAddr != "" {
		if _, port, err := net.SplitHostPort(o.HealthAddr); err != nil || port == "" {
			add("--health-addr %q is not host:port", o.HealthAddr)
		}
	}
	if ip := net.ParseIP(o.NodeIPBase); ip == nil {
		add("--node-ip-base %q is not an IP address", o.NodeIPBase)
	}
	if _, _, err := net.ParseCIDR(o.PodCIDRBase); err != nil {
		add("--pod-cidr-base %q is not a CIDR", o.PodCIDRBase)
	} else if _, err := NthSubnet(o.PodCIDRBase, 24, o.StartIndex+max(o.Count, 1)-1); err != nil {
		add("--pod-cidr-base: %v", err)
	}
	for _, ip := range splitList(o.ClusterDNS) {
		if net.ParseIP(ip) == nil {
			add("--cluster-dns: %q is not an IP address", ip)
		}
	}
	if d := strings.TrimSuffix(o.ClusterDomain, "."); d == "" || len(naming.IsDNS1123Subdomain(d)) > 0 {
		add("--cluster-domain %q is not a domain name", o.ClusterDomain)
	}
	return errors.Join(errs...)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NewCommand is the hollow-nodes command line.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "hollow-nodes",
		Long: `hollow-nodes runs --count hollow nodes in one process against an apiserver:
each is the kubelet's node status and pod manager over an in-memory runtime,
so it registers its Node, renews its Lease every 10 s, reports its status and
runs the pods bound to it on paper (Running, with pod IPs, probes passing),
acting as system:node:NAME through impersonation by the --kubeconfig identity.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
	}
}

// Run runs the hollow nodes until ctx ends.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	qps, burst := DefaultQPS(o.Count, o.QPS, o.Burst)
	co := daemon.ClientOptions{Kubeconfig: o.Kubeconfig, QPS: qps, Burst: burst}
	c, err := co.Client("hollow-nodes")
	if err != nil {
		return err
	}
	// The heartbeat client: kube's kubelet builds it without a rate limit
	// and with a timeout of the status update frequency (10 s, under the
	// Lease's 40 s), so pod churn queued on the shared limiter cannot hold
	// a renewal back until the Lease expires.
	hcfg, err := co.Config("hollow-nodes/heartbeat")
	if err != nil {
		return err
	}
	hcfg.QPS, hcfg.Timeout = -1, 10*time.Second
	heartbeat, err := client.New(hcfg)
	if err != nil {
		return err
	}
	startConcurrency := o.StartConcurrency
	if startConcurrency == 0 {
		startConcurrency = -1 // FleetConfig's "no bound"
	}
	labels, _ := nodestatus.ParseLabels(o.NodeLabels)
	taints, _ := nodestatus.ParseTaints(o.RegisterWithTaints)
	capacity, _ := nodestatus.ParseResourceList(o.Capacity)
	var health *daemon.Server
	var healthLn net.Listener
	switch {
	case o.HealthListener != nil:
		health, healthLn = daemon.NewServer(o.HealthListener.Addr().String(), log), o.HealthListener
	case o.HealthAddr != "":
		health = daemon.NewServer(o.HealthAddr, log)
		if healthLn, err = daemon.Listen(o.HealthAddr); err != nil {
			return fmt.Errorf("--health-addr: %w", err)
		}
		defer healthLn.Close()
	}
	root := o.RootDir
	if root == "" {
		if root, err = os.MkdirTemp("", "hollow-nodes-"); err != nil {
			return err
		}
		defer os.RemoveAll(root)
	}
	cfg := FleetConfig{
		Client: c, HeartbeatClient: heartbeat, StartConcurrency: startConcurrency, StartQPS: o.StartQPS, Count: o.Count, StartIndex: o.StartIndex, NamePrefix: o.NamePrefix, RootDir: root,
		NodeIPBase: net.ParseIP(o.NodeIPBase), PodCIDRBase: o.PodCIDRBase, DeleteNodesOnExit: o.DeleteNodesOnExit, Logger: log,
		Template: Config{Labels: labels, Taints: taints, MaxPods: o.MaxPods, Capacity: capacity,
			ClusterDNS: splitList(o.ClusterDNS), ClusterDomain: o.ClusterDomain},
	}
	if err := checkImpersonation(ctx, c, cfg.NodeName(o.StartIndex)); err != nil {
		return err
	}
	fleet, err := NewFleet(cfg)
	if err != nil {
		return err
	}
	var serve func(context.Context) error
	if health != nil {
		health.AddCheck(daemon.Check{Name: "hollow-nodes-ready", Ready: true, Func: func() error {
			if n := fleet.ReadyCount(); n < o.Count {
				return fmt.Errorf("%d of %d hollow nodes Ready", n, o.Count)
			}
			return nil
		}})
		health.Registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hollow_nodes", Help: "Number of hollow nodes this process runs."},
				func() float64 { return float64(o.Count) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hollow_nodes_ready", Help: "Number of hollow nodes registered and Ready."},
				func() float64 { return float64(fleet.ReadyCount()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hollow_running_containers", Help: "Number of containers running on the hollow nodes."},
				func() float64 { return float64(fleet.RunningContainers()) }),
		)
		serve = func(ctx context.Context) error { return health.ServeListener(ctx, healthLn) }
	}
	log.Info("starting hollow nodes", "count", o.Count, "startIndex", o.StartIndex, "prefix", o.NamePrefix,
		"apiserver", c.Host(), "qps", qps, "burst", burst, "startConcurrency", o.StartConcurrency, "startQPS", o.StartQPS, "rootDir", root)
	start := time.Now()
	go reportReady(ctx, fleet, o.Count, start, log)
	return daemon.ServeAndRun(ctx, serve, fleet.Run)
}

// DefaultQPS is the process's QPS and burst for count nodes given the
// --qps and --burst flags (0: the default). A node at rest sends about
// 0.32 requests a second through its heartbeat client (the Lease read and
// renewed every 10 s, the Node read every 10 s and its status written at
// least every minute), which is not limited; the shared budget carries
// the pods' status writes and the events, about 6 requests per pod
// started and 3 per pod deleted. 2 QPS per node (10,000 for 5,000 nodes)
// covers a control plane handing out 1,000 pods a second (the tuned
// scheduler's QPS) with room to spare, so the limiter is not what a scale
// run measures, while still bounding a fleet-wide hot loop far below the
// 50 QPS each of 5,000 real kubelets would have (250,000, no bound at all).
func DefaultQPS(count int, qps float64, burst int) (float64, int) {
	if qps == 0 {
		qps = math.Max(100, 2*float64(count))
	}
	if burst == 0 {
		burst = int(2 * qps)
	}
	return qps, burst
}

// checkImpersonation fails when the --kubeconfig identity may not act as
// the first node: every node's requests would be refused.
func checkImpersonation(ctx context.Context, c *client.Client, node string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	as := c.Impersonating(client.Impersonation{UserName: "system:node:" + node, Groups: []string{"system:nodes"}})
	_, err := client.Resource[api.Node](as).Get(ctx, node)
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return fmt.Errorf("--kubeconfig: its identity cannot act as system:node:%s (it must be allowed to impersonate, as system:masters is): %w", node, err)
	}
	return nil
}

// reportReady logs once every node is Ready, with the time it took.
func reportReady(ctx context.Context, f *Fleet, count int, start time.Time, log *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if f.ReadyCount() == count {
			log.Info("all hollow nodes Ready", "count", count, "after", time.Since(start).Round(time.Millisecond))
			return
		}
	}
}
