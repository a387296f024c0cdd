package network

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// masqChain holds the node's one masquerade rule for its pods' outbound
// traffic, in the nat table, jumped to from POSTROUTING.
const masqChain = "MINIK8S-POD-MASQ"

const masqComment = "minik8s: SNAT for outbound traffic from pods"

// masqueradeRules is the iptables-restore input that makes masqChain hold
// exactly the rule for podCIDR: traffic from this node's pods leaving the
// cluster's pod network, and not for an address of the node itself, leaves
// with the node's address (kubenet's rule). Traffic between pods, on this
// node or another, keeps the pods' own addresses.
func masqueradeRules(podCIDR, clusterCIDR string) []byte {
	var b bytes.Buffer
	b.WriteString("*nat\n")
	fmt.Fprintf(&b, ":%s - [0:0]\n", masqChain)
	fmt.Fprintf(&b, "-A %s -s %s ! -d %s -m addrtype ! --dst-type LOCAL -m comment --comment %q -j MASQUERADE\n",
		masqChain, podCIDR, clusterCIDR, masqComment)
	b.WriteString("COMMIT\n")
	return b.Bytes()
}

// ensureMasquerade installs the node's masquerade rule for podCIDR,
// replacing one for an earlier CIDR; idempotent, and safe across kubelet
// restarts (the rule stays when the kubelet stops, as the pods do).
func ensureMasquerade(podCIDR, clusterCIDR string) error {
	if _, _, err := net.ParseCIDR(clusterCIDR); err != nil {
		return fmt.Errorf("cluster CIDR %q: %w", clusterCIDR, err)
	}
	// --noflush leaves every other chain alone; the declared chain is
	// created or emptied, so the new rule replaces the old in one commit.
	restore := exec.Command("iptables-restore", "--noflush", "--wait")
	restore.Stdin = bytes.NewReader(masqueradeRules(podCIDR, clusterCIDR))
	if out, err := restore.CombinedOutput(); err != nil {
		return fmt.Errorf("iptables-restore %s: %w: %s", masqChain, err, strings.TrimSpace(string(out)))
	}
	jump := []string{"POSTROUTING", "-m", "comment", "--comment", masqComment, "-j", masqChain}
	check := append([]string{"--wait", "-t", "nat", "-C"}, jump...)
	if exec.Command("iptables", check...).Run() == nil {
		return nil
	}
	add := append([]string{"--wait", "-t", "nat", "-A"}, jump...)
	if out, err := exec.Command("iptables", add...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(add, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// RemoveMasquerade deletes the node's masquerade rule and chain (for a node
// that leaves, and for tests); missing ones are not an error.
func RemoveMasquerade() error {
	_ = exec.Command("iptables", "--wait", "-t", "nat", "-D", "POSTROUTING", "-m", "comment", "--comment", masqComment, "-j", masqChain).Run()
	_ = exec.Command("iptables", "--wait", "-t", "nat", "-F", masqChain).Run()
	_ = exec.Command("iptables", "--wait", "-t", "nat", "-X", masqChain).Run()
	out, err := exec.Command("iptables", "--wait", "-t", "nat", "-S", masqChain).CombinedOutput()
	if err == nil {
		return fmt.Errorf("chain %s still present: %s", masqChain, out)
	}
	return nil
}
