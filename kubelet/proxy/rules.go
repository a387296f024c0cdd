package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"sort"
	"strings"
)

// Chains kube-proxy's iptables mode uses; the names are kube-proxy's, so
// anyone who has debugged a Kubernetes node reads these rules at once.
const (
	chainServices         = "KUBE-SERVICES"
	chainExternalServices = "KUBE-EXTERNAL-SERVICES"
	chainNodePorts        = "KUBE-NODEPORTS"
	chainPostrouting      = "KUBE-POSTROUTING"
	chainMarkMasq         = "KUBE-MARK-MASQ"
	svcPrefix             = "KUBE-SVC-"
	sepPrefix             = "KUBE-SEP-"
	masqMark              = "0x4000"
)

// jump is a rule in a built-in chain that sends traffic to ours.
type jump struct {
	table, chain string
	args         []string
}

// jumps are ensured on every sync (someone may have flushed the built-in chains).
var jumps = []jump{
	{"nat", "PREROUTING", []string{"-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"nat", "OUTPUT", []string{"-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"nat", "POSTROUTING", []string{"-m", "comment", "--comment", "kubernetes postrouting rules", "-j", chainPostrouting}},
	{"filter", "INPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes externally-visible service portals", "-j", chainExternalServices}},
	{"filter", "FORWARD", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"filter", "OUTPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
}

// portProtoHash is kube-proxy's chain-name hash: the first 16 characters
// of the base32 SHA-256 of the service port name and protocol.
func portProtoHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:16]
}

func svcChain(sp *servicePort) string {
	return svcPrefix + portProtoHash(sp.String()+strings.ToLower(string(sp.Protocol)))
}

func sepChain(sp *servicePort, endpoint string) string {
	return sepPrefix + portProtoHash(sp.String()+strings.ToLower(string(sp.Protocol))+endpoint)
}

// ruleSet is the rendered iptables-restore input for the nat and filter
// tables, plus the per-service chains it defines.
type ruleSet struct {
	nat, filter []byte
	chains      map[string]bool // KUBE-SVC-* and KUBE-SEP-* defined
}

