package netpol

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Chains in the filter table. The per-pod, peer and block chains end in a
// 16-character hash, as kube-proxy's KUBE-SVC-* do; iptables allows 28
// characters.
const (
	chainTop = "MINIK8S-NETPOL"
	// chainPrefix starts every chain of ours but chainTop.
	chainPrefix = "MINIK8S-NP"
	// podIngressPrefix and podEgressPrefix: one chain per isolated pod and
	// direction, ending in REJECT.
	podIngressPrefix = "MINIK8S-NPI-"
	podEgressPrefix  = "MINIK8S-NPE-"
	// peerPrefix: a set of peers; a match sets allowMark.
	peerPrefix = "MINIK8S-NPP-"
	// blockPrefix: one ipBlock with except entries.
	blockPrefix = "MINIK8S-NPB-"
	// allowMark is the packet mark bit a peer chain sets when it matches
	// (kube-proxy uses 0x4000 and 0x8000; kube-router 0x10000 too, for
	// the same purpose). The top chain clears it again.
	allowMark = "0x10000"
)

// jump sends traffic from a built-in filter chain to ours.
type jump struct {
	chain string
	args  []string
}

// jumps are ensured on every full sync. FORWARD carries pod-to-pod traffic
// (bridged on the node through br_netfilter, or routed between nodes) and
// pod traffic to and from outside; INPUT a pod's traffic to its own node.
// OUTPUT is left alone: the node may always reach its pods.
var jumps = []jump{
	{"FORWARD", []string{"-m", "comment", "--comment", "minik8s network policies", "-j", chainTop}},
	{"INPUT", []string{"-m", "comment", "--comment", "minik8s network policies", "-j", chainTop}},
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:16]
}

// render is the filter table input for iptables-restore: every chain of
// ours declared (which flushes it), its rules, and the chains of existing
// (ours, present now) no longer wanted flushed and deleted. live lists
// the chains it leaves.
func render(pods []PodRules, existing []string) (data []byte, live []string) {
	var chains []string
	body := map[string][]string{}
	add := func(chain string, rule ...string) {
		if _, ok := body[chain]; !ok {
			chains = append(chains, chain)
		}
		body[chain] = append(body[chain], "-A "+chain+" "+strings.Join(rule, " "))
	}
	declare := func(chain string) bool {
		if _, ok := body[chain]; ok {
			return false
		}
		chains = append(chains, chain)
		body[chain] = nil
		return true
	}
	comment := func(s string) string { return `-m comment --comment "` + s + `"` }
	setMark := "-j MARK --set-xmark " + allowMark + "/" + allowMark
	clearMark := "-j MARK --set-xmark 0x0/" + allowMark

	declare(chainTop)
	add(chainTop, "-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN")
	// peerChain writes the chain for a peer set once; dir is "-s" for
	// ingress sources, "-d" for egress destinations.
	peerChain := func(p *Peers, dir string) string {
		key := dir + " " + strings.Join(p.IPs, ",")
		for _, b := range p.Blocks {
			key += " " + b.CIDR + "!" + strings.Join(b.Except, ",")
		}
		name := peerPrefix + hash(key)
		if !declare(name) {
			return name
		}
		for _, ip := range p.IPs {
			add(name, dir, ip+"/32", setMark)
		}
		for _, b := range p.Blocks {
			if len(b.Except) == 0 {
				add(name, dir, b.CIDR, setMark)
				continue
			}
			bc := blockPrefix + hash(dir+" "+b.CIDR+"!"+strings.Join(b.Except, ","))
			if declare(bc) {
				for _, e := range b.Except {
					add(bc, dir, e, "-j RETURN")
				}
				add(bc, setMark)
			}
			add(name, dir, b.CIDR, "-j", bc)
		}
		return name
	}
	podChain := func(pr PodRules, d *Direction, prefix, dir, what string) string {
		name := prefix + hash(pr.Namespace+"/"+pr.Name)
		declare(name)
		add(name, clearMark)
		peerDir := "-d"
		if dir == "-d" { // ingress: the pod is the destination, peers the sources
			peerDir = "-s"
		}
		// "A pod cannot block access to itself" (Kubernetes' docs): its own
		// connections through a Service come back to it by the bridge.
		add(name, peerDir, pr.IP+"/32", "-j RETURN")
		for _, r := range d.Rules {
			target := "-j RETURN"
			if r.Peers != nil {
				target = "-j " + peerChain(r.Peers, peerDir)
			}
			if len(r.Ports) == 0 {
				add(name, target)
			}
			for _, p := range r.Ports {
				add(name, portMatch(p), target)
			}
			if r.Peers != nil {
				add(name, "-m mark --mark", allowMark+"/"+allowMark, "-j RETURN")
			}
		}
		add(name, comment(pr.Namespace+"/"+pr.Name+" "+what+" not allowed by network policy"), "-j REJECT --reject-with icmp-port-unreachable")
		return name
	}
	for _, pr := range pods {
		if pr.Egress != nil {
			c := podChain(pr, pr.Egress, podEgressPrefix, "-s", "egress")
			add(chainTop, "-s", pr.IP+"/32", comment(pr.Namespace+"/"+pr.Name+" egress"), "-j", c)
		}
		if pr.Ingress != nil {
			c := podChain(pr, pr.Ingress, podIngressPrefix, "-d", "ingress")
			add(chainTop, "-d", pr.IP+"/32", comment(pr.Namespace+"/"+pr.Name+" ingress"), "-j", c)
		}
	}
	add(chainTop, clearMark)

	var b bytes.Buffer
	b.WriteString("*filter\n")
	for _, c := range chains {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	existing = slices.Clone(existing)
	sort.Strings(existing)
	var gone []string
	for _, c := range existing {
		if _, ok := body[c]; !ok && isOurs(c) {
			gone = append(gone, c)
			b.WriteString(":" + c + " - [0:0]\n")
		}
	}
	for _, c := range chains {
		for _, l := range body[c] {
			b.WriteString(l + "\n")
		}
	}
	for _, c := range gone {
		b.WriteString("-X " + c + "\n")
	}
	b.WriteString("COMMIT\n")
	return b.Bytes(), chains
}

// portMatch is the iptables match for one port entry.
func portMatch(p Port) string {
	proto := strings.ToLower(string(p.Protocol))
	switch {
	case p.Port == 0:
		return "-p " + proto
	case p.EndPort != 0:
		return fmt.Sprintf("-p %s -m %s --dport %d:%d", proto, proto, p.Port, p.EndPort)
	default:
		return fmt.Sprintf("-p %s -m %s --dport %d", proto, proto, p.Port)
	}
}

// ourChains lists the chains of ours in iptables-save output of the filter
// table.
func ourChains(save []byte) []string {
	var out []string
	for _, line := range strings.Split(string(save), "\n") {
		name, ok := strings.CutPrefix(line, ":")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		if isOurs(name) {
			out = append(out, name)
		}
	}
	return out
}

func isOurs(chain string) bool {
	return chain == chainTop || strings.HasPrefix(chain, chainPrefix)
}
