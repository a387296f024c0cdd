package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/secureserving"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
	"github.com/minik8s/minik8s/kubelet/eviction"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/server"
	"github.com/minik8s/minik8s/kubelet/staticpods"
	"github.com/minik8s/minik8s/kubelet/stats"
)

// Options are the kubelet's flags, named as the Kubernetes kubelet's where
// it has them.
type Options struct {
	Kubeconfig string
	KubeAPIQPS float64
	KubeBurst  int
	Bootstrap  bootstrap.Options
	Node       nodestatus.Options
	Server     server.Options

	ContainerdAddress   string
	ContainerdNamespace string
	// ContainerRuntimeEndpoint, when set, selects the CRI driver
	// (kubelet/runtime/cri) on that socket (unix:///PATH) instead of the
	// native containerd driver; ImageServiceEndpoint is its image
	// service's (empty: the runtime's).
	ContainerRuntimeEndpoint string
	ImageServiceEndpoint     string
	PodInfraContainerImage   string
	InsecureRegistries       stringList
	RegistryConfigPath       string
	RootDir                  string
	CgroupRoot               string
	PodLogsDir               string
	CNIConfDir               string
	CNIBinDir                string
	CNIBridge                string
	// NonMasqueradeCIDR is the pods' range across the cluster: the
	// bridge does not masquerade per pod, one node rule masquerades only
	// pod traffic leaving this range, so pods on different nodes see
	// each other's own addresses. Empty: the bridge masquerades
	// everything off the node's pod CIDR.
	NonMasqueradeCIDR  string
	ClusterDNS         string
	ClusterDomain      string
	ResolvConf         string
	HealthzBindAddress string
	HealthzPort        int
	SyncFrequency      time.Duration
	// Restart back-off bounds (kube: 10 s doubling to 5 min; not flags in
	// kube, settable here for tests).
	BackoffInitial, BackoffMax time.Duration

	// StaticPods are the static pod sources: --pod-manifest-path,
	// --manifest-url and their periods.
	StaticPods StaticPodOptions

	// RuntimeOwner, when set, labels the CRI driver's sandboxes and
	// containers and limits it to them, for kubelets (tests) sharing one
	// runtime. Not a flag.
	RuntimeOwner string

	// ServerListener and HealthzListener, when set, replace binding the
	// kubelet server's and the healthz server's addresses (tests pass
	// listeners on 127.0.0.1:0). Not flags.
	ServerListener, HealthzListener net.Listener
}

