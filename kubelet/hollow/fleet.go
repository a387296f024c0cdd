package hollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

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
}

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
	f := &Fleet{cfg: cfg}
	for i := cfg.StartIndex; i < cfg.StartIndex+cfg.Count; i++ {
		name := cfg.NodeName(i)
		podCIDR, err := NthSubnet(cfg.PodCIDRBase, 24, i)
		if err != nil {
			return nil, fmt.Errorf("fallback pod CIDR of %s: %w", name, err)
		}
		nc := cfg.Template
		nc.Client = cfg.Client.Impersonating(client.Impersonation{UserName: "system:node:" + name, Groups: []string{"system:nodes"}})
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
// deletes their Nodes and Leases. A node that fails is logged and the
// others go on.
func (f *Fleet) Run(ctx context.Context) error {
	if err := os.MkdirAll(f.cfg.RootDir, 0o755); err != nil {
		return err
	}
	log := f.cfg.Logger
	var wg sync.WaitGroup
	for _, n := range f.nodes {
		wg.Go(func() {
			if err := n.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("hollow node stopped", "node", n.Name(), "err", err)
			}
		})
	}
	log.Info("hollow nodes started", "count", len(f.nodes), "first", f.nodes[0].Name(), "last", f.nodes[len(f.nodes)-1].Name())
	wg.Wait()
	if !f.cfg.DeleteNodesOnExit {
		return nil
	}
	return f.deleteNodes()
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
