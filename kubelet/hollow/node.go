package hollow

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/version"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/fake"
)

// LabelHollow marks a hollow node's Node.
const LabelHollow = "node.minik8s.io/hollow"

// DefaultCapacity is a hollow node's machine when Config.Capacity leaves
// a resource out.
var DefaultCapacity = api.ResourceList{
	api.ResourceCPU:              resource.MustParse("4"),
	api.ResourceMemory:           resource.MustParse("16Gi"),
	api.ResourceEphemeralStorage: resource.MustParse("100Gi"),
}

// Config is one hollow node.
type Config struct {
	// Client acts as the node (system:node:NAME, group system:nodes).
	Client *client.Client
	// HeartbeatClient, when set, is what the node status manager
	// (registration, Lease, status) uses instead of Client, as the node: the
	// kubelet's heartbeat client, which kube builds without a rate limit so
	// a busy pod workload cannot delay the Lease until it expires.
	HeartbeatClient *client.Client
	NodeName        string
	// NodeIP is the node's InternalIP.
	NodeIP net.IP
	// Labels are added to the kubelet's own and LabelHollow=true.
	Labels map[string]string
	Taints []api.Taint
	// MaxPods is the pods capacity (default 110).
	MaxPods int
	// Capacity is the machine's cpu, memory and ephemeral-storage
	// (DefaultCapacity for those left out).
	Capacity api.ResourceList
	// RootDir holds the pods' files (volumes, /etc/hosts); required.
	RootDir string
	// FallbackPodCIDR is the pod network before the Node has a podCIDR.
	FallbackPodCIDR string
	ClusterDNS      []string
	ClusterDomain   string
	Logger          *slog.Logger

	// The kubelet's cadences (zero: the kubelet's defaults: Lease of 40 s
	// renewed every 10 s, status computed every 10 s and written at least
	// every minute, pods re-synced every 10 s). Tests shorten them.
	LeaseDuration, LeaseRenewInterval            time.Duration
	StatusUpdateFrequency, StatusReportFrequency time.Duration
	ResyncPeriod                                 time.Duration
}

// Node is one hollow node: the kubelet's node status manager and pod
// manager on a fake runtime and a paper network.
type Node struct {
	cfg    Config
	log    *slog.Logger
	rt     *fake.Runtime
	net    *Network
	status *nodestatus.Manager
	pods   *pods.Manager
	bc     *events.Broadcaster

	mu      sync.Mutex
	running bool
}

