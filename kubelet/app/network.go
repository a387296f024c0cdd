package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/podroutes"
	"github.com/minik8s/minik8s/kubelet/netpol"
	"github.com/minik8s/minik8s/kubelet/proxy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
)

// NetworkOptions are the node-level networking the node agent runs besides
// the pods: the service proxy (kube-proxy's job) and host-gateway routes to
// the other nodes' pod CIDRs.
type NetworkOptions struct {
	// ProxyMode is "iptables" or "none" (another proxy runs on the node).
	ProxyMode string
	// ClusterCIDR is kube-proxy's --cluster-cidr: service traffic from
	// outside it is masqueraded, and so is pod traffic leaving it.
	ClusterCIDR   string
	MinSyncPeriod time.Duration
	// PodRoutes enables the routes to other nodes' pod CIDRs.
	PodRoutes bool
	// RunFirewall enforces NetworkPolicies on the node's pods
	// (kube-router's --run-firewall).
	RunFirewall bool
	// Kubeconfig holds the credentials of the service proxy, the pod
	// routes and the network policy enforcer: kube-proxy's
	// (system:kube-proxy, whose system:node-proxier role reads every Node,
	// Service and EndpointSlice, and minik8s:network-policy-agent every
	// Pod, Namespace and NetworkPolicy). Empty: the
	// kubelet's own, with which the Node authorizer lets it read only
	// its own Node, so the pod routes cannot list the other nodes.
	Kubeconfig string
}

// DefaultNetworkOptions runs both.
func DefaultNetworkOptions() NetworkOptions {
	return NetworkOptions{ProxyMode: "iptables", ClusterCIDR: "10.244.0.0/16", MinSyncPeriod: proxy.DefaultMinSyncPeriod, PodRoutes: true, RunFirewall: true}
}

// AddFlags registers the flags (kube-proxy's names where it has them).
func (o *NetworkOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ProxyMode, "proxy-mode", o.ProxyMode, "Service proxy: 'iptables' (kube-proxy's iptables mode) or 'none'.")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "The pods' CIDR across the cluster: pod traffic leaving it is masqueraded (one node rule; none between pods), and so is service traffic from outside it. Empty: the bridge masquerades everything off the node's own pod CIDR, and all service traffic is masqueraded.")
	fs.DurationVar(&o.MinSyncPeriod, "iptables-min-sync-period", o.MinSyncPeriod, "Shortest interval between service rule rewrites when changes keep coming.")
	fs.BoolVar(&o.PodRoutes, "pod-routes", o.PodRoutes, "Keep routes to the other nodes' spec.podCIDR via their InternalIP (host-gateway pod networking).")
	fs.BoolVar(&o.RunFirewall, "run-firewall", o.RunFirewall, "Enforce NetworkPolicies on this node's pods with iptables (kube-router's flag). Needs credentials that read every Pod, Namespace and NetworkPolicy: --proxy-kubeconfig's. false also removes rules a previous run left.")
	fs.StringVar(&o.Kubeconfig, "proxy-kubeconfig", o.Kubeconfig, "kube-proxy's kubeconfig (system:kube-proxy) for the service proxy and the pod routes, which read every Node; empty: the kubelet's credentials, which may read only its own Node (no pod routes to other nodes).")
}

// Validate checks the proxy mode, the cluster CIDR and the sync period.
func (o *NetworkOptions) Validate() error {
	var errs []error
	switch o.ProxyMode {
	case "iptables", "none", "":
	default:
		errs = append(errs, fmt.Errorf("--proxy-mode %q: want iptables or none", o.ProxyMode))
	}
	if o.ClusterCIDR != "" {
		if _, _, err := net.ParseCIDR(o.ClusterCIDR); err != nil {
			errs = append(errs, fmt.Errorf("--cluster-cidr %q is not a CIDR", o.ClusterCIDR))
		}
	}
	if o.MinSyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("--iptables-min-sync-period must be >= 0, got %v", o.MinSyncPeriod))
	}
	if o.Kubeconfig != "" {
		if _, err := o.client(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// client is the proxy's client from --proxy-kubeconfig.
func (o *NetworkOptions) client() (*client.Client, error) {
	cfg, err := kubeconfig.Load(o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--proxy-kubeconfig: %w", err)
	}
	cc, err := cfg.ClientConfig("")
	if err != nil {
		return nil, fmt.Errorf("--proxy-kubeconfig %s: %w", o.Kubeconfig, err)
	}
	cc.UserAgent = client.UserAgentFor("kube-proxy")
	c, err := client.New(cc)
	if err != nil {
		return nil, fmt.Errorf("--proxy-kubeconfig %s: %w", o.Kubeconfig, err)
	}
	return c, nil
}

// networkRunners returns the node networking loops to run.
func (o *NetworkOptions) networkRunners(c *client.Client, nodeName string, reg prometheus.Registerer, log *slog.Logger) (map[string]func(context.Context) error, error) {
	out := map[string]func(context.Context) error{}
	if o.Kubeconfig != "" {
		var err error
		if c, err = o.client(); err != nil {
			return nil, err
		}
	}
	switch o.ProxyMode {
	case "iptables":
		p, err := proxy.New(proxy.Config{Client: c, NodeName: nodeName, ClusterCIDR: o.ClusterCIDR, MinSyncPeriod: o.MinSyncPeriod,
			Logger: log.With("component", "proxy"), Metrics: reg})
		if err != nil {
			return nil, err
		}
		out["service proxy"] = p.Run
	case "none", "":
	default:
		return nil, fmt.Errorf("--proxy-mode %q: want iptables or none", o.ProxyMode)
	}
	if o.RunFirewall {
		if o.Kubeconfig == "" {
			log.Warn("--run-firewall without --proxy-kubeconfig: the kubelet's credentials may not read every Pod, Namespace and NetworkPolicy, so policies may never be enforced")
		}
		e, err := netpol.New(netpol.Config{Client: c, NodeName: nodeName, MinSyncPeriod: o.MinSyncPeriod,
			Logger: log.With("component", "netpol"), Metrics: reg})
		if err != nil {
			return nil, err
		}
		out["network policy"] = e.Run
	} else {
		out["network policy cleanup"] = func(context.Context) error {
			if err := netpol.Cleanup(proxy.IPTables{}); err != nil {
				log.Warn("removing network policy rules", "err", err)
			}
			return nil
		}
	}
	if o.PodRoutes {
		out["pod routes"] = podroutes.New(podroutes.Config{Client: c, NodeName: nodeName, Logger: log.With("component", "routes")}).Run
	}
	return out, nil
}
