package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/kubelet/proxy"
)

// Defaults of kube-proxy's flags (cmd/kube-proxy/app/options.go and the
// v1alpha1 KubeProxyConfiguration defaults).
const (
	DefaultHealthzBindAddress = "0.0.0.0:10256"
	DefaultMetricsBindAddress = "127.0.0.1:10249"
	DefaultMinSyncPeriod      = time.Second
	DefaultSyncPeriod         = 30 * time.Second
)

// ProxyModes are the --proxy-mode values: the service proxy's
// (kubelet/proxy), the default first; "" is the default, iptables.
var ProxyModes = proxy.Modes

// Options are kube-proxy's flags.
type Options struct {
	Client daemon.ClientOptions
	// HostnameOverride is the Node this kube-proxy runs on; empty: the
	// host's name, lowercased, as kube-proxy assumes.
	HostnameOverride string
	ProxyMode        string
	// ClusterCIDR is the pods' range: service traffic from outside it is
	// masqueraded. Empty: all service traffic is.
	ClusterCIDR string
	// MinSyncPeriod bounds how often rules are rewritten while changes
	// keep coming; SyncPeriod is the periodic resync, and twice it the
	// time a queued change may wait before /healthz reports unhealthy.
	MinSyncPeriod, SyncPeriod time.Duration
	// HealthzBindAddress serves /healthz and /livez (empty: none);
	// MetricsBindAddress serves /metrics (empty: none).
	HealthzBindAddress, MetricsBindAddress string
	// RunFirewall runs the NetworkPolicy enforcer (kube-router's flag);
	// false removes the rules a previous run left.
	RunFirewall bool
	// PodRoutes keeps host-gateway routes to the other nodes' pod CIDRs.
	PodRoutes bool
	// Cleanup removes the rules kube-proxy made and exits (--cleanup).
	Cleanup bool
}

// DefaultOptions are kube-proxy's defaults (client QPS 5, burst 10), with
// the NetworkPolicy enforcer and the pod routes on.
func DefaultOptions() Options {
	return Options{
		Client:             daemon.ClientOptions{QPS: 5, Burst: 10},
		MinSyncPeriod:      DefaultMinSyncPeriod,
		SyncPeriod:         DefaultSyncPeriod,
		HealthzBindAddress: DefaultHealthzBindAddress,
		MetricsBindAddress: DefaultMetricsBindAddress,
		RunFirewall:        true,
		PodRoutes:          true,
	}
}

// AddFlags registers the flags, by --help section.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	o.Client.AddFlags(fss.FlagSet("misc"))
	fs := fss.FlagSet("proxy")
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "If non-empty, will be used as the name of the Node that kube-proxy is running on. If unset, the node name is assumed to be the same as the node's hostname.")
	fs.StringVar(&o.ProxyMode, "proxy-mode", o.ProxyMode, "Which proxy mode to use: "+quoted(ProxyModes)+"; empty: "+ProxyModes[0]+".")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "The CIDR range of the pods in the cluster: service traffic from outside it is masqueraded. Empty: all service traffic is masqueraded.")
	fs.DurationVar(&o.SyncPeriod, "iptables-sync-period", o.SyncPeriod, "An interval (e.g. '5s', '1m', '2h22m') indicating how frequently various re-synchronizing and cleanup operations are performed. Must be greater than 0.")
	fs.DurationVar(&o.MinSyncPeriod, "iptables-min-sync-period", o.MinSyncPeriod, "The minimum period between iptables rule resyncs (e.g. '5s', '1m', '2h22m'). A value of 0 means every Service or EndpointSlice change will result in an immediate iptables resync.")
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", o.HealthzBindAddress, "The IP address and port for the health check server to serve on (/healthz, /livez). Empty: no health check server.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "The IP address and port for the metrics server to serve on. (Set to \"0.0.0.0:10249\" to bind on all interfaces.) Empty: no metrics server.")
	fs.BoolVar(&o.Cleanup, "cleanup", o.Cleanup, "If true cleanup iptables rules and exit.")
	fs = fss.FlagSet("network")
	fs.BoolVar(&o.RunFirewall, "run-firewall", o.RunFirewall, "Enforce NetworkPolicies on this node's pods with iptables (kube-router's flag); needs credentials that read every Pod, Namespace and NetworkPolicy (minik8s:network-policy-agent, bound to system:kube-proxy). false removes the rules a previous run left.")
	fs.BoolVar(&o.PodRoutes, "pod-routes", o.PodRoutes, "Keep routes to the other nodes' spec.podCIDR via their InternalIP (host-gateway pod networking); reads every Node.")
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

// Validate checks the flag values; it reads no file.
func (o *Options) Validate() error {
	errs := []error{o.Client.Validate()}
	if err := proxy.ValidateMode(o.ProxyMode); err != nil {
		errs = append(errs, fmt.Errorf("--proxy-mode: %w", err))
	}
	if o.ClusterCIDR != "" {
		if _, _, err := net.ParseCIDR(o.ClusterCIDR); err != nil {
			errs = append(errs, fmt.Errorf("--cluster-cidr %q is not a CIDR", o.ClusterCIDR))
		}
	}
	if o.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--iptables-sync-period must be greater than 0, got %v", o.SyncPeriod))
	}
	if o.MinSyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("--iptables-min-sync-period must be >= 0, got %v", o.MinSyncPeriod))
	}
	if o.HostnameOverride != "" {
		if msgs := naming.IsDNS1123Subdomain(strings.ToLower(strings.TrimSpace(o.HostnameOverride))); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--hostname-override %q: %s", o.HostnameOverride, strings.Join(msgs, "; ")))
		}
	}
	for _, a := range []struct{ flag, v string }{{"healthz-bind-address", o.HealthzBindAddress}, {"metrics-bind-address", o.MetricsBindAddress}} {
		if a.v != "" {
			if err := validateIPPort(a.v); err != nil {
				errs = append(errs, fmt.Errorf("--%s %q: %w", a.flag, a.v, err))
			}
		}
	}
	if o.HealthzBindAddress != "" && o.HealthzBindAddress == o.MetricsBindAddress {
		errs = append(errs, fmt.Errorf("--healthz-bind-address and --metrics-bind-address must differ, both are %s", o.HealthzBindAddress))
	}
	return errors.Join(errs...)
}

// validateIPPort checks an IP:port, as kube's IPPortVar.
func validateIPPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return errors.New("want IP:port")
	}
	if net.ParseIP(host) == nil {
		return fmt.Errorf("%q is not an IP address", host)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q must be in [0, 65535]", port)
	}
	return nil
}

// NodeName is --hostname-override, else the host's name, lowercased and
// trimmed as kube-proxy does.
func (o *Options) NodeName() (string, error) {
	name := o.HostnameOverride
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("no --hostname-override and no hostname: %w", err)
		}
		name = h
	}
	return strings.ToLower(strings.TrimSpace(name)), nil
}

// mode is the proxy mode in effect.
func (o *Options) mode() string {
	if o.ProxyMode == "" {
		return ProxyModes[0]
	}
	return o.ProxyMode
}
