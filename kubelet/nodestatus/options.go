package nodestatus

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/spf13/pflag"
)

// Options are the kubelet's node flags, named as the Kubernetes kubelet's.
// The app turns them into a Config with Config().
type Options struct {
	HostnameOverride   string
	NodeIP             string
	NodeLabels         string
	RegisterWithTaints string
	MaxPods            int
	SystemReserved     string
	KubeReserved       string
	EvictionHard       string
	// NodeStatusUpdateFrequency is how often the status is computed and
	// written if it changed; NodeStatusReportFrequency how often it is
	// written even when it did not.
	NodeStatusUpdateFrequency time.Duration
	NodeStatusReportFrequency time.Duration
	NodeLeaseDurationSeconds  int
}

// DefaultOptions are the kubelet's defaults (report frequency 1m, as the
// issue asks; Kubernetes uses 5m since 1.19).
func DefaultOptions() Options {
	return Options{
		MaxPods:                   110,
		EvictionHard:              "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%",
		NodeStatusUpdateFrequency: 10 * time.Second,
		NodeStatusReportFrequency: time.Minute,
		NodeLeaseDurationSeconds:  40,
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "if non-empty, use this string as the node name instead of the actual hostname")
	fs.StringVar(&o.NodeIP, "node-ip", o.NodeIP, "IP address of the node (default: the address of the default route's interface)")
	fs.StringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "labels to add when registering the node: key=value,key2=value2")
	fs.StringVar(&o.RegisterWithTaints, "register-with-taints", o.RegisterWithTaints, "register the node with the given taints: key=value:Effect,key2:Effect")
	fs.IntVar(&o.MaxPods, "max-pods", o.MaxPods, "number of pods that can run on this kubelet")
	fs.StringVar(&o.SystemReserved, "system-reserved", o.SystemReserved, "resources reserved for the system: cpu=200m,memory=500Mi,ephemeral-storage=1Gi")
	fs.StringVar(&o.KubeReserved, "kube-reserved", o.KubeReserved, "resources reserved for Kubernetes components: cpu=200m,memory=500Mi,ephemeral-storage=1Gi")
	fs.StringVar(&o.EvictionHard, "eviction-hard", o.EvictionHard, "hard eviction thresholds: memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<1000")
	fs.DurationVar(&o.NodeStatusUpdateFrequency, "node-status-update-frequency", o.NodeStatusUpdateFrequency, "how often the kubelet computes the node status and writes it if it changed")
	fs.DurationVar(&o.NodeStatusReportFrequency, "node-status-report-frequency", o.NodeStatusReportFrequency, "how often the kubelet writes the node status even if it did not change")
	fs.IntVar(&o.NodeLeaseDurationSeconds, "node-lease-duration-seconds", o.NodeLeaseDurationSeconds, "duration of the node Lease; it is renewed every quarter of it")
}

// Validate checks every node flag: what Config parses, and the ranges of
// the numbers and periods.
func (o *Options) Validate() error {
	var errs []error
	if _, err := o.Config(); err != nil {
		errs = append(errs, err)
	}
	if o.MaxPods < 1 {
		errs = append(errs, fmt.Errorf("--max-pods must be positive, got %d", o.MaxPods))
	}
	if o.NodeStatusUpdateFrequency <= 0 {
		errs = append(errs, fmt.Errorf("--node-status-update-frequency must be positive, got %v", o.NodeStatusUpdateFrequency))
	}
	if o.NodeStatusReportFrequency <= 0 {
		errs = append(errs, fmt.Errorf("--node-status-report-frequency must be positive, got %v", o.NodeStatusReportFrequency))
	}
	if o.NodeLeaseDurationSeconds < 1 {
		errs = append(errs, fmt.Errorf("--node-lease-duration-seconds must be positive, got %d", o.NodeLeaseDurationSeconds))
	}
	return errors.Join(errs...)
}

// Config fills the node part of a Config from the options; the app adds
// Client, RootDir, RuntimeVersion, RuntimeHealthy, KubeletPort, Recorder
// and Logger.
func (o *Options) Config() (Config, error) {
	var c Config
	var err error
	if c.NodeName, err = NodeName(o.HostnameOverride); err != nil {
		return c, err
	}
	c.Hostname = c.NodeName
	if ip := net.ParseIP(c.NodeName); ip != nil && o.NodeIP == "" {
		// A --hostname-override that is an IP is the node IP, as in the kubelet.
		c.NodeIP = ip
	}
	if o.NodeIP != "" {
		if c.NodeIP = net.ParseIP(o.NodeIP); c.NodeIP == nil {
			return c, fmt.Errorf("--node-ip %q is not an IP address", o.NodeIP)
		}
	}
	if c.Labels, err = ParseLabels(o.NodeLabels); err != nil {
		return c, fmt.Errorf("--node-labels: %w", err)
	}
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if !IsKubeletLabel(k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		// The kubelet's own check: NodeRestriction would refuse them anyway.
		return c, fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n"+
			"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) "+
			"or be in the specifically allowed set (%s)", bad, strings.Join(kubeletLabels, ", "))
	}
	if c.Taints, err = ParseTaints(o.RegisterWithTaints); err != nil {
		return c, fmt.Errorf("--register-with-taints: %w", err)
	}
	c.MaxPods = o.MaxPods
	if c.SystemReserved, err = ParseResourceList(o.SystemReserved); err != nil {
		return c, fmt.Errorf("--system-reserved: %w", err)
	}
	if c.KubeReserved, err = ParseResourceList(o.KubeReserved); err != nil {
		return c, fmt.Errorf("--kube-reserved: %w", err)
	}
	if c.EvictionHard, err = ParseThresholds(o.EvictionHard); err != nil {
		return c, fmt.Errorf("--eviction-hard: %w", err)
	}
	c.StatusUpdateFrequency = o.NodeStatusUpdateFrequency
	c.StatusReportFrequency = o.NodeStatusReportFrequency
	c.LeaseDuration = time.Duration(o.NodeLeaseDurationSeconds) * time.Second
	c.LeaseRenewInterval = c.LeaseDuration / 4
	return c, nil
}