// New assembles a hollow node; Run runs it.
func New(cfg Config) (*Node, error) {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.RootDir == "" {
		return nil, errors.New("hollow: a client, a node name and a root dir are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FallbackPodCIDR == "" {
		cfg.FallbackPodCIDR = "10.128.0.0/24"
	}
	capacity := api.ResourceList{}
	for k, v := range DefaultCapacity {
		capacity[k] = v
	}
	for k, v := range cfg.Capacity {
		capacity[k] = v
	}
	cfg.Capacity = capacity
	log := cfg.Logger.With("node", cfg.NodeName)
	nw, err := NewNetwork(cfg.FallbackPodCIDR)
	if err != nil {
		return nil, err
	}
	rt := fake.New()
	rt.SetRecording(false)
	bc := events.NewBroadcaster(cfg.Client, events.Options{Component: "kubelet", Host: cfg.NodeName, QueueSize: 200, Logger: log})
	rec := bc.Recorder()
	labels := map[string]string{LabelHollow: "true"}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	machine := hollowMachine(cfg.NodeName, cfg.Capacity)
	heartbeat := cfg.HeartbeatClient
	if heartbeat == nil {
		heartbeat = cfg.Client
	}
	ns, err := nodestatus.New(nodestatus.Config{
		Client: heartbeat, NodeName: cfg.NodeName, NodeIP: cfg.NodeIP, Labels: labels, Taints: cfg.Taints,
		// nodestatus names the node in its logs itself.
		MaxPods: cfg.MaxPods, RootDir: cfg.RootDir, Recorder: rec, Logger: cfg.Logger,
		RuntimeVersion:        func() (string, error) { return rt.Type() + "://" + version.String(), nil },
		ReadMachine:           func(string) (nodestatus.Machine, error) { return machine, nil },
		LeaseDuration:         cfg.LeaseDuration,
		LeaseRenewInterval:    cfg.LeaseRenewInterval,
		StatusUpdateFrequency: cfg.StatusUpdateFrequency,
		StatusReportFrequency: cfg.StatusReportFrequency,
	})
	if err != nil {
		return nil, err
	}
	mgr := pods.New(cfg.Client, rt, nw, rec, pods.Options{
		NodeName: cfg.NodeName, NodeIP: ns.NodeIP().String(),
		RootDir: filepath.Join(cfg.RootDir, "root"), LogsDir: filepath.Join(cfg.RootDir, "logs"),
		ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain, ResyncPeriod: cfg.ResyncPeriod, Logger: log,
	})
	rt.SetOnExit(mgr.OnContainerExit)
	return &Node{cfg: cfg, log: log, rt: rt, net: nw, status: ns, pods: mgr, bc: bc}, nil
}

// hollowMachine is the machine a hollow node reports: its capacity, all
// of it available, and IDs of its own derived from its name.
func hollowMachine(name string, capacity api.ResourceList) nodestatus.Machine {
	cpu := capacity[api.ResourceCPU]
	mem := capacity[api.ResourceMemory]
	disk := capacity[api.ResourceEphemeralStorage]
	sum := sha256.Sum256([]byte(name))
	id := fmt.Sprintf("%x", sum[:16])
	return nodestatus.Machine{
		NumCPU: int(max(cpu.Value(), 1)), MemoryCapacity: mem.Value(), MemoryAvailable: mem.Value(),
		FsCapacity: disk.Value(), FsAvailable: disk.Value(), FsInodes: 1 << 24, FsInodesFree: 1 << 24,
		PIDMax: 1 << 22, Processes: 1,
		KernelVersion: "hollow", OSImage: "minik8s hollow node", MachineID: id,
		SystemUUID: fmt.Sprintf("%s-%s-%s-%s-%s", id[:8], id[8:12], id[12:16], id[16:20], id[20:32]), BootID: id,
	}
}

// Name is the node's name.
func (n *Node) Name() string { return n.cfg.NodeName }

// Runtime is the node's fake runtime (a test makes containers exit).
func (n *Node) Runtime() *fake.Runtime { return n.rt }

// Network is the node's paper network.
func (n *Node) Network() *Network { return n.net }

// Ready tells whether the Node is registered and its Ready condition
// True, as last written.
func (n *Node) Ready() bool {
	node := n.status.Node()
	if node == nil {
		return false
	}
	for _, c := range node.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// WaitStarted blocks until the node's start phase is over: its Node is
// registered (created, or found and reconciled) and its pod manager has
// listed its pods, its Node and the Services (informers synced). It
// fails only when ctx ends; a node that is not running never starts.
func (n *Node) WaitStarted(ctx context.Context) error {
	if _, err := n.status.WaitForNode(ctx, nil); err != nil {
		return err
	}
	select {
	case <-n.pods.Synced():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RunningContainers counts the containers running on the node.
func (n *Node) RunningContainers() int {
	cs, _ := n.rt.ListPodContainers(context.Background(), "")
	count := 0
	for _, c := range cs {
		if c.Kind == runtime.KindContainer && c.State == runtime.StateRunning {
			count++
		}
	}
	return count
}

// Run registers the node and runs it until ctx ends.
func (n *Node) Run(ctx context.Context) error {
	n.mu.Lock()
	if n.running {
		n.mu.Unlock()
		return errors.New("hollow: node already running")
	}
	n.running = true
	n.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	run := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		})
	}
	wg.Go(func() { n.bc.Run(ctx) })
	run("node status", n.status.Run)
	// The pod manager's probes ask this node, not the pods' addresses.
	run("pod manager", func(ctx context.Context) error {
		return n.pods.Run(probes.WithNetworkProber(ctx, hollowProbe))
	})
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// hollowProbe answers a network probe of a hollow pod: success, unless the
// probe names a port the container does not have (the real kubelet's
// failure before any dial).
func hollowProbe(_ context.Context, p *api.Probe, tgt probes.Target) error {
	switch {
	case p.HTTPGet != nil:
		_, err := probes.ResolvePort(p.HTTPGet.Port, tgt.Container)
		return err
	case p.TCPSocket != nil:
		_, err := probes.ResolvePort(p.TCPSocket.Port, tgt.Container)
		return err
	}
	return nil
}
