package hollow

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"net"
	"sync"

	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/pods"
)

// Network is a pod network on paper: SetUp hands out the next free
// address of the node's podCIDR (the network address, the first address —
// the bridge's on a real node — and the last are never handed out), and
// TearDown frees it. Before the node has a podCIDR it uses the fallback
// CIDR it was made with, so pods run where no IPAM controller assigns
// podCIDRs. Nothing is attached to anything.
type Network struct {
	mu   sync.Mutex
	cidr *net.IPNet
	// ips are the addresses in use, by sandbox ID.
	ips  map[string]string
	used map[string]bool
	next uint64
}

var _ pods.Network = (*Network)(nil)

// NewNetwork returns a network handing out addresses of fallback until
// Configure gives the node's podCIDR.
func NewNetwork(fallback string) (*Network, error) {
	_, cidr, err := net.ParseCIDR(fallback)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR %q: %w", fallback, err)
	}
	return &Network{cidr: cidr, ips: map[string]string{}, used: map[string]bool{}}, nil
}

// Ready implements pods.Network: the network is always ready.
func (n *Network) Ready() error { return nil }

// Configure implements pods.Network: later pods get addresses of podCIDR.
func (n *Network) Configure(podCIDR string) error {
	_, cidr, err := net.ParseCIDR(podCIDR)
	if err != nil {
		return fmt.Errorf("pod CIDR %q: %w", podCIDR, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if cidr.String() != n.cidr.String() {
		n.cidr, n.next = cidr, 0
	}
	return nil
}

// CIDR is the range addresses are handed out from.
func (n *Network) CIDR() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cidr.String()
}

// SetUp implements pods.Network: the sandbox's address (the same one again
// for the same sandbox).
func (n *Network) SetUp(_ context.Context, p network.Pod) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ip, ok := n.ips[p.SandboxID]; ok {
		return ip, nil
	}
	ones, bits := n.cidr.Mask.Size()
	hostBits := bits - ones
	if hostBits > 30 {
		hostBits = 30 // a hollow node never runs a billion pods
	}
	size := uint64(1) << hostBits
	if size < 4 {
		return "", fmt.Errorf("pod CIDR %s is too small", n.cidr)
	}
	// Offsets 2 .. size-2: not the network address, the gateway or the
	// broadcast address.
	span := size - 3
	for i := uint64(0); i < span; i++ {
		off := 2 + (n.next+i)%span
		ip := addOffset(n.cidr.IP, off).String()
		if !n.used[ip] {
			n.used[ip], n.ips[p.SandboxID] = true, ip
			n.next = (n.next + i + 1) % span
			return ip, nil
		}
	}
	return "", fmt.Errorf("no free address in pod CIDR %s", n.cidr)
}

// TearDown implements pods.Network: the sandbox's address is free again.
func (n *Network) TearDown(_ context.Context, p network.Pod) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ip, ok := n.ips[p.SandboxID]; ok {
		delete(n.ips, p.SandboxID)
		delete(n.used, ip)
	}
	return nil
}

// InUse is the number of addresses handed out.
func (n *Network) InUse() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.ips)
}

// addOffset is ip + off (IPv4 or IPv6).
func addOffset(ip net.IP, off uint64) net.IP {
	if v4 := ip.To4(); v4 != nil {
		out := make(net.IP, 4)
		binary.BigEndian.PutUint32(out, binary.BigEndian.Uint32(v4)+uint32(off))
		return out
	}
	v := new(big.Int).SetBytes(ip.To16())
	v.Add(v, new(big.Int).SetUint64(off))
	b := v.Bytes()
	out := make(net.IP, 16)
	copy(out[16-len(b):], b)
	return out
}

// NthSubnet is the n-th subnet of prefix length bits in base ("10.128.0.0/10",
// 24, 5 is 10.128.5.0/24): a hollow node's fallback pod CIDR by index.
func NthSubnet(base string, bits, n int) (string, error) {
	_, b, err := net.ParseCIDR(base)
	if err != nil {
		return "", err
	}
	ones, total := b.Mask.Size()
	if bits < ones || bits > total {
		return "", fmt.Errorf("a /%d does not fit in %s", bits, base)
	}
	if bits-ones < 63 && uint64(n) >= uint64(1)<<(bits-ones) {
		return "", fmt.Errorf("%s has fewer than %d /%d subnets", base, n+1, bits)
	}
	off := new(big.Int).Lsh(big.NewInt(int64(n)), uint(total-bits))
	v := new(big.Int).SetBytes(b.IP.To16())
	if b.IP.To4() != nil {
		v = new(big.Int).SetBytes(b.IP.To4())
	}
	v.Add(v, off)
	ip := make(net.IP, len(b.IP))
	raw := v.Bytes()
	copy(ip[len(ip)-len(raw):], raw)
	return (&net.IPNet{IP: ip, Mask: net.CIDRMask(bits, total)}).String(), nil
}
