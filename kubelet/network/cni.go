package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
)

// Config configures the CNI manager.
type Config struct {
	// ConfDir is where the conflist is written (/etc/cni/net.d).
	ConfDir string
	// BinDirs hold the plugins (/usr/lib/cni, /opt/cni/bin).
	BinDirs []string
	// StateDir keeps libcni's result cache and host-local's leases.
	StateDir string
	// NetworkName names the network ("minik8s"), BridgeName the bridge
	// ("cni0"), ConfFile the conflist file ("10-minik8s.conflist").
	NetworkName, BridgeName, ConfFile string
	// ClusterCIDR is the pod network of the whole cluster (kube's
	// --cluster-cidr). When set, the bridge does not masquerade per pod;
	// Configure installs one node rule instead that masquerades only
	// traffic leaving ClusterCIDR, so pods on different nodes see each
	// other's own addresses (no NAT between pods). Empty keeps the bridge
	// plugin's per-pod masquerade of everything off the node's pod CIDR.
	ClusterCIDR string
	Logger      *slog.Logger
}

// PortMapping is a hostPort of a pod, for the portmap plugin.
type PortMapping struct {
	HostPort      int32  `json:"hostPort"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// Pod identifies the pod an attachment is for.
type Pod struct {
	Namespace, Name, UID string
	// SandboxID is the CNI container ID.
	SandboxID string
	NetNS     string
	Ports     []PortMapping
}

// Manager adds pods to and removes them from the node's pod network.
type Manager struct {
	cfg  Config
	cni  *libcni.CNIConfig
	lo   *libcni.NetworkConfigList
	mu   sync.RWMutex
	net  *libcni.NetworkConfigList
	cidr string
}

// New returns a manager; the network exists once Configure has run.
func New(cfg Config) (*Manager, error) {
	if cfg.ConfDir == "" {
		cfg.ConfDir = "/etc/cni/net.d"
	}
	if len(cfg.BinDirs) == 0 {
		cfg.BinDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}
	}
	if cfg.StateDir == "" {
		cfg.StateDir = "/var/lib/kubelet/cni"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.NetworkName == "" {
		cfg.NetworkName = "minik8s"
	}
	if cfg.BridgeName == "" {
		cfg.BridgeName = "cni0"
	}
	if cfg.ConfFile == "" {
		cfg.ConfFile = "10-" + cfg.NetworkName + ".conflist"
	}
	lo, err := libcni.ConfListFromBytes([]byte(`{"cniVersion":"1.0.0","name":"cni-loopback","plugins":[{"type":"loopback"}]}`))
	if err != nil {
		return nil, err
	}
	// An explicit exec: libcni would otherwise create one lazily, racing
	// between concurrent pod set-ups.
	exec := &invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: os.Stderr}, PluginDecoder: version.PluginDecoder{}}
	return &Manager{cfg: cfg, cni: libcni.NewCNIConfigWithCacheDir(cfg.BinDirs, filepath.Join(cfg.StateDir, "cache"), exec), lo: lo}, nil
}

// Conflist renders the node's network configuration for podCIDR.
func (m *Manager) Conflist(podCIDR string) ([]byte, error) {
	ip, ipnet, err := net.ParseCIDR(podCIDR)
	if err != nil || ip.To4() == nil {
		return nil, fmt.Errorf("pod CIDR %q: want an IPv4 CIDR", podCIDR)
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       m.cfg.NetworkName,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": m.cfg.BridgeName, "isGateway": true, "ipMasq": m.cfg.ClusterCIDR == "", "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": ipnet.String()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": filepath.Join(m.cfg.StateDir, "networks"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}, "snat": true},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// Configure writes the conflist for podCIDR into ConfDir and loads it.
func (m *Manager) Configure(podCIDR string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.net != nil && m.cidr == podCIDR {
		return nil
	}
	b, err := m.Conflist(podCIDR)
	if err != nil {
		return err
	}
	list, err := libcni.ConfListFromBytes(b)
	if err != nil {
		return fmt.Errorf("parse conflist: %w", err)
	}
	if m.cfg.ClusterCIDR != "" {
		if err := ensureMasquerade(podCIDR, m.cfg.ClusterCIDR); err != nil {
			return err
		}
	}
	gw, err := gateway(podCIDR)
	if err != nil {
		return err
	}
	stale, err := repairBridge(m.cfg.BridgeName, gw)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		m.cfg.Logger.Warn("deleted the pod bridge: it had addresses outside this node's pod CIDR; pods recreate it",
			"bridge", m.cfg.BridgeName, "addresses", stale, "podCIDR", podCIDR, "gateway", gw.String())
	}
	if err := os.MkdirAll(m.cfg.ConfDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(m.cfg.ConfDir, m.cfg.ConfFile)
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	m.net, m.cidr = list, podCIDR
	return nil
}

// Ready reports whether the pod network is configured.
func (m *Manager) Ready() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.net == nil {
		return errors.New("network plugin not ready: cni config uninitialized (node has no podCIDR yet)")
	}
	return nil
}

func (m *Manager) rt(p Pod, ifname string) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: p.SandboxID,
		NetNS:       p.NetNS,
		IfName:      ifname,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", p.Namespace},
			{"K8S_POD_NAME", p.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", p.SandboxID},
			{"K8S_POD_UID", p.UID},
		},
	}
	if len(p.Ports) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": p.Ports}
	}
	return rt
}

// SetUp attaches the pod's network namespace (loopback up, eth0 on the
// bridge) and returns its IP.
func (m *Manager) SetUp(ctx context.Context, p Pod) (string, error) {
	m.mu.RLock()
	list := m.net
	m.mu.RUnlock()
	if list == nil {
		return "", m.Ready()
	}
	if _, err := m.cni.AddNetworkList(ctx, m.lo, m.rt(p, "lo")); err != nil {
		return "", fmt.Errorf("cni loopback: %w", err)
	}
	res, err := m.cni.AddNetworkList(ctx, list, m.rt(p, "eth0"))
	if err != nil {
		return "", fmt.Errorf("plugin type=\"bridge\" name=%q failed (add): %w", m.cfg.NetworkName, err)
	}
	cur, err := types100.NewResultFromResult(res)
	if err != nil {
		return "", err
	}
	for _, ip := range cur.IPs {
		if ip.Address.IP.To4() != nil {
			return ip.Address.IP.String(), nil
		}
	}
	return "", errors.New("cni returned no IPv4 address")
}

// TearDown removes the pod's attachment; it works with an empty NetNS (the
// sandbox already gone) so leases and iptables rules are still released.
func (m *Manager) TearDown(ctx context.Context, p Pod) error {
	m.mu.RLock()
	list := m.net
	m.mu.RUnlock()
	if list == nil {
		return nil
	}
	if err := m.cni.DelNetworkList(ctx, list, m.rt(p, "eth0")); err != nil {
		return fmt.Errorf("cni del: %w", err)
	}
	_ = m.cni.DelNetworkList(ctx, m.lo, m.rt(p, "lo"))
	return nil
}
