package network

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// gateway is the bridge address the bridge plugin gives a node whose pods
// are in podCIDR (isGateway: the subnet's first address).
func gateway(podCIDR string) (*net.IPNet, error) {
	ip, ipnet, err := net.ParseCIDR(podCIDR)
	if err != nil || ip.To4() == nil {
		return nil, fmt.Errorf("pod CIDR %q: want an IPv4 CIDR", podCIDR)
	}
	gw := make(net.IP, len(ipnet.IP.To4()))
	copy(gw, ipnet.IP.To4())
	gw[3]++
	return &net.IPNet{IP: gw, Mask: ipnet.Mask}, nil
}

// repairBridge deletes the bridge when it carries an IPv4 address other
// than gw: left by a node that re-joined with another podCIDR or by
// another kubelet that ran on this host before. The bridge plugin refuses
// such a bridge on every pod ("already has an IP address different
// from"), forever; deleted, it is recreated with gw on the next pod. Pods
// attached to the old bridge were on the old range and move to new
// sandboxes. It reports the addresses it found when it deleted the bridge.
func repairBridge(name string, gw *net.IPNet) ([]string, error) {
	link, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil, nil
		}
		return nil, fmt.Errorf("bridge %s: %w", name, err)
	}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("addresses of bridge %s: %w", name, err)
	}
	var stale []string
	for _, a := range addrs {
		if a.IPNet.String() != gw.String() {
			stale = append(stale, a.IPNet.String())
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	if err := netlink.LinkDel(link); err != nil {
		return stale, fmt.Errorf("delete bridge %s with stale addresses %v: %w", name, stale, err)
	}
	return stale, nil
}
