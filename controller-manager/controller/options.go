package controller

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"
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
	// RootCAFile is the cluster CA the root-ca-cert-publisher puts in every
	// namespace's kube-root-ca.crt; empty means the CA of the
	// controller-manager's own kubeconfig, as in kube.
	RootCAFile string
	// ResourceQuotaSyncPeriod is how often the resourcequota controller
	// recomputes every quota's usage from what is stored.
	ResourceQuotaSyncPeriod time.Duration
	// HPA: how often each HorizontalPodAutoscaler is synced, the window
	// over which scale-down recommendations are stabilized (without
	// spec.behavior), the tolerance, and the CPU initialization and
	// initial readiness delays of new pods.
	HPASyncPeriod              time.Duration
	HPADownscaleStabilization  time.Duration
	HPATolerance               float64
	HPACPUInitializationPeriod time.Duration
	HPAInitialReadinessDelay   time.Duration
	// The local-path provisioner: the directory on every node volumes are
	// made under, the image of its helper pods (on every node) and the
	// namespace they run in.
	LocalPathRoot        string
	LocalPathHelperImage string
	LocalPathNamespace   string
	// PVClaimBinderSyncPeriod is how often the persistentvolume-binder
	// syncs every claim and volume again.
	PVClaimBinderSyncPeriod time.Duration
}

