package controller

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"
)

// Options are the controller-manager flags that controllers read; flag
// names follow kube-controller-manager.
type Options struct {
	// ConcurrentSyncs is the worker count per controller name
	// ("replicaset" -> --concurrent-replicaset-syncs).
	ConcurrentSyncs map[string]int

	// Node lifecycle.
	NodeMonitorGracePeriod time.Duration
	NodeMonitorPeriod      time.Duration
	NodeEvictionRate       float64
	// SecondaryNodeEvictionRate applies to a partially disrupted zone of
	// more than LargeClusterSizeThreshold nodes (0 to smaller ones); a
	// zone is partially disrupted when at least UnhealthyZoneThreshold of
	// its nodes (and more than two) are not ready.
	SecondaryNodeEvictionRate float64
	UnhealthyZoneThreshold    float64
	LargeClusterSizeThreshold int
	// ClusterCIDR and NodeCIDRMaskSize drive podCIDR allocation.
	ClusterCIDR              string
	NodeCIDRMaskSize         int
	AllocateNodeCIDRs        bool
	TerminatedPodGCThreshold int
}

// DefaultOptions returns kube-controller-manager's defaults.
func DefaultOptions() Options {
	return Options{
		ConcurrentSyncs: map[string]int{
			"replicaset":       5,
			"deployment":       5,
			"endpoints":        5,
			"endpointslice":    5,
			"garbagecollector": 20,
			"namespace":        10,
			"job":              5,
			"nodelifecycle":    1,
			"nodeipam":         1,
		},
		NodeMonitorGracePeriod:    50 * time.Second,
		NodeMonitorPeriod:         5 * time.Second,
		NodeEvictionRate:          0.1,
		SecondaryNodeEvictionRate: 0.01,
		UnhealthyZoneThreshold:    0.55,
		LargeClusterSizeThreshold: 50,
		ClusterCIDR:               "10.244.0.0/16",
		NodeCIDRMaskSize:          24,
		AllocateNodeCIDRs:         true,
		TerminatedPodGCThreshold:  12500,
	}
}

// concurrentFlags maps kube's --concurrent-*-syncs flag names to controllers.
var concurrentFlags = map[string]string{
	"replicaset":       "concurrent-replicaset-syncs",
	"deployment":       "concurrent-deployment-syncs",
	"endpoints":        "concurrent-endpoint-syncs",
	"endpointslice":    "concurrent-service-endpoint-syncs",
	"garbagecollector": "concurrent-gc-syncs",
	"namespace":        "concurrent-namespace-syncs",
	"job":              "concurrent-job-syncs",
}

// AddFlags registers the flags above.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	for name, flagName := range concurrentFlags {
		fs.Func(flagName, fmt.Sprintf("Number of %s objects synced concurrently (default %d).", name, o.ConcurrentSyncs[name]), func(s string) error {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 {
				return fmt.Errorf("must be a positive integer")
			}
			o.ConcurrentSyncs[name] = v
			return nil
		})
	}
	fs.DurationVar(&o.NodeMonitorGracePeriod, "node-monitor-grace-period", o.NodeMonitorGracePeriod, "How long a node may go without a Lease renewal or status update before it is marked unhealthy.")
	fs.DurationVar(&o.NodeMonitorPeriod, "node-monitor-period", o.NodeMonitorPeriod, "How often node health is checked.")
	fs.Float64Var(&o.NodeEvictionRate, "node-eviction-rate", o.NodeEvictionRate, "Nodes per second whose pods are evicted when nodes are unhealthy.")
	fs.Float64Var(&o.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", o.SecondaryNodeEvictionRate, "Nodes per second whose pods are evicted when a zone is unhealthy (see --unhealthy-zone-threshold); 0 in zones of at most --large-cluster-size-threshold nodes.")
	fs.Float64Var(&o.UnhealthyZoneThreshold, "unhealthy-zone-threshold", o.UnhealthyZoneThreshold, "Fraction of not-ready nodes (at least 3) that makes a zone unhealthy.")
	fs.IntVar(&o.LargeClusterSizeThreshold, "large-cluster-size-threshold", o.LargeClusterSizeThreshold, "Zones with more nodes than this use --secondary-node-eviction-rate when unhealthy; smaller ones stop evicting.")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "CIDR range for pods in the cluster; each node gets a podCIDR from it.")
	fs.IntVar(&o.NodeCIDRMaskSize, "node-cidr-mask-size", o.NodeCIDRMaskSize, "Mask size of each node's podCIDR.")
	fs.BoolVar(&o.AllocateNodeCIDRs, "allocate-node-cidrs", o.AllocateNodeCIDRs, "Assign each node a spec.podCIDR from --cluster-cidr.")
	fs.IntVar(&o.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", o.TerminatedPodGCThreshold, "Number of terminated pods kept before the pod GC deletes the oldest.")
}

// Validate checks the values: positive node monitor periods, rates and the
// zone threshold in range, and a cluster CIDR the node mask size fits in
// when node CIDRs are allocated.
func (o *Options) Validate() error {
	var errs []error
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"node-monitor-grace-period", o.NodeMonitorGracePeriod}, {"node-monitor-period", o.NodeMonitorPeriod}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive, got %v", d.flag, d.v))
		}
	}
	for _, r := range []struct {
		flag string
		v    float64
	}{{"node-eviction-rate", o.NodeEvictionRate}, {"secondary-node-eviction-rate", o.SecondaryNodeEvictionRate}} {
		if math.IsNaN(r.v) || math.IsInf(r.v, 0) || r.v < 0 {
			errs = append(errs, fmt.Errorf("--%s must be a number >= 0, got %v", r.flag, r.v))
		}
	}
	if !(o.UnhealthyZoneThreshold >= 0 && o.UnhealthyZoneThreshold <= 1) {
		errs = append(errs, fmt.Errorf("--unhealthy-zone-threshold must be in [0, 1], got %v", o.UnhealthyZoneThreshold))
	}
	if o.LargeClusterSizeThreshold < 0 {
		errs = append(errs, fmt.Errorf("--large-cluster-size-threshold must be >= 0, got %d", o.LargeClusterSizeThreshold))
	}
	if o.AllocateNodeCIDRs {
		p, err := netip.ParsePrefix(o.ClusterCIDR)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--cluster-cidr %q is not a CIDR (--allocate-node-cidrs is on)", o.ClusterCIDR))
		case !p.Addr().Is4():
			errs = append(errs, fmt.Errorf("--cluster-cidr %q: only IPv4 is supported", o.ClusterCIDR))
		case o.NodeCIDRMaskSize < p.Bits() || o.NodeCIDRMaskSize > 32 || o.NodeCIDRMaskSize-p.Bits() > 20:
			errs = append(errs, fmt.Errorf("--node-cidr-mask-size %d must be between --cluster-cidr's prefix length %d and 32, and at most 20 more than it",
				o.NodeCIDRMaskSize, p.Bits()))
		}
	}
	return errors.Join(errs...)
}

// Workers returns the worker count for a controller (1 when unset).
func (o *Options) Workers(name string) int {
	if n := o.ConcurrentSyncs[name]; n > 0 {
		return n
	}
	return 1
}