// render builds the rules for sps. clusterCIDR, when set, limits
// masquerading of ClusterIP traffic to packets from outside the pod
// network (kube-proxy's --cluster-cidr); stale lists per-service chains
// that exist now and must go.
func render(sps []*servicePort, clusterCIDR string, stale []string) ruleSet {
	rs := ruleSet{chains: map[string]bool{}}
	var natChains, natRules, filterRules bytes.Buffer
	w := func(b *bytes.Buffer, args ...string) { b.WriteString(strings.Join(args, " ") + "\n") }
	comment := func(s string) string { return `-m comment --comment "` + s + `"` }

	for _, c := range []string{chainServices, chainNodePorts, chainPostrouting, chainMarkMasq} {
		w(&natChains, ":"+c, "-", "[0:0]")
	}
	w(&natRules, "-A", chainPostrouting, "-m mark ! --mark", masqMark+"/"+masqMark, "-j RETURN")
	w(&natRules, "-A", chainPostrouting, "-j MARK --xor-mark", masqMark)
	w(&natRules, "-A", chainPostrouting, comment("kubernetes service traffic requiring SNAT"), "-j MASQUERADE")
	w(&natRules, "-A", chainMarkMasq, "-j MARK --or-mark", masqMark)

	for _, sp := range sps {
		proto := strings.ToLower(string(sp.Protocol))
		name := sp.String()
		dst := fmt.Sprintf("-d %s/32 -p %s -m %s --dport %d", sp.ClusterIP, proto, proto, sp.Port)
		if len(sp.Endpoints) == 0 {
			// No endpoints: refuse at once instead of letting clients hang.
			w(&filterRules, "-A", chainServices, comment(name+" has no endpoints"), dst, "-j REJECT --reject-with icmp-port-unreachable")
			if sp.NodePort != 0 {
				w(&filterRules, "-A", chainExternalServices, comment(name+" has no endpoints"),
					fmt.Sprintf("-m addrtype --dst-type LOCAL -p %s -m %s --dport %d", proto, proto, sp.NodePort),
					"-j REJECT --reject-with icmp-port-unreachable")
			}
			continue
		}
		svc := svcChain(sp)
		rs.chains[svc] = true
		w(&natChains, ":"+svc, "-", "[0:0]")
		w(&natRules, "-A", chainServices, comment(name+" cluster IP"), dst, "-j", svc)
		if clusterCIDR != "" {
			w(&natRules, "-A", svc, comment(name+" cluster IP"), dst, "! -s", clusterCIDR, "-j", chainMarkMasq)
		} else {
			w(&natRules, "-A", svc, comment(name+" cluster IP"), dst, "-j", chainMarkMasq)
		}
		if sp.NodePort != 0 {
			np := fmt.Sprintf("-p %s -m %s --dport %d", proto, proto, sp.NodePort)
			w(&natRules, "-A", chainNodePorts, comment(name), np, "-j", chainMarkMasq)
			w(&natRules, "-A", chainNodePorts, comment(name), np, "-j", svc)
		}
		seps := make([]string, len(sp.Endpoints))
		for i, ep := range sp.Endpoints {
			seps[i] = sepChain(sp, ep)
			rs.chains[seps[i]] = true
			w(&natChains, ":"+seps[i], "-", "[0:0]")
		}
		if sp.AffinitySeconds > 0 {
			for i, ep := range sp.Endpoints {
				w(&natRules, "-A", svc, comment(name+" -> "+ep), "-m recent --name", seps[i],
					fmt.Sprintf("--rcheck --seconds %d --reap", sp.AffinitySeconds), "-j", seps[i])
			}
		}
		n := len(sp.Endpoints)
		for i, ep := range sp.Endpoints {
			if i < n-1 {
				w(&natRules, "-A", svc, comment(name+" -> "+ep),
					fmt.Sprintf("-m statistic --mode random --probability %0.10f", 1/float64(n-i)), "-j", seps[i])
			} else {
				w(&natRules, "-A", svc, comment(name+" -> "+ep), "-j", seps[i])
			}
		}
		for i, ep := range sp.Endpoints {
			host := ep[:strings.LastIndexByte(ep, ':')]
			w(&natRules, "-A", seps[i], comment(name), "-s", host+"/32", "-j", chainMarkMasq)
			recent := ""
			if sp.AffinitySeconds > 0 {
				recent = "-m recent --name " + seps[i] + " --set "
			}
			w(&natRules, "-A", seps[i], comment(name), "-p", proto, recent+"-m", proto, "-j DNAT --to-destination", ep)
		}
	}
	w(&natRules, "-A", chainServices, comment("kubernetes service nodeports; NOTE: this must be the last rule in this chain"),
		"-m addrtype --dst-type LOCAL -j", chainNodePorts)

	// Chains that existed and are no longer wanted: flush (by declaring
	// them) and delete.
	sort.Strings(stale)
	var deletes bytes.Buffer
	for _, c := range stale {
		if rs.chains[c] {
			continue
		}
		w(&natChains, ":"+c, "-", "[0:0]")
		w(&deletes, "-X", c)
	}

	var nat bytes.Buffer
	nat.WriteString("*nat\n")
	nat.Write(natChains.Bytes())
	nat.Write(natRules.Bytes())
	nat.Write(deletes.Bytes())
	nat.WriteString("COMMIT\n")
	var filter bytes.Buffer
	filter.WriteString("*filter\n")
	w(&filter, ":"+chainServices, "-", "[0:0]")
	w(&filter, ":"+chainExternalServices, "-", "[0:0]")
	filter.Write(filterRules.Bytes())
	filter.WriteString("COMMIT\n")
	rs.nat, rs.filter = nat.Bytes(), filter.Bytes()
	return rs
}

// existingChains lists the per-service chains in iptables-save output.
func existingChains(save []byte) []string {
	var out []string
	for _, line := range strings.Split(string(save), "\n") {
		if !strings.HasPrefix(line, ":") {
			continue
		}
		name, _, _ := strings.Cut(line[1:], " ")
		if strings.HasPrefix(name, svcPrefix) || strings.HasPrefix(name, sepPrefix) {
			out = append(out, name)
		}
	}
	return out
}
