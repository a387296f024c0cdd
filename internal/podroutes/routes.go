package podroutes

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Protocol marks the routes this package owns (like a routing daemon's
// "proto" in `ip route`), so it never touches routes it did not make.
const Protocol netlink.RouteProtocol = 77

// Config configures a Syncer.
type Config struct {
	Client *client.Client
	// Factory, if set, is shared with the rest of the node agent.
	Factory *informer.Factory
	// NodeName is this node: no route to its own podCIDR. Empty on a host
	// that is not a node (a control plane): routes to every node.
	NodeName string
	// Handle is the netlink handle to program (nil: this process's namespace).
	Handle *netlink.Handle
	// ResyncPeriod re-checks the routes even without changes (default 30 s).
	ResyncPeriod time.Duration
	Logger       *slog.Logger
}

// Syncer keeps the pod routes in step with the Nodes.
type Syncer struct {
	cfg     Config
	nodes   *informer.Informer[api.Node]
	trigger chan struct{}
}

// New registers the node informer.
func New(cfg Config) *Syncer {
	if cfg.Handle == nil {
		cfg.Handle = &netlink.Handle{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = 30 * time.Second
	}
	if cfg.Factory == nil {
		cfg.Factory = informer.NewFactory(cfg.Client, informer.FactoryOptions{Logger: cfg.Logger})
	}
	s := &Syncer{cfg: cfg, nodes: informer.Shared[api.Node](cfg.Factory, "", client.ListOptions{}), trigger: make(chan struct{}, 1)}
	kick := func() {
		select {
		case s.trigger <- struct{}{}:
		default:
		}
	}
	s.nodes.AddEventHandler(informer.Handler[api.Node]{
		OnAdd:    func(*api.Node, bool) { kick() },
		OnUpdate: func(o, n *api.Node) { kick() },
		OnDelete: func(*api.Node, bool) { kick() },
	})
	return s
}

// Run syncs until ctx ends.
func (s *Syncer) Run(ctx context.Context) error {
	s.cfg.Factory.Start(ctx)
	if !informer.WaitForCacheSync(ctx, s.nodes) {
		return ctx.Err()
	}
	t := time.NewTicker(s.cfg.ResyncPeriod)
	defer t.Stop()
	for {
		if err := s.Sync(); err != nil {
			s.cfg.Logger.Warn("syncing pod routes failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.trigger:
		case <-t.C:
		}
	}
}

// route is one wanted route: a node's pod CIDR via its InternalIP.
type route struct {
	dst *net.IPNet
	gw  net.IP
}

// desired lists the routes to the other nodes' pod CIDRs.
func desired(nodes []*api.Node, self string) []route {
	var out []route
	for _, n := range nodes {
		if n.Name == self || n.Spec.PodCIDR == "" {
			continue
		}
		_, cidr, err := net.ParseCIDR(n.Spec.PodCIDR)
		if err != nil || cidr.IP.To4() == nil {
			continue
		}
		var gw net.IP
		for _, a := range n.Status.Addresses {
			if a.Type == api.NodeInternalIP {
				gw = net.ParseIP(a.Address).To4()
				break
			}
		}
		if gw == nil {
			continue
		}
		out = append(out, route{dst: cidr, gw: gw})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dst.String() < out[j].dst.String() })
	return out
}

// Sync makes the kernel's routes of Protocol equal to the desired ones.
func (s *Syncer) Sync() error {
	want := desired(s.nodes.Store().List(), s.cfg.NodeName)
	h := s.cfg.Handle
	have, err := h.RouteListFiltered(unix.AF_INET, &netlink.Route{Protocol: Protocol, Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list routes: %w", err)
	}
	wanted := map[string]route{}
	for _, r := range want {
		wanted[r.dst.String()] = r
	}
	var firstErr error
	for _, r := range have {
		if r.Dst == nil {
			continue
		}
		w, ok := wanted[r.Dst.String()]
		if ok && w.gw.Equal(r.Gw) {
			delete(wanted, r.Dst.String())
			continue
		}
		if !ok {
			if err := h.RouteDel(&r); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("delete route %s: %w", r.Dst, err)
			} else {
				s.cfg.Logger.Info("removed pod route", "dst", r.Dst.String(), "via", r.Gw.String())
			}
		}
	}
	for _, r := range want {
		if _, pending := wanted[r.dst.String()]; !pending {
			continue
		}
		nr := &netlink.Route{Dst: r.dst, Gw: r.gw, Protocol: Protocol, Table: unix.RT_TABLE_MAIN}
		if err := h.RouteReplace(nr); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("route %s via %s: %w", r.dst, r.gw, err)
			}
			continue
		}
		s.cfg.Logger.Info("added pod route", "dst", r.dst.String(), "via", r.gw.String())
	}
	return firstErr
}
