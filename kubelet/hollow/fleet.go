package hollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
)

// FleetConfig is N hollow nodes in one process.
type FleetConfig struct {
	// Client is the base identity: it must be allowed to impersonate
	// (system:masters is). Each node acts through
	// Client.Impersonating(system:node:NAME, system:nodes): one connection
	// pool and one rate limiter for all of them.
	Client *client.Client
	// HeartbeatClient, when set, is the base of every node's heartbeat
	// client (Config.HeartbeatClient), impersonating as Client is; the
	// hollow-nodes command gives it no rate limit, as kube's kubelet.
	HeartbeatClient *client.Client
	// Count nodes named NamePrefix+index for index StartIndex ..
	// StartIndex+Count-1.
	Count, StartIndex int
	NamePrefix        string
	// Template is every node's Config; Client, NodeName, NodeIP, RootDir
	// and FallbackPodCIDR are set per node.
	Template Config
	// RootDir holds one directory per node.
	RootDir string
	// NodeIPBase is node index 0's address; node i has NodeIPBase+i
	// (default 127.1.0.0: loopback addresses, see the package doc).
	NodeIPBase net.IP
	// PodCIDRBase gives node i its i-th /24 as its fallback pod CIDR
	// (default 10.128.0.0/10).
	PodCIDRBase string
	// DeleteNodesOnExit deletes the Nodes and their Leases when Run ends.
	DeleteNodesOnExit bool
	Logger            *slog.Logger

	// StartConcurrency bounds the nodes in their start phase at once: from
	// the node's Run until it is registered and its informers have synced
	// (Node.WaitStarted). Nodes start in index order as slots free up, so
	// a large fleet joins the cluster in waves, as real nodes do, instead
	// of sending every registration, list and watch in the same second.
	// Zero is DefaultStartConcurrency; a negative value starts every node
	// at once.
	StartConcurrency int
	// StartQPS, when positive, also bounds how many nodes begin their start
	// phase per second.
	StartQPS float64
	// StartPhaseHook, when set, is called as a node enters its start phase
	// (entering true, before its Run) and as it leaves it (false: started,
	// or its Run ended first), before its slot is given to the next node.
	// Tests watch the ramp with it.
	StartPhaseHook func(node *Node, entering bool)
	// ProgressInterval is how often Run logs the start progress until
	// every node has started (default 5 s).
	ProgressInterval time.Duration
}

// DefaultStartConcurrency is FleetConfig.StartConcurrency's default. A
// node in its start phase has at most about two mutating requests in
// flight (its Node's creation, an event) and three read-only ones (the
// lists of its pods, its Node and the Services), so 100 nodes stay about
// within kube-apiserver's default in-flight limits (200 mutating, 400
// read-only; beyond, it answers 429) where 5,000 at once were 25-50 times
// over them. A fleet of 100 nodes or fewer (tests, make hollow-nodes-up
// N=100) starts at once, as before.
const DefaultStartConcurrency = 100

// Fleet runs hollow nodes.
type Fleet struct {
	cfg   FleetConfig
	nodes []*Node
}

// NodeName is the name of the node of index i.
func (c *FleetConfig) NodeName(i int) string { return fmt.Sprintf("%s%d", c.NamePrefix, i) }