// DefaultOptions are the kubelet's defaults.
func DefaultOptions() Options {
	return Options{
		KubeAPIQPS: 50, KubeBurst: 100,
		Node: nodestatus.DefaultOptions(), Server: server.DefaultOptions(),
		ContainerdAddress: "/run/containerd/containerd.sock", ContainerdNamespace: "minik8s",
		RootDir: "/var/lib/kubelet", PodLogsDir: server.DefaultPodLogsDir,
		CNIConfDir: "/etc/cni/net.d", CNIBinDir: "/usr/lib/cni,/opt/cni/bin", CNIBridge: "cni0", NonMasqueradeCIDR: "10.244.0.0/16",
		ClusterDomain: "cluster.local", ResolvConf: "/etc/resolv.conf",
		HealthzBindAddress: "127.0.0.1", HealthzPort: 10248, SyncFrequency: 10 * time.Second,
		BackoffInitial: 10 * time.Second, BackoffMax: 300 * time.Second,
		StaticPods: StaticPodOptions{FileFrequency: staticpods.DefaultPeriod, HTTPFrequency: staticpods.DefaultPeriod},
	}
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, splitList(v)...); return nil }
func (s *stringList) Type() string       { return "strings" }

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// AddFlags registers the flags, by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	fs := fss.FlagSet("misc")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to the kubeconfig with the apiserver's address and the kubelet's credentials (written by the bootstrap join).")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while talking with the apiserver.")
	fs.IntVar(&o.KubeBurst, "kube-api-burst", o.KubeBurst, "Burst to use while talking with the apiserver.")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "Directory for the kubelet's files (volumes, pod files, certificates).")
	o.Bootstrap.AddFlags(fss.FlagSet("bootstrap"))
	o.Node.AddFlags(fss.FlagSet("node"))
	fs = fss.FlagSet("serving")
	o.Server.AddFlags(fs)
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", o.HealthzBindAddress, "Address of the healthz server.")
	fs.IntVar(&o.HealthzPort, "healthz-port", o.HealthzPort, "Port of the healthz server (0 disables).")
	fs = fss.FlagSet("container runtime")
	fs.StringVar(&o.ContainerdAddress, "containerd-address", o.ContainerdAddress, "containerd's gRPC socket, for the native containerd driver (without --container-runtime-endpoint).")
	fs.StringVar(&o.ContainerRuntimeEndpoint, "container-runtime-endpoint", o.ContainerRuntimeEndpoint, "The endpoint of a CRI v1 container runtime, unix:///PATH (containerd's CRI plugin: unix:///run/containerd/containerd.sock; CRI-O: unix:///var/run/crio/crio.sock). Set, the kubelet runs pods through CRI and the runtime attaches them to the pod network with the CNI conflist the kubelet writes to --cni-conf-dir; unset, it drives containerd natively at --containerd-address.")
	fs.StringVar(&o.ImageServiceEndpoint, "image-service-endpoint", o.ImageServiceEndpoint, "The endpoint of the CRI image service, unix:///PATH; empty: --container-runtime-endpoint.")
	fs.StringVar(&o.ContainerdNamespace, "containerd-namespace", o.ContainerdNamespace, "containerd namespace of the kubelet's images and containers.")
	fs.StringVar(&o.PodInfraContainerImage, "pod-infra-container-image", o.PodInfraContainerImage, "Image of a pause container owning each pod's namespaces (its network, IPC and UTS); empty: each pod gets a network namespace without a pause container. Pulled when containerd lacks it (on a node without a registry, load it into --containerd-namespace first); it must provide sleep, the sandbox's command.")
	fs.Var(&o.InsecureRegistries, "insecure-registry", "Registry host[:port] reached over plain HTTP (repeatable, or comma-separated).")
	fs.StringVar(&o.RegistryConfigPath, "registry-config-path", o.RegistryConfigPath, "Hosts directory in containerd's layout (HOST/hosts.toml with the registry's mirrors, TLS and plain-HTTP settings), as containerd's config_path, usually /etc/containerd/certs.d; empty: registries are reached directly.")
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "Root cgroup (cgroupfs path) of the pods' cgroups; empty: /minik8s.")
	fs.StringVar(&o.PodLogsDir, "pod-logs-dir", o.PodLogsDir, "Directory of the container log files.")
	fs = fss.FlagSet("pods")
	fs.DurationVar(&o.SyncFrequency, "sync-frequency", o.SyncFrequency, "How often every pod is re-synced.")
	o.StaticPods.AddFlags(fs)
	fs.DurationVar(&o.BackoffInitial, "restart-backoff-initial", o.BackoffInitial, "First delay of the container restart and image pull back-off.")
	fs.DurationVar(&o.BackoffMax, "restart-backoff-max", o.BackoffMax, "Longest delay of the container restart and image pull back-off.")
	fs = fss.FlagSet("networking")
	fs.StringVar(&o.CNIConfDir, "cni-conf-dir", o.CNIConfDir, "Directory the kubelet writes its CNI conflist to.")
	fs.StringVar(&o.CNIBinDir, "cni-bin-dir", o.CNIBinDir, "Comma-separated directories of the CNI plugins.")
	fs.StringVar(&o.CNIBridge, "cni-bridge", o.CNIBridge, "Name of the pods' bridge.")
	fs.StringVar(&o.ClusterDNS, "cluster-dns", o.ClusterDNS, "Comma-separated DNS server IPs for pods with dnsPolicy ClusterFirst.")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "The cluster's DNS domain.")
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "Resolver configuration used by pods with dnsPolicy Default.")
	fs.StringVar(&o.NonMasqueradeCIDR, "non-masquerade-cidr", o.NonMasqueradeCIDR, "Traffic from pods to IPs outside this range is masqueraded (one node rule; none between pods, so pods on other nodes see their own addresses): the pods' range across the cluster. Empty: the bridge masquerades everything off the node's own pod CIDR.")
}

