package nodestatus

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

// DefaultRouteInterface returns the interface of the IPv4 default route
// (destination 0.0.0.0/0 with the lowest metric) in /proc/net/route.
func DefaultRouteInterface(routeFile string) (string, error) {
	f, err := os.Open(routeFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return parseDefaultRoute(f)
}

// parseDefaultRoute reads /proc/net/route: "Iface Destination Gateway Flags
// RefCnt Use Metric Mask ..." in hex, little-endian.
func parseDefaultRoute(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	best, bestMetric := "", int64(-1)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue // header
		}
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue
		}
		if f[1] != "00000000" || f[7] != "00000000" {
			continue
		}
		var flags, metric int64
		fmt.Sscanf(f[3], "%x", &flags)
		fmt.Sscanf(f[6], "%d", &metric)
		const rtfUp = 0x1
		if flags&rtfUp == 0 {
			continue
		}
		if bestMetric < 0 || metric < bestMetric {
			best, bestMetric = f[0], metric
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if best == "" {
		return "", errors.New("no default route")
	}
	return best, nil
}

// interfaceAddrs lists the addresses of the named interface.
type interfaceAddrs func(name string) ([]net.Addr, error)

func systemInterfaceAddrs(name string) ([]net.Addr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	return ifi.Addrs()
}

// chooseIP picks the node's InternalIP: nodeIP when given, else the first
// global unicast IPv4 (then IPv6) address of the default route's interface.
func chooseIP(nodeIP net.IP, routeFile string, addrs interfaceAddrs) (net.IP, error) {
	if nodeIP != nil && !nodeIP.IsUnspecified() {
		return nodeIP, nil
	}
	iface, err := DefaultRouteInterface(routeFile)
	if err != nil {
		return nil, fmt.Errorf("find the node IP (set --node-ip): %w", err)
	}
	as, err := addrs(iface)
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", iface, err)
	}
	var v6 net.IP
	for _, a := range as {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if ip == nil || !ip.IsGlobalUnicast() {
			continue
		}
		if ip4 := ip.To4(); ip4 != nil {
			return ip4, nil
		}
		if v6 == nil {
			v6 = ip
		}
	}
	if v6 != nil {
		return v6, nil
	}
	return nil, fmt.Errorf("interface %s of the default route has no usable address (set --node-ip)", iface)
}