// DefaultOptions returns kube-controller-manager's defaults.
func DefaultOptions() Options {
	return Options{
		ConcurrentSyncs: map[string]int{
			"replicaset":               5,
			"replicationcontroller":    5,
			"endpointslicemirroring":   5,
			"deployment":               5,
			"endpoints":                5,
			"endpointslice":            5,
			"garbagecollector":         20,
			"namespace":                10,
			"job":                      5,
			"nodelifecycle":            1,
			"nodeipam":                 1,
			"statefulset":              5,
			"daemonset":                2,
			"resourcequota":            5,
			"horizontalpodautoscaling": 5,
			// external-provisioner's DefaultThreadiness.
			"local-path-provisioner": 4,
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
		ResourceQuotaSyncPeriod:   5 * time.Minute,
		PVClaimBinderSyncPeriod:   15 * time.Second,

		HPASyncPeriod:              15 * time.Second,
		HPADownscaleStabilization:  5 * time.Minute,
		HPATolerance:               0.1,
		HPACPUInitializationPeriod: 5 * time.Minute,
		HPAInitialReadinessDelay:   30 * time.Second,

		LocalPathRoot:        "/var/lib/minik8s/storage",
		LocalPathHelperImage: "minik8s/busybox:latest",
		LocalPathNamespace:   "kube-system",
	}
}

// concurrentFlags are kube's --concurrent-*-syncs flags by controller, each
// in its controller's --help section.
var concurrentFlags = map[string]struct{ flag, section string }{
	"deployment":               {"concurrent-deployment-syncs", "deployment controller"},
	"endpoints":                {"concurrent-endpoint-syncs", "endpoint controller"},
	"endpointslice":            {"concurrent-service-endpoint-syncs", "endpointslice controller"},
	"garbagecollector":         {"concurrent-gc-syncs", "garbagecollector controller"},
	"job":                      {"concurrent-job-syncs", "job controller"},
	"namespace":                {"concurrent-namespace-syncs", "namespace controller"},
	"replicaset":               {"concurrent-replicaset-syncs", "replicaset controller"},
	"statefulset":              {"concurrent-statefulset-syncs", "statefulset controller"},
	"daemonset":                {"concurrent-daemonset-syncs", "daemonset controller"},
	"resourcequota":            {"concurrent-resource-quota-syncs", "resourcequota controller"},
	"horizontalpodautoscaling": {"concurrent-horizontal-pod-autoscaler-syncs", "horizontalpodautoscaling controller"},
	"replicationcontroller":    {"concurrent-rc-syncs", "replicationcontroller controller"},
	"endpointslicemirroring":   {"mirroring-concurrent-service-endpoint-syncs", "endpointslicemirroring controller"},
}

// AddFlags registers the flags above in kube-controller-manager's --help
// sections, in name order: section returns the named one ("generic",
// "job controller").
func (o *Options) AddFlags(section func(name string) *pflag.FlagSet) {
	fs := section("generic")
	fs.BoolVar(&o.AllocateNodeCIDRs, "allocate-node-cidrs", o.AllocateNodeCIDRs, "Assign each node a spec.podCIDR from --cluster-cidr.")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "CIDR range for pods in the cluster; each node gets a podCIDR from it.")
	fs.DurationVar(&o.NodeMonitorPeriod, "node-monitor-period", o.NodeMonitorPeriod, "How often node health is checked.")
	o.addConcurrentSyncs(section, "daemonset", "deployment", "endpoints", "endpointslice", "endpointslicemirroring", "garbagecollector", "job", "namespace")
	o.addConcurrentSyncs(section, "horizontalpodautoscaling")
	fs = section("horizontalpodautoscaling controller")
	fs.DurationVar(&o.HPASyncPeriod, "horizontal-pod-autoscaler-sync-period", o.HPASyncPeriod, "The period for syncing the number of pods in horizontal pod autoscaler.")
	fs.DurationVar(&o.HPADownscaleStabilization, "horizontal-pod-autoscaler-downscale-stabilization", o.HPADownscaleStabilization, "The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.")
	fs.Float64Var(&o.HPATolerance, "horizontal-pod-autoscaler-tolerance", o.HPATolerance, "The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.")
	fs.DurationVar(&o.HPACPUInitializationPeriod, "horizontal-pod-autoscaler-cpu-initialization-period", o.HPACPUInitializationPeriod, "The period after pod start when CPU samples might be skipped.")
	fs.DurationVar(&o.HPAInitialReadinessDelay, "horizontal-pod-autoscaler-initial-readiness-delay", o.HPAInitialReadinessDelay, "The period after pod start during which readiness changes will be treated as initial readiness.")
	section("nodeipam controller").IntVar(&o.NodeCIDRMaskSize, "node-cidr-mask-size", o.NodeCIDRMaskSize, "Mask size of each node's podCIDR.")
	fs = section("nodelifecycle controller")
	fs.DurationVar(&o.NodeMonitorGracePeriod, "node-monitor-grace-period", o.NodeMonitorGracePeriod, "How long a node may go without a Lease renewal or status update before it is marked unhealthy.")
	fs.Float64Var(&o.NodeEvictionRate, "node-eviction-rate", o.NodeEvictionRate, "Nodes per second whose pods are evicted when nodes are unhealthy.")
	fs.Float64Var(&o.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", o.SecondaryNodeEvictionRate, "Nodes per second whose pods are evicted when a zone is unhealthy (see --unhealthy-zone-threshold); 0 in zones of at most --large-cluster-size-threshold nodes.")
	fs.Float64Var(&o.UnhealthyZoneThreshold, "unhealthy-zone-threshold", o.UnhealthyZoneThreshold, "Fraction of not-ready nodes (at least 3) that makes a zone unhealthy.")
	fs.IntVar(&o.LargeClusterSizeThreshold, "large-cluster-size-threshold", o.LargeClusterSizeThreshold, "Zones with more nodes than this use --secondary-node-eviction-rate when unhealthy; smaller ones stop evicting.")
	fs = section("local-path-provisioner controller")
	fs.StringVar(&o.LocalPathRoot, "local-path-root", o.LocalPathRoot, "Directory on every node under which the local-path provisioner makes volumes.")
	fs.StringVar(&o.LocalPathHelperImage, "local-path-helper-image", o.LocalPathHelperImage, "Image of the local-path provisioner's helper pods, which create and remove volume directories; it must be on every node.")
	fs.StringVar(&o.LocalPathNamespace, "local-path-namespace", o.LocalPathNamespace, "Namespace of the local-path provisioner's helper pods.")
	section("persistentvolume-binder controller").DurationVar(&o.PVClaimBinderSyncPeriod, "pvclaimbinder-sync-period", o.PVClaimBinderSyncPeriod, "The period for syncing persistent volumes and persistent volume claims")
	section("podgc controller").IntVar(&o.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", o.TerminatedPodGCThreshold, "Number of terminated pods kept before the pod GC deletes the oldest.")
	o.addConcurrentSyncs(section, "replicaset", "replicationcontroller", "resourcequota")
	section("resourcequota controller").DurationVar(&o.ResourceQuotaSyncPeriod, "resource-quota-sync-period", o.ResourceQuotaSyncPeriod, "The period for syncing quota usage status in the system")
	section("serviceaccount controller").StringVar(&o.RootCAFile, "root-ca-file", o.RootCAFile, "If set, this root certificate authority will be included in service account's token secret. This must be a valid PEM-encoded CA bundle.")
	o.addConcurrentSyncs(section, "statefulset")
}

// addConcurrentSyncs registers the --concurrent-*-syncs flag of each
// controller.
func (o *Options) addConcurrentSyncs(section func(name string) *pflag.FlagSet, controllers ...string) {
	for _, name := range controllers {
		f := concurrentFlags[name]
		section(f.section).Var(syncsValue{o.ConcurrentSyncs, name}, f.flag, fmt.Sprintf("Number of %s objects synced concurrently.", name))
	}
}

// syncsValue is a --concurrent-*-syncs flag: the workers of one controller.
type syncsValue struct {
	syncs      map[string]int
	controller string
}

func (v syncsValue) String() string {
	if v.syncs == nil {
		return "0"
	}
	return strconv.Itoa(v.syncs[v.controller])
}

func (v syncsValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("must be a positive integer")
	}
	v.syncs[v.controller] = n
	return nil
}

func (syncsValue) Type() string { return "int32" }

// Validate checks the values: positive node monitor periods, rates and the
// zone threshold in range, and a cluster CIDR the node mask size fits in
// when node CIDRs are allocated.
func (o *Options) Validate() error {
	var errs []error
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"node-monitor-grace-period", o.NodeMonitorGracePeriod}, {"node-monitor-period", o.NodeMonitorPeriod},
		{"resource-quota-sync-period", o.ResourceQuotaSyncPeriod}, {"pvclaimbinder-sync-period", o.PVClaimBinderSyncPeriod}} {
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
	if !filepath.IsAbs(o.LocalPathRoot) || filepath.Clean(o.LocalPathRoot) == "/" {
		errs = append(errs, fmt.Errorf("--local-path-root must be an absolute path other than /, got %q", o.LocalPathRoot))
	}
	if o.LocalPathHelperImage == "" || o.LocalPathNamespace == "" {
		errs = append(errs, errors.New("--local-path-helper-image and --local-path-namespace must not be empty"))
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