// Validate checks every flag's value, format and combination; it reads no
// file (Run loads what the flags name before it does anything else).
func (o *Options) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if math.IsNaN(o.KubeAPIQPS) || math.IsInf(o.KubeAPIQPS, 0) || o.KubeAPIQPS < 0 {
		add(fmt.Errorf("--kube-api-qps must be a number >= 0, got %v", o.KubeAPIQPS))
	}
	if o.KubeBurst < 0 {
		add(fmt.Errorf("--kube-api-burst must be >= 0, got %d", o.KubeBurst))
	}
	add(o.StaticPods.Validate())
	add(o.Bootstrap.Validate())
	add(o.Node.Validate())
	add(o.Server.Validate())
	if o.NonMasqueradeCIDR != "" {
		if _, _, err := net.ParseCIDR(o.NonMasqueradeCIDR); err != nil {
			add(fmt.Errorf("--non-masquerade-cidr %q is not a CIDR", o.NonMasqueradeCIDR))
		}
	}
	for _, f := range []struct{ flag, v string }{
		{"containerd-address", o.ContainerdAddress}, {"containerd-namespace", o.ContainerdNamespace}, {"root-dir", o.RootDir},
		{"pod-logs-dir", o.PodLogsDir}, {"cni-conf-dir", o.CNIConfDir}, {"cni-bin-dir", o.CNIBinDir},
	} {
		if strings.TrimSpace(f.v) == "" {
			add(fmt.Errorf("--%s must not be empty", f.flag))
		}
	}
	for _, f := range []struct{ flag, v string }{{"container-runtime-endpoint", o.ContainerRuntimeEndpoint}, {"image-service-endpoint", o.ImageServiceEndpoint}} {
		if f.v != "" && !strings.HasPrefix(f.v, "unix:///") && !strings.HasPrefix(f.v, "/") {
			add(fmt.Errorf("--%s %q: want unix:///PATH", f.flag, f.v))
		}
	}
	if o.ImageServiceEndpoint != "" && o.ContainerRuntimeEndpoint == "" {
		add(errors.New("--image-service-endpoint needs --container-runtime-endpoint"))
	}
	if o.PodInfraContainerImage != "" {
		if _, err := runtime.NormalizeImage(o.PodInfraContainerImage); err != nil {
			add(fmt.Errorf("--pod-infra-container-image: %w", err))
		}
	}
	if o.CgroupRoot != "" && !strings.HasPrefix(o.CgroupRoot, "/") {
		add(fmt.Errorf("--cgroup-root %q must be an absolute cgroup path", o.CgroupRoot))
	}
	// A Linux interface name: at most 15 bytes, no '/', ':' or spaces.
	if b := o.CNIBridge; b == "" || len(b) > 15 || strings.ContainsAny(b, "/: \t\n") {
		add(fmt.Errorf("--cni-bridge %q is not an interface name (1 to 15 characters, no '/', ':' or spaces)", b))
	}
	for _, ip := range splitList(o.ClusterDNS) {
		if net.ParseIP(ip) == nil {
			add(fmt.Errorf("--cluster-dns: %q is not an IP address", ip))
		}
	}
	if o.ClusterDomain != "" {
		if msgs := naming.IsDNS1123Subdomain(strings.TrimSuffix(o.ClusterDomain, ".")); len(msgs) > 0 {
			add(fmt.Errorf("--cluster-domain %q: %s", o.ClusterDomain, strings.Join(msgs, "; ")))
		}
	}
	add(daemon.ValidateIP("healthz-bind-address", o.HealthzBindAddress))
	add(daemon.ValidatePort("healthz-port", o.HealthzPort, true))
	if o.SyncFrequency <= 0 {
		add(fmt.Errorf("--sync-frequency must be positive, got %v", o.SyncFrequency))
	}
	if o.BackoffInitial <= 0 || o.BackoffMax < o.BackoffInitial {
		add(fmt.Errorf("--restart-backoff-initial (%v) must be positive and at most --restart-backoff-max (%v)", o.BackoffInitial, o.BackoffMax))
	}
	return errors.Join(errs...)
}

// NewCommand is the kubelet's command line: flags, --config
// (KubeletConfiguration), validation, run.
func NewCommand() daemon.Command { return newCommand(Run) }

func newCommand(run func(context.Context, Options, *slog.Logger) error) daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "kubelet",
		Long: `The kubelet is the node agent: it registers its Node and renews its Lease, runs
the pods bound to it in containerd with CNI networking, reports their status,
and serves their logs and exec over HTTPS.`,
		Flags:    opts.AddFlags,
		Config:   ConfigFile,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return run(ctx, opts, log) },
	}
}

