package proxy

import (
	"fmt"
	"strings"
)

// The proxy modes, kube-proxy's --proxy-mode values this package implements.
const (
	// ModeIPTables programs the nat and filter tables through
	// iptables-restore (kube-proxy's iptables mode, the default).
	ModeIPTables = "iptables"
	// ModeNFTables programs the nf_tables table "kube-proxy" over netlink
	// (kube-proxy's nftables mode).
	ModeNFTables = "nftables"
)

// Modes lists the accepted Config.Mode values, the default first; "" also
// means the default.
var Modes = []string{ModeIPTables, ModeNFTables}

// ValidateMode returns nil for a mode New accepts ("" is the default,
// iptables) and an error naming the accepted ones otherwise.
func ValidateMode(mode string) error {
	if mode == "" {
		return nil
	}
	for _, m := range Modes {
		if mode == m {
			return nil
		}
	}
	return fmt.Errorf("unknown proxy mode %q: want %s", mode, strings.Join(Modes, " or "))
}