// NewFleet assembles the nodes (it talks to no server).
func NewFleet(cfg FleetConfig) (*Fleet, error) {
	if cfg.Client == nil || cfg.Count < 1 || cfg.RootDir == "" {
		return nil, errors.New("hollow: a client, a count of at least 1 and a root dir are required")
	}
	if cfg.NamePrefix == "" {
		cfg.NamePrefix = "hollow-node-"
	}
	if cfg.NodeIPBase == nil {
		cfg.NodeIPBase = net.ParseIP("127.1.0.0")
	}
	if cfg.PodCIDRBase == "" {
		cfg.PodCIDRBase = "10.128.0.0/10"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StartConcurrency == 0 {
		cfg.StartConcurrency = DefaultStartConcurrency
	}
	if math.IsNaN(cfg.StartQPS) || math.IsInf(cfg.StartQPS, 0) || cfg.StartQPS < 0 {
		return nil, fmt.Errorf("hollow: start QPS must be a number >= 0, got %v", cfg.StartQPS)
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = 5 * time.Second
	}
	f := &Fleet{cfg: cfg}
	for i := cfg.StartIndex; i < cfg.StartIndex+cfg.Count; i++ {
		name := cfg.NodeName(i)
		podCIDR, err := NthSubnet(cfg.PodCIDRBase, 24, i)
		if err != nil {
			return nil, fmt.Errorf("fallback pod CIDR of %s: %w", name, err)
		}
		nc := cfg.Template
		as := client.Impersonation{UserName: "system:node:" + name, Groups: []string{"system:nodes"}}
		nc.Client = cfg.Client.Impersonating(as)
		if cfg.HeartbeatClient != nil {
			nc.HeartbeatClient = cfg.HeartbeatClient.Impersonating(as)
		}
		nc.NodeName, nc.NodeIP = name, addOffset(cfg.NodeIPBase, uint64(i+1))
		nc.RootDir, nc.FallbackPodCIDR, nc.Logger = filepath.Join(cfg.RootDir, name), podCIDR, cfg.Logger
		n, err := New(nc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f.nodes = append(f.nodes, n)
	}
	return f, nil
}

// Nodes are the fleet's nodes, by index.
func (f *Fleet) Nodes() []*Node { return f.nodes }

// ReadyCount is how many nodes are registered and Ready.
func (f *Fleet) ReadyCount() int {
	n := 0
	for _, node := range f.nodes {
		if node.Ready() {
			n++
		}
	}
	return n
}

// RunningContainers is the number of containers running on all nodes.
func (f *Fleet) RunningContainers() int {
	n := 0
	for _, node := range f.nodes {
		n += node.RunningContainers()
	}
	return n
}

// Run runs every node until ctx ends; then, with DeleteNodesOnExit, it
// deletes their Nodes and Leases. Nodes start in index order, at most
// StartConcurrency in their start phase at once and at most StartQPS a
// second; Run logs the progress every ProgressInterval until all have
// started. A node that fails is logged and the others go on.
func (f *Fleet) Run(ctx context.Context) error {
	if err := os.MkdirAll(f.cfg.RootDir, 0o755); err != nil {
		return err
	}
	log := f.cfg.Logger
	// slots has one token per node in its start phase; nil: no bound.
	var slots chan struct{}
	if f.cfg.StartConcurrency > 0 {
		slots = make(chan struct{}, f.cfg.StartConcurrency)
	}
	var limiter *rate.Limiter
	if f.cfg.StartQPS > 0 {
		limiter = rate.NewLimiter(rate.Limit(f.cfg.StartQPS), 1)
	}
	var p startProgress
	begin := time.Now()
	log.Info("hollow nodes starting", "count", len(f.nodes), "first", f.nodes[0].Name(), "last", f.nodes[len(f.nodes)-1].Name(),
		"startConcurrency", f.cfg.StartConcurrency, "startQPS", f.cfg.StartQPS)
	progressDone := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { f.logProgress(ctx, &p, begin, progressDone) })
dispatch:
	for _, n := range f.nodes {
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				break
			}
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				break dispatch
			}
		}
		if h := f.cfg.StartPhaseHook; h != nil {
			h(n, true)
		}
		p.launched.Add(1)
		// The node's Run ending (a failure) ends its start phase too.
		runEnded, cancelWait := context.WithCancel(ctx)
		wg.Go(func() {
			defer cancelWait()
			if err := n.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("hollow node stopped", "node", n.Name(), "err", err)
			}
		})
		wg.Go(func() {
			if n.WaitStarted(runEnded) == nil {
				p.started.Add(1)
			}
			if h := f.cfg.StartPhaseHook; h != nil {
				h(n, false)
			}
			if slots != nil {
				<-slots
			}
			if p.ended.Add(1) == int64(len(f.nodes)) {
				close(progressDone)
			}
		})
	}
	wg.Wait()
	if !f.cfg.DeleteNodesOnExit {
		return nil
	}
	return f.deleteNodes()
}

// startProgress counts the nodes through their start phase.
type startProgress struct {
	// launched entered it; started left it started; ended left it either
	// way.
	launched, started, ended atomic.Int64
}

// logProgress logs the start every ProgressInterval until every node has
// ended its start phase (done closed) or ctx ends.
func (f *Fleet) logProgress(ctx context.Context, p *startProgress, begin time.Time, done <-chan struct{}) {
	t := time.NewTicker(f.cfg.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			f.cfg.Logger.Info("hollow nodes started", "count", len(f.nodes), "started", p.started.Load(),
				"ready", f.ReadyCount(), "after", time.Since(begin).Round(time.Millisecond))
			return
		case <-t.C:
			launched, ended := p.launched.Load(), p.ended.Load()
			f.cfg.Logger.Info("hollow nodes start progress", "count", len(f.nodes), "starting", launched-ended,
				"started", p.started.Load(), "ready", f.ReadyCount(), "waiting", int64(len(f.nodes))-launched,
				"elapsed", time.Since(begin).Round(time.Second))
		}
	}
}

// deleteNodes removes the fleet's Nodes and their Leases, with the base
// client, a few at a time, within a minute.
func (f *Fleet) deleteNodes() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes := client.Resource[api.Node](f.cfg.Client)
	leases := client.Resource[api.Lease](f.cfg.Client).Namespace(nodestatus.NodeLeaseNamespace)
	sem := make(chan struct{}, 16)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, n := range f.nodes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			for _, del := range []func() error{
				func() error { return nodes.Delete(ctx, n.Name(), nil) },
				func() error { return leases.Delete(ctx, n.Name(), nil) },
			} {
				if err := del(); err != nil && !apierrors.IsNotFound(err) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("delete %s: %w", n.Name(), err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	f.cfg.Logger.Info("deleted the hollow nodes", "count", len(f.nodes), "errors", len(errs))
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Errorf("and %d more", len(errs)-3))
	}
	return errors.Join(errs...)
}