// Run runs the kubelet until ctx ends.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	nodeName, err := nodestatus.NodeName(o.Node.HostnameOverride)
	if err != nil {
		return err
	}
	log = log.With("node", nodeName)
	nodeCfg, err := o.Node.Config()
	if err != nil {
		return err
	}
	join, err := bootstrap.LoadOrJoin(ctx, bootstrap.Config{
		Kubeconfig: o.Kubeconfig, BootstrapKubeconfig: o.Bootstrap.BootstrapKubeconfig, Server: o.Bootstrap.Server,
		Token: o.Bootstrap.Token, CACertHash: o.Bootstrap.CACertHash, RootDir: o.RootDir, NodeName: nodeName, Logger: log,
	})
	if err != nil {
		return fmt.Errorf("kubelet credentials: %w", err)
	}
	// The files the server flags name, before anything starts.
	cert, haveCert, err := o.Server.Certificate()
	if err != nil {
		return err
	}
	cas, err := o.Server.ClientCAs(join.CAData)
	if err != nil {
		return err
	}
	ccfg := *join.Client
	ccfg.QPS, ccfg.Burst = float32(o.KubeAPIQPS), o.KubeBurst
	ccfg.UserAgent = client.UserAgentFor("kubelet")
	c, err := client.New(&ccfg)
	if err != nil {
		return err
	}

	rt, err := newRuntime(ctx, o, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	nm, err := network.New(network.Config{ConfDir: o.CNIConfDir, BinDirs: splitList(o.CNIBinDir),
		StateDir: filepath.Join(o.RootDir, "cni"), BridgeName: o.CNIBridge, ClusterCIDR: o.NonMasqueradeCIDR, Logger: log})
	if err != nil {
		return err
	}

	bc := events.NewBroadcaster(c, events.Options{Component: "kubelet", Host: nodeName, Logger: log})
	go bc.Run(ctx)
	rec := bc.Recorder()

	// The healthz port answers health alone; the kubelet's metrics are on
	// its HTTPS port, authorized as nodes/metrics (kube's layout).
	health := daemon.NewHealthServer("", log)
	if o.HealthzPort > 0 {
		health.Addr = net.JoinHostPort(o.HealthzBindAddress, strconv.Itoa(o.HealthzPort))
	}
	health.AddCheck(daemon.Check{Name: rt.checkName, Func: func() error {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		return rt.Status(sctx)
	}})

	nodeCfg.Client, nodeCfg.RootDir, nodeCfg.Recorder, nodeCfg.Logger = c, o.RootDir, rec, log
	nodeCfg.KubeletPort = o.Server.Port
	nodeCfg.RuntimeVersion = func() (string, error) {
		vctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		name, v, err := rt.Version(vctx)
		if err != nil {
			return "", err
		}
		return name + "://" + v, nil
	}
	nodeCfg.RuntimeHealthy = func() error {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := rt.Status(sctx); err != nil {
			return fmt.Errorf("container runtime is down: %w", err)
		}
		if err := nm.Ready(); err != nil {
			return fmt.Errorf("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:%w", err)
		}
		if rt.networkStatus != nil {
			if err := rt.networkStatus(sctx); err != nil {
				return fmt.Errorf("container runtime network not ready: NetworkReady=false %w", err)
			}
		}
		return nil
	}
	ns, err := nodestatus.New(nodeCfg)
	if err != nil {
		return err
	}

	mgr := pods.New(c, rt.Runtime, nm, rec, pods.Options{
		NodeName: nodeName, NodeIP: ipString(ns.NodeIP()), RootDir: o.RootDir, LogsDir: o.PodLogsDir,
		ClusterDNS: splitList(o.ClusterDNS), ClusterDomain: o.ClusterDomain, ResolvConf: o.ResolvConf,
		ResyncPeriod: o.SyncFrequency, BackoffInitial: o.BackoffInitial, BackoffMax: o.BackoffMax,
		Logger: log, Registry: health.Registry,
	})
	rt.SetOnExit(mgr.OnContainerExit)
	staticPods := staticPodsRunner(o.StaticPods, nodeName, mgr, rec, log)

	if !haveCert {
		var ips []net.IP
		if ip := ns.NodeIP(); ip != nil {
			ips = append(ips, ip)
		}
		if cert, err = bootstrap.EnsureServingCert(o.RootDir, nodeName, ips); err != nil {
			return fmt.Errorf("serving certificate: %w", err)
		}
	}
	sp, err := stats.New(stats.Config{NodeName: nodeName, CgroupParent: o.CgroupRoot, Containers: RuntimeContainers{rt.Runtime}, Logger: log})
	if err != nil {
		return err
	}
	var serving *bootstrap.ServingManager
	if o.Server.RotateServerCertificates {
		serving, err = bootstrap.NewServingManager(bootstrap.ServingConfig{Client: c, NodeName: nodeName, RootDir: o.RootDir,
			WaitForNode: ns.WaitForNode, Fallback: cert, Logger: log.With("certificate", "serving")})
		if err != nil {
			return err
		}
	}
	srvCfg := server.Config{Addr: o.Server.Addr(), Certificate: cert, ClientCAs: cas, PodLogsDir: o.PodLogsDir,
		Pods: mgr, Exec: Executor{mgr}, Attach: Executor{mgr}, PortForward: Executor{mgr}, Stats: sp, Metrics: health.MetricsHandler(),
		Authorizer: &SubjectAccessReviews{Client: c, NodeName: nodeName}, Logger: log}
	if o.Server.AuthenticationTokenWebhook {
		srvCfg.Tokens = &TokenReviews{Reviewer: &secureserving.TokenReviewer{Client: c, TTL: o.Server.TokenWebhookCacheTTL}}
	}
	if serving != nil {
		srvCfg.GetCertificate = serving.GetCertificate
	}
	srv, err := server.New(srvCfg)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 6)
	run := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		})
	}
	run("node status", ns.Run)
	run("pod manager", mgr.Run)
	if staticPods != nil {
		run("static pod source", staticPods)
	}
	run("eviction manager", eviction.New(mgr, rec, eviction.Options{Logger: log}).Run)
	if serving != nil {
		run("serving certificate", serving.Run)
	}
	run("kubelet server", func(ctx context.Context) error {
		if o.ServerListener != nil {
			return srv.Serve(ctx, o.ServerListener)
		}
		return srv.Run(ctx)
	})
	switch {
	case o.HealthzListener != nil:
		run("healthz server", func(ctx context.Context) error { return health.ServeListener(ctx, o.HealthzListener) })
	case health.Addr != "":
		run("healthz server", health.Serve)
	}
	if o.ContainerRuntimeEndpoint != "" {
		log.Info("kubelet started", "containerRuntimeEndpoint", o.ContainerRuntimeEndpoint)
	} else {
		log.Info("kubelet started", "containerd", o.ContainerdAddress, "namespace", o.ContainerdNamespace)
	}
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

