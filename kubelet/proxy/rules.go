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
	svlPrefix             = "KUBE-SVL-"
	extPrefix             = "KUBE-EXT-"
	fwPrefix              = "KUBE-FW-"
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
	{"filter", "FORWARD", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes externally-visible service portals", "-j", chainExternalServices}},
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

// svlChain balances over the node's own endpoints (a Local traffic
// policy); extChain takes the traffic of node ports, external IPs and load
// balancer addresses; fwChain checks loadBalancerSourceRanges.
func svlChain(sp *servicePort) string {
	return svlPrefix + portProtoHash(sp.String()+strings.ToLower(string(sp.Protocol)))
}

func extChain(sp *servicePort) string {
	return extPrefix + portProtoHash(sp.String()+strings.ToLower(string(sp.Protocol)))
}

func fwChain(sp *servicePort) string {
	return fwPrefix + portProtoHash(sp.String()+strings.ToLower(string(sp.Protocol)))
}

// isServiceChain tells the per-service chains (made and deleted as
// Services come and go) from the fixed ones.
func isServiceChain(name string) bool {
	for _, p := range []string{svcPrefix, svlPrefix, extPrefix, fwPrefix, sepPrefix} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func sepChain(sp *servicePort, endpoint string) string {
	return sepPrefix + portProtoHash(sp.String()+strings.ToLower(string(sp.Protocol))+endpoint)
}

// ruleSet is the desired content of the nat table's service chains and of
// the filter table's two chains.
type ruleSet struct {
	// order lists the nat chains: the fixed ones first, then per-service.
	order []string
	// nat maps a chain to its rule lines ("-A CHAIN ...").
	nat map[string][]string
	// filter holds the REJECT rules of Services without endpoints.
	filter []string
}

// fixedNATChains are rewritten on every sync; per-service chains only when
// they changed (kube-proxy's partial sync), so a single endpoint change
// costs a few chains, not the whole table.
var fixedNATChains = []string{chainServices, chainNodePorts, chainPostrouting, chainMarkMasq}

// render builds the rules for sps. clusterCIDR, when set, limits
// masquerading of ClusterIP traffic to packets from outside the pod
// network (kube-proxy's --cluster-cidr).
func render(sps []*servicePort, clusterCIDR string) ruleSet {
	rs := ruleSet{nat: map[string][]string{}}
	add := func(chain string, args ...string) {
		if _, ok := rs.nat[chain]; !ok {
			rs.order = append(rs.order, chain)
		}
		rs.nat[chain] = append(rs.nat[chain], "-A "+chain+" "+strings.Join(args, " "))
	}
	declare := func(chain string) {
		if _, ok := rs.nat[chain]; !ok {
			rs.order = append(rs.order, chain)
			rs.nat[chain] = []string{}
		}
	}
	reject := func(args ...string) { rs.filter = append(rs.filter, strings.Join(args, " ")) }
	comment := func(s string) string { return `-m comment --comment "` + s + `"` }

	for _, c := range fixedNATChains {
		declare(c)
	}
	add(chainPostrouting, "-m mark ! --mark", masqMark+"/"+masqMark, "-j RETURN")
	add(chainPostrouting, "-j MARK --xor-mark", masqMark)
	add(chainPostrouting, comment("kubernetes service traffic requiring SNAT"), "-j MASQUERADE")
	add(chainMarkMasq, "-j MARK --or-mark", masqMark)

	for _, sp := range sps {
		proto := strings.ToLower(string(sp.Protocol))
		name := sp.String()
		port := fmt.Sprintf("-p %s -m %s --dport %d", proto, proto, sp.Port)
		dst := fmt.Sprintf("-d %s/32 %s", sp.ClusterIP, port)
		nodePort := fmt.Sprintf("-m addrtype --dst-type LOCAL -p %s -m %s --dport %d", proto, proto, sp.NodePort)
		// externalDsts are the external IPs' and the load balancer
		// addresses' matches (filter rules for what nat does not take).
		var externalDsts []string
		for _, ip := range append(append([]string(nil), sp.ExternalIPs...), sp.LoadBalancerIPs...) {
			externalDsts = append(externalDsts, "-d "+ip+"/32 "+port)
		}
		if len(sp.Endpoints) == 0 {
			// No endpoints: refuse at once instead of letting clients hang.
			reject("-A", chainServices, comment(name+" has no endpoints"), dst, "-j REJECT --reject-with icmp-port-unreachable")
			if sp.NodePort != 0 {
				reject("-A", chainExternalServices, comment(name+" has no endpoints"), nodePort, "-j REJECT --reject-with icmp-port-unreachable")
			}
			for _, d := range externalDsts {
				reject("-A", chainExternalServices, comment(name+" has no endpoints"), d, "-j REJECT --reject-with icmp-port-unreachable")
			}
			continue
		}
		svc, svl, ext := svcChain(sp), svlChain(sp), extChain(sp)
		usesSVC := !sp.InternalLocal || sp.hasExternal()
		usesSVL := sp.InternalLocal || (sp.hasExternal() && sp.ExternalLocal)

		// ClusterIP traffic: to every endpoint, or (internalTrafficPolicy
		// Local) to this node's, dropped when it has none.
		cluster := svc
		if sp.InternalLocal {
			cluster = svl
		}
		if !sp.InternalLocal || len(sp.LocalEndpoints) > 0 {
			add(chainServices, comment(name+" cluster IP"), dst, "-j", cluster)
			if clusterCIDR != "" {
				add(cluster, comment(name+" cluster IP"), dst, "! -s", clusterCIDR, "-j", chainMarkMasq)
			} else {
				add(cluster, comment(name+" cluster IP"), dst, "-j", chainMarkMasq)
			}
		} else {
			reject("-A", chainServices, comment(name+" has no local endpoints"), dst, "-j DROP")
		}

		// External traffic: node ports, external IPs and load balancer
		// addresses share the EXT chain. With externalTrafficPolicy
		// Cluster it is masqueraded and goes anywhere; with Local it keeps
		// its source address and goes only to this node's endpoints, but
		// pods and the node itself are sent anywhere, as kube-proxy does.
		if sp.hasExternal() {
			if !sp.ExternalLocal {
				add(ext, comment("masquerade traffic for "+name+" external destinations"), "-j", chainMarkMasq)
				add(ext, "-j", svc)
			} else {
				if clusterCIDR != "" {
					add(ext, comment("pod traffic for "+name+" external destinations"), "-s", clusterCIDR, "-j", svc)
				}
				add(ext, comment("masquerade LOCAL traffic for "+name+" external destinations"), "-m addrtype --src-type LOCAL -j", chainMarkMasq)
				add(ext, comment("route LOCAL traffic for "+name+" external destinations"), "-m addrtype --src-type LOCAL -j", svc)
				if len(sp.LocalEndpoints) > 0 {
					add(ext, "-j", svl)
				} else {
					// What the EXT chain leaves is not DNATed: drop it.
					if sp.NodePort != 0 {
						reject("-A", chainExternalServices, comment(name+" has no local endpoints"), nodePort, "-j DROP")
					}
					for _, d := range externalDsts {
						reject("-A", chainExternalServices, comment(name+" has no local endpoints"), d, "-j DROP")
					}
				}
			}
			if sp.NodePort != 0 {
				add(chainNodePorts, comment(name), fmt.Sprintf("-p %s -m %s --dport %d", proto, proto, sp.NodePort), "-j", ext)
			}
			for _, ip := range sp.ExternalIPs {
				add(chainServices, comment(name+" external IP"), "-d", ip+"/32", port, "-j", ext)
			}
			lbTarget := ext
			if len(sp.SourceRanges) > 0 {
				// Only the allowed sources reach the EXT chain; the rest
				// is dropped in the filter table.
				lbTarget = fwChain(sp)
				for _, r := range sp.SourceRanges {
					add(lbTarget, comment(name+" loadbalancer IP"), "-s", r, "-j", ext)
				}
				for _, ip := range sp.LoadBalancerIPs {
					reject("-A", chainExternalServices, comment(name+" traffic not accepted by "+lbTarget), "-d", ip+"/32", port, "-j DROP")
				}
			}
			for _, ip := range sp.LoadBalancerIPs {
				add(chainServices, comment(name+" loadbalancer IP"), "-d", ip+"/32", port, "-j", lbTarget)
			}
		}

		seps := map[string]string{}
		for _, ep := range sp.Endpoints {
			seps[ep] = sepChain(sp, ep)
		}
		if usesSVC {
			balance(add, comment, sp, svc, sp.Endpoints, seps)
		}
		if usesSVL {
			if len(sp.LocalEndpoints) > 0 {
				balance(add, comment, sp, svl, sp.LocalEndpoints, seps)
			} else {
				declare(svl)
			}
		}
		for _, ep := range sp.Endpoints {
			host := ep[:strings.LastIndexByte(ep, ':')]
			add(seps[ep], comment(name), "-s", host+"/32", "-j", chainMarkMasq)
			recent := ""
			if sp.AffinitySeconds > 0 {
				recent = "-m recent --name " + seps[ep] + " --set "
			}
			add(seps[ep], comment(name), "-p", proto, recent+"-m", proto, "-j DNAT --to-destination", ep)
		}
	}
	add(chainServices, comment("kubernetes service nodeports; NOTE: this must be the last rule in this chain"),
		"-m addrtype --dst-type LOCAL -j", chainNodePorts)

	// Traffic to a ClusterIP on a port or protocol the Service does not
	// have is refused, as kube-proxy's nftables mode does ("Reject traffic
	// to invalid ports of ClusterIPs"). The filter chain sees a packet
	// after the nat table: one DNATed to an endpoint no longer has the
	// ClusterIP as its destination, so only the ones no rule took match.
	// Without this such a packet leaves by the node's default route and
	// may get an answer from whatever is out there (a transparent proxy
	// answering any address on port 80), not the refusal a client sees
	// when the Service drops the port.
	seen := map[string]bool{}
	for _, sp := range sps {
		if seen[sp.ClusterIP] {
			continue
		}
		seen[sp.ClusterIP] = true
		reject("-A", chainServices, comment(sp.Namespace+"/"+sp.Name+" cluster IP: no such port"),
			"-d", sp.ClusterIP+"/32", "-j REJECT --reject-with icmp-port-unreachable")
	}

	return rs
}

// balance fills chain with the rules choosing one of endpoints at random
// (first the ClientIP affinity checks, when the port has affinity).
func balance(add func(chain string, args ...string), comment func(string) string, sp *servicePort, chain string, endpoints []string, seps map[string]string) {
	name := sp.String()
	if sp.AffinitySeconds > 0 {
		for _, ep := range endpoints {
			add(chain, comment(name+" -> "+ep), "-m recent --name", seps[ep],
				fmt.Sprintf("--rcheck --seconds %d --reap", sp.AffinitySeconds), "-j", seps[ep])
		}
	}
	n := len(endpoints)
	for i, ep := range endpoints {
		if i < n-1 {
			add(chain, comment(name+" -> "+ep),
				fmt.Sprintf("-m statistic --mode random --probability %0.10f", 1/float64(n-i)), "-j", seps[ep])
		} else {
			add(chain, comment(name+" -> "+ep), "-j", seps[ep])
		}
	}
}

// filterRestore is the iptables-restore input for the filter table with
// the given REJECT rules.
func filterRestore(rules []string) []byte {
	var b bytes.Buffer
	b.WriteString("*filter\n:" + chainServices + " - [0:0]\n:" + chainExternalServices + " - [0:0]\n")
	for _, r := range rules {
		b.WriteString(r + "\n")
	}
	b.WriteString("COMMIT\n")
	return b.Bytes()
}

// unionRules is a then the rules of b not in a.
func unionRules(a, b []string) []string {
	seen := map[string]bool{}
	out := append([]string(nil), a...)
	for _, r := range a {
		seen[r] = true
	}
	for _, r := range b {
		if !seen[r] {
			out = append(out, r)
		}
	}
	return out
}

// bodies returns each nat chain's rules joined, to compare with the next sync.
func (rs ruleSet) bodies() map[string]string {
	out := make(map[string]string, len(rs.nat))
	for c, lines := range rs.nat {
		out[c] = strings.Join(lines, "\n")
	}
	return out
}

// natRestore is the iptables-restore input for the nat table. With prev
// (the bodies written by the last sync) only changed per-service chains
// are written; without it every chain is. existing lists per-service
// chains present now: those no longer wanted are flushed and deleted.
func (rs ruleSet) natRestore(prev map[string]string, existing []string) []byte {
	var b bytes.Buffer
	b.WriteString("*nat\n")
	fixed := map[string]bool{}
	for _, c := range fixedNATChains {
		fixed[c] = true
	}
	var write []string
	for _, c := range rs.order {
		if prev == nil || fixed[c] || prev[c] != strings.Join(rs.nat[c], "\n") {
			write = append(write, c)
		}
	}
	var stale []string
	for _, c := range existing {
		if _, ok := rs.nat[c]; !ok {
			stale = append(stale, c)
		}
	}
	sort.Strings(stale)
	for _, c := range write {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, c := range stale {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, c := range write {
		for _, l := range rs.nat[c] {
			b.WriteString(l + "\n")
		}
	}
	for _, c := range stale {
		b.WriteString("-X " + c + "\n")
	}
	b.WriteString("COMMIT\n")
	return b.Bytes()
}

// existingChains lists the per-service chains in iptables-save output.
func existingChains(save []byte) []string {
	var out []string
	for _, line := range strings.Split(string(save), "\n") {
		if !strings.HasPrefix(line, ":") {
			continue
		}
		name, _, _ := strings.Cut(line[1:], " ")
		if isServiceChain(name) {
			out = append(out, name)
		}
	}
	return out
}