// NodeName is the kubelet's node name: override, else the host name,
// lowercased and trimmed as the kubelet does.
func NodeName(override string) (string, error) {
	name := override
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("get the host name: %w", err)
		}
		name = h
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return "", fmt.Errorf("empty node name")
	}
	return name, nil
}

// kubeletLabels are the labels in the kubernetes.io namespace a kubelet may
// set on its own Node (k8s.io/kubelet's IsKubeletLabel).
var kubeletLabels = []string{
	api.LabelHostname, api.LabelTopologyZone, api.LabelTopologyRegion,
	"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
	"beta.kubernetes.io/instance-type", api.LabelInstanceTypeStable,
	api.LabelOSStable, api.LabelArchStable, labelOSBeta, labelArchBeta,
}

// IsKubeletLabel tells whether a kubelet may set label key on its Node:
// keys outside the kubernetes.io and k8s.io namespaces, those in
// kubeletLabels, and those under kubelet.kubernetes.io or node.kubernetes.io.
func IsKubeletLabel(key string) bool {
	if slices.Contains(kubeletLabels, key) {
		return true
	}
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return true
	}
	ns = strings.ToLower(ns)
	for _, allowed := range []string{"kubelet.kubernetes.io", "node.kubernetes.io"} {
		if ns == allowed || strings.HasSuffix(ns, "."+allowed) {
			return true
		}
	}
	for _, reserved := range []string{"kubernetes.io", "k8s.io"} {
		if ns == reserved || strings.HasSuffix(ns, "."+reserved) {
			return false
		}
	}
	return true
}

// ParseLabels parses "k=v,k2=v2".
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid label %q: want key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

// ParseTaints parses "key=value:Effect,key:Effect".
func ParseTaints(s string) ([]api.Taint, error) {
	var out []api.Taint
	for _, spec := range splitList(s) {
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("invalid taint spec %q: want key=value:Effect", spec)
		}
		switch api.TaintEffect(effect) {
		case api.TaintEffectNoSchedule, api.TaintEffectPreferNoSchedule, api.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("invalid taint effect %q in %q: want NoSchedule, PreferNoSchedule or NoExecute", effect, spec)
		}
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			return nil, fmt.Errorf("invalid taint spec %q: empty key", spec)
		}
		out = append(out, api.Taint{Key: k, Value: v, Effect: api.TaintEffect(effect)})
	}
	return out, nil
}

// ParseResourceList parses "cpu=100m,memory=1Gi".
func ParseResourceList(s string) (api.ResourceList, error) {
	out := api.ResourceList{}
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("invalid resource %q: want name=quantity", kv)
		}
		switch api.ResourceName(k) {
		case api.ResourceCPU, api.ResourceMemory, api.ResourceEphemeralStorage, api.ResourcePods:
		default:
			return nil, fmt.Errorf("unsupported resource %q: want cpu, memory, ephemeral-storage or pods", k)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", k, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("resource %s: negative quantity %s", k, v)
		}
		out[api.ResourceName(k)] = q
	}
	return out, nil
}

// ParseThresholds parses --eviction-hard: "signal<quantity" or
// "signal<N%" items. Signals not named keep a zero (disabled) threshold, as
// when a user sets --eviction-hard in kube.
func ParseThresholds(s string) (Thresholds, error) {
	var t Thresholds
	for _, item := range splitList(s) {
		sig, val, ok := strings.Cut(item, "<")
		if !ok {
			return t, fmt.Errorf("invalid threshold %q: want signal<value", item)
		}
		pct := strings.HasSuffix(val, "%")
		var p float64
		var q resource.Quantity
		var err error
		if pct {
			p, err = strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
			if err == nil && (p < 0 || p > 100) {
				err = fmt.Errorf("percentage out of range")
			}
		} else {
			q, err = resource.ParseQuantity(val)
		}
		if err != nil {
			return t, fmt.Errorf("threshold %q: %w", item, err)
		}
		switch sig {
		case "memory.available":
			if pct {
				return t, fmt.Errorf("threshold %q: a percentage of memory is not supported", item)
			}
			t.MemoryAvailable = q.Value()
		case "nodefs.available":
			if !pct {
				return t, fmt.Errorf("threshold %q: give nodefs.available in percent", item)
			}
			t.NodeFsAvailablePercent = p
		case "nodefs.inodesFree":
			if !pct {
				return t, fmt.Errorf("threshold %q: give nodefs.inodesFree in percent", item)
			}
			t.NodeFsInodesFreePercent = p
		case "pid.available":
			if pct {
				return t, fmt.Errorf("threshold %q: give pid.available as a number", item)
			}
			t.PIDAvailable = q.Value()
		case "imagefs.available", "imagefs.inodesFree":
			// The image filesystem is containerd's; its pressure is not reported here.
		default:
			return t, fmt.Errorf("unknown eviction signal %q", sig)
		}
	}
	return t, nil
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