func ipString(ip net.IP) string {
	if ip == nil {
		return ""
	}
	return ip.String()
}

// Executor adapts the pod manager to the streaming server's Executor.
type Executor struct{ Pods *pods.Manager }

var _ server.Executor = Executor{}

// Exec implements server.Executor.
func (e Executor) Exec(ctx context.Context, podUID, container string, cmd []string, tty bool,
	stdin io.Reader, stdout, stderr io.Writer, resize <-chan server.TerminalSize) (int, error) {
	code, err := e.Pods.Exec(ctx, podUID, container, cmd, tty, stdin, stdout, stderr, runtimeSizes(ctx, resize))
	return code, serverError(err)
}

var (
	_ server.Attacher      = Executor{}
	_ server.PortForwarder = Executor{}
)

// Attach implements server.Attacher.
func (e Executor) Attach(ctx context.Context, podUID, container string, tty bool,
	stdin io.Reader, stdout, stderr io.Writer, resize <-chan server.TerminalSize) error {
	return serverError(e.Pods.Attach(ctx, podUID, container, tty, stdin, stdout, stderr, runtimeSizes(ctx, resize)))
}

// PortForwardDialer implements server.PortForwarder.
func (e Executor) PortForwardDialer(ctx context.Context, podUID string) (string, func(context.Context, uint16) (net.Conn, error), error) {
	id, dial, err := e.Pods.PortForwardDialer(ctx, podUID)
	return id, dial, serverError(err)
}

// serverError marks a missing container the way the server maps to 404.
func serverError(err error) error {
	if errors.Is(err, pods.ErrContainerNotFound) {
		return fmt.Errorf("%w: %v", server.ErrContainerNotFound, err)
	}
	return err
}

// runtimeSizes relays terminal sizes to the runtime's type.
func runtimeSizes(ctx context.Context, resize <-chan server.TerminalSize) chan runtime.TerminalSize {
	if resize == nil {
		return nil
	}
	rs := make(chan runtime.TerminalSize)
	go func() {
		defer close(rs)
		for {
			select {
			case sz, ok := <-resize:
				if !ok {
					return
				}
				select {
				case rs <- runtime.TerminalSize{Width: sz.Width, Height: sz.Height}:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return rs
}
