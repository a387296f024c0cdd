package naming

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

const (
	ipInvalidMsg   = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
	cidrInvalidMsg = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
)

// parseIPSloppy parses an IP the way Kubernetes' legacy fields always have
// (Go 1.16's net.ParseIP): IPv4 octets may carry leading zeros, which are
// read as decimal. It reports whether such zeros were present. Zones
// ("fe80::1%eth0") are not IP addresses here.
func parseIPSloppy(value string) (addr netip.Addr, leadingZeros, ok bool) {
	if a, err := netip.ParseAddr(value); err == nil {
		return a, false, a.Zone() == ""
	}
	fixed, changed := stripIPv4LeadingZeros(value)
	if !changed {
		return netip.Addr{}, false, false
	}
	a, err := netip.ParseAddr(fixed)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false, false
	}
	return a, true, true
}

// stripIPv4LeadingZeros rewrites the dotted-quad part of value (the whole
// value, or the tail of an IPv6 address after its last ':') with leading
// zeros removed from each octet.
func stripIPv4LeadingZeros(value string) (string, bool) {
	head, quad := "", value
	if i := strings.LastIndexByte(value, ':'); i >= 0 {
		head, quad = value[:i+1], value[i+1:]
	}
	parts := strings.Split(quad, ".")
	if len(parts) != 4 {
		return value, false
	}
	changed := false
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return value, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 {
			return value, false
		}
		if s := strconv.Itoa(n); s != p {
			parts[i], changed = s, true
		}
	}
	return head + strings.Join(parts, "."), changed
}

func ipProblems(value string, strict bool) (netip.Addr, []string) {
	addr, zeros, ok := parseIPSloppy(value)
	if !ok {
		return addr, []string{ipInvalidMsg}
	}
	var errs []string
	if strict {
		if zeros {
			errs = append(errs, "must not have leading 0s")
		}
		if addr.Is4In6() {
			errs = append(errs, "must not be an IPv4-mapped IPv6 address")
		}
	}
	return addr, errs
}

// IsValidIP tests for an IP address under current Kubernetes rules: no
// leading zeros, no IPv4-mapped IPv6, and canonical form ("fe80::abc", not
// "FE80:0:0:0:0:0:0:0abc").
func IsValidIP(value string) []string {
	addr, errs := ipProblems(value, true)
	if len(errs) > 0 {
		return errs
	}
	if c := addr.String(); c != value {
		return []string{fmt.Sprintf("must be in canonical form (%q)", c)}
	}
	return nil
}

// IsValidIPForLegacyField tests an IP in a field that predates strict
// validation (pod and host IPs, service clusterIPs): non-canonical forms are
// accepted; with strict set, leading zeros and IPv4-mapped IPv6 are not.
func IsValidIPForLegacyField(value string, strict bool) []string {
	_, errs := ipProblems(value, strict)
	return errs
}

func cidrProblems(value string, strict bool) (netip.Prefix, []string) {
	ipPart, bitsPart, found := strings.Cut(value, "/")
	if !found || bitsPart == "" || strings.TrimLeft(bitsPart, "0123456789") != "" {
		return netip.Prefix{}, []string{cidrInvalidMsg}
	}
	addr, zeros, ok := parseIPSloppy(ipPart)
	bits, err := strconv.Atoi(bitsPart)
	if !ok || err != nil {
		return netip.Prefix{}, []string{cidrInvalidMsg}
	}
	if len(bitsPart) > 1 && bitsPart[0] == '0' {
		zeros = true
	}
	// Like net.ParseCIDR, an IPv4-mapped address takes an IPv6 prefix length.
	prefix, err := addr.Prefix(bits)
	if err != nil || bits > addr.BitLen() {
		return netip.Prefix{}, []string{cidrInvalidMsg}
	}
	if !strict {
		return prefix, nil
	}
	switch {
	case zeros:
		return prefix, []string{"must not have leading 0s in IP or prefix length"}
	case addr.Is4In6():
		return prefix, []string{"must not have an IPv4-mapped IPv6 address"}
	case addr != prefix.Addr():
		return prefix, []string{"must not have bits set beyond the prefix length"}
	}
	return prefix, nil
}

// IsValidCIDR tests for a subnet-style CIDR ("10.0.0.0/8") under current
// Kubernetes rules: no bits beyond the prefix length, canonical form.
func IsValidCIDR(value string) []string {
	prefix, errs := cidrProblems(value, true)
	if len(errs) > 0 {
		return errs
	}
	if c := prefix.String(); c != value {
		return []string{fmt.Sprintf("must be in canonical form (%q)", c)}
	}
	return nil
}

// IsValidCIDRForLegacyField tests a CIDR in a field that predates strict
// validation (node podCIDRs); without strict, interface-style values such as
// "10.0.0.5/8" and leading zeros are accepted.
func IsValidCIDRForLegacyField(value string, strict bool) []string {
	_, errs := cidrProblems(value, strict)
	return errs
}
