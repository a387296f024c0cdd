package netpol

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
)

// Policy types (k8s.io/api's PolicyTypeIngress and PolicyTypeEgress).
const (
	policyTypeIngress api.PolicyType = "Ingress"
	policyTypeEgress  api.PolicyType = "Egress"
)

// State is what the policies are computed from: every pod of the cluster
// (peers may be anywhere), the namespaces (for namespaceSelector) and the
// policies. Nothing in it is modified.
type State struct {
	Pods       []*api.Pod
	Namespaces []*api.Namespace
	Policies   []*api.NetworkPolicy
}

// PodRules is what one pod on the node may receive and send. A nil
// direction is not isolated: no policy of that type selects the pod and
// everything passes.
type PodRules struct {
	Namespace, Name string
	// IP is the pod's IPv4 address.
	IP      string
	Ingress *Direction
	Egress  *Direction
}

// Direction is an isolated direction: a connection passes when one of the
// rules allows it; no rule means nothing passes (default deny).
type Direction struct {
	Rules []Rule
}

// Rule allows connections with one of the peers on one of the ports. For
// ingress the peer is the source, for egress the destination.
type Rule struct {
	// Peers nil means every peer.
	Peers *Peers
	// Ports empty means every port and protocol.
	Ports []Port
}

// Peers is a set of addresses: pod IPs and CIDR blocks.
type Peers struct {
	// IPs are pod IPv4 addresses, sorted and unique.
	IPs []string
	// Blocks are ipBlocks, IPv4 only.
	Blocks []Block
}

// Block is an ipBlock: CIDR minus the Except ranges.
type Block struct {
	CIDR   string
	Except []string
}

// Port is a protocol and a port range; Port 0 is every port of the
// protocol, EndPort 0 the single Port.
type Port struct {
	Protocol      api.Protocol
	Port, EndPort int32
}

// Compute returns the rules of the pods on node nodeName that have an IP
// and do not use the host's network, sorted by namespace and name. A pod
// is isolated for ingress (egress) when a policy in its namespace selects
// it and has that policy type; its allow list is then the union of the
// rules of all those policies (policies are additive).
func Compute(st State, nodeName string) []PodRules {
	ix := newIndex(st)
	var out []PodRules
	for _, pod := range ix.pods {
		if pod.Spec.NodeName != nodeName || pod.Spec.HostNetwork {
			continue
		}
		ip := podIPv4(pod)
		if ip == "" {
			continue
		}
		pr := PodRules{Namespace: pod.Namespace, Name: pod.Name, IP: ip}
		for _, pol := range ix.policies {
			if pol.Namespace != pod.Namespace || !ix.matches(&pol.Spec.PodSelector, pod.Labels) {
				continue
			}
			ingress, egress := policyTypes(pol)
			if ingress {
				if pr.Ingress == nil {
					pr.Ingress = &Direction{}
				}
				for i, r := range pol.Spec.Ingress {
					pr.Ingress.Rules = append(pr.Ingress.Rules, ix.ingressRules(ruleKey{pol, i}, r, pod)...)
				}
			}
			if egress {
				if pr.Egress == nil {
					pr.Egress = &Direction{}
				}
				for i, r := range pol.Spec.Egress {
					k := ruleKey{pol, i}
					rules, ok := ix.egress[k]
					if !ok {
						rules = ix.egressRules(pol, r)
						ix.egress[k] = rules
					}
					pr.Egress.Rules = append(pr.Egress.Rules, rules...)
				}
			}
		}
		out = append(out, pr)
	}
	return out
}

// policyTypes are the spec's, or, when it names none (an object the
// apiserver did not default), Ingress plus Egress if it has egress rules,
// as Kubernetes defaults them.
func policyTypes(pol *api.NetworkPolicy) (ingress, egress bool) {
	if len(pol.Spec.PolicyTypes) == 0 {
		return true, len(pol.Spec.Egress) > 0
	}
	for _, t := range pol.Spec.PolicyTypes {
		switch t {
		case policyTypeIngress:
			ingress = true
		case policyTypeEgress:
			egress = true
		}
	}
	return ingress, egress
}

// index holds the live pods and the namespaces' labels, and memoizes
// what does not depend on the pod being computed: parsed selectors and
// the rules of each policy's egress rules and ingress peers.
type index struct {
	pods     []*api.Pod
	ips      map[*api.Pod]string
	nsLabels map[string]map[string]string
	policies []*api.NetworkPolicy

	selectors map[*api.LabelSelector]labels.Selector
	egress    map[ruleKey][]Rule
	ingress   map[ruleKey]*Peers
}

// ruleKey names one rule of one policy.
type ruleKey struct {
	pol *api.NetworkPolicy
	i   int
}

func newIndex(st State) *index {
	ix := &index{nsLabels: map[string]map[string]string{}, ips: map[*api.Pod]string{},
		selectors: map[*api.LabelSelector]labels.Selector{}, egress: map[ruleKey][]Rule{}, ingress: map[ruleKey]*Peers{}}
	for _, ns := range st.Namespaces {
		ix.nsLabels[ns.Name] = ns.Labels
	}
	for _, p := range st.Pods {
		if p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed {
			continue // its IP may already be another pod's
		}
		ix.pods = append(ix.pods, p)
		ix.ips[p] = podIPv4(p)
	}
	sort.Slice(ix.pods, func(i, j int) bool {
		a, b := ix.pods[i], ix.pods[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	ix.policies = slices.Clone(st.Policies)
	sort.Slice(ix.policies, func(i, j int) bool {
		a, b := ix.policies[i], ix.policies[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return ix
}

// podIPv4 is the pod's IPv4 address, "" if it has none yet.
func podIPv4(p *api.Pod) string {
	for _, ip := range p.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil && a.Is4() {
			return a.String()
		}
	}
	if a, err := netip.ParseAddr(p.Status.PodIP); err == nil && a.Is4() {
		return a.String()
	}
	return ""
}

// matches reports whether sel selects set; a selector that does not parse
// (validation refuses those) selects nothing.
func (ix *index) matches(sel *api.LabelSelector, set map[string]string) bool {
	s, ok := ix.selectors[sel]
	if !ok {
		var err error
		if s, err = labels.SelectorFromLabelSelector(sel); err != nil {
			s = labels.Nothing()
		}
		ix.selectors[sel] = s
	}
	return s.Matches(labels.Set(set))
}

// ingressRules turns one ingress rule of pol into the rules for the
// selected pod dst: named ports are resolved against dst's containers. A
// rule whose ports all fail to resolve allows nothing (not everything).
func (ix *index) ingressRules(k ruleKey, r api.NetworkPolicyIngressRule, dst *api.Pod) []Rule {
	peers, ok := ix.ingress[k]
	if !ok {
		peers = ix.peers(k.pol, r.From)
		ix.ingress[k] = peers
	}
	if len(r.Ports) == 0 {
		return []Rule{{Peers: peers}}
	}
	var ports []Port
	for _, p := range r.Ports {
		if p.Port != nil && p.Port.Type == api.String {
			if n, ok := namedPort(dst, p.Port.StrVal, protocol(p)); ok {
				ports = append(ports, Port{Protocol: protocol(p), Port: n})
			}
			continue
		}
		ports = append(ports, numericPort(p))
	}
	if len(ports) == 0 {
		return nil
	}
	return []Rule{{Peers: peers, Ports: ports}}
}

// egressRules turns one egress rule of pol into rules. A named port is
// resolved against each destination pod among the peers that has it: it
// becomes one rule per resolved number, whose peers are those pods.
func (ix *index) egressRules(pol *api.NetworkPolicy, r api.NetworkPolicyEgressRule) []Rule {
	peers := ix.peers(pol, r.To)
	if len(r.Ports) == 0 {
		return []Rule{{Peers: peers}}
	}
	var numeric []Port
	type named struct {
		proto api.Protocol
		port  int32
	}
	byPort := map[named][]string{}
	for _, p := range r.Ports {
		if p.Port == nil || p.Port.Type != api.String {
			numeric = append(numeric, numericPort(p))
			continue
		}
		for _, pod := range ix.pods {
			ip := ix.ips[pod]
			if ip == "" || !peers.contains(ip) {
				continue
			}
			if n, ok := namedPort(pod, p.Port.StrVal, protocol(p)); ok {
				k := named{protocol(p), n}
				byPort[k] = append(byPort[k], ip)
			}
		}
	}
	var out []Rule
	if len(numeric) > 0 {
		out = append(out, Rule{Peers: peers, Ports: numeric})
	}
	keys := make([]named, 0, len(byPort))
	for k := range byPort {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].proto < keys[j].proto || keys[i].proto == keys[j].proto && keys[i].port < keys[j].port
	})
	for _, k := range keys {
		out = append(out, Rule{Peers: &Peers{IPs: uniqueSorted(byPort[k])}, Ports: []Port{{Protocol: k.proto, Port: k.port}}})
	}
	return out
}

// protocol is the port's protocol, TCP when unset (the API's default).
func protocol(p api.NetworkPolicyPort) api.Protocol {
	if p.Protocol == nil || *p.Protocol == "" {
		return api.ProtocolTCP
	}
	return *p.Protocol
}

func numericPort(p api.NetworkPolicyPort) Port {
	out := Port{Protocol: protocol(p)}
	if p.Port != nil {
		out.Port = p.Port.IntVal
		if p.EndPort != nil && *p.EndPort > out.Port {
			out.EndPort = *p.EndPort
		}
	}
	return out
}

// namedPort finds the container port called name with protocol proto.
func namedPort(pod *api.Pod, name string, proto api.Protocol) (int32, bool) {
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			p := cp.Protocol
			if p == "" {
				p = api.ProtocolTCP
			}
			if cp.Name == name && p == proto {
				return cp.ContainerPort, true
			}
		}
	}
	return 0, false
}

// peers resolves a from/to list: nil (every peer) when the list is empty,
// else the pods and blocks its entries select, together.
func (ix *index) peers(pol *api.NetworkPolicy, list []api.NetworkPolicyPeer) *Peers {
	if len(list) == 0 {
		return nil
	}
	out := &Peers{}
	var ips []string
	for _, peer := range list {
		if b := peer.IPBlock; b != nil {
			if blk, ok := ipv4Block(b); ok {
				out.Blocks = append(out.Blocks, blk)
			}
			continue
		}
		for _, pod := range ix.pods {
			if !ix.selectsPod(pol, peer, pod) {
				continue
			}
			if ip := ix.ips[pod]; ip != "" {
				ips = append(ips, ip)
			}
		}
	}
	out.IPs = uniqueSorted(ips)
	return out
}

// selectsPod applies a peer's selectors: podSelector alone picks pods of
// the policy's namespace; namespaceSelector alone every pod of the
// namespaces it selects; both, the pods podSelector picks in those
// namespaces.
func (ix *index) selectsPod(pol *api.NetworkPolicy, peer api.NetworkPolicyPeer, pod *api.Pod) bool {
	if peer.NamespaceSelector == nil {
		if pod.Namespace != pol.Namespace {
			return false
		}
	} else if !ix.matches(peer.NamespaceSelector, ix.nsLabels[pod.Namespace]) {
		return false
	}
	if peer.PodSelector == nil {
		return peer.NamespaceSelector != nil
	}
	return ix.matches(peer.PodSelector, pod.Labels)
}

// ipv4Block normalizes an ipBlock; IPv6 blocks are left out (the node's
// pods are IPv4), and so are except entries of the other family.
func ipv4Block(b *api.IPBlock) (Block, bool) {
	p, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !p.Addr().Is4() {
		return Block{}, false
	}
	out := Block{CIDR: p.Masked().String()}
	for _, e := range b.Except {
		ep, err := netip.ParsePrefix(e)
		if err != nil || !ep.Addr().Is4() {
			continue
		}
		out.Except = append(out.Except, ep.Masked().String())
	}
	return out, true
}

// contains reports whether ip is among the peers (nil: every address).
func (p *Peers) contains(ip string) bool {
	if p == nil {
		return true
	}
	if _, ok := slices.BinarySearch(p.IPs, ip); ok {
		return true
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	for _, b := range p.Blocks {
		if b.contains(a) {
			return true
		}
	}
	return false
}

func (b Block) contains(a netip.Addr) bool {
	if p, err := netip.ParsePrefix(b.CIDR); err != nil || !p.Contains(a) {
		return false
	}
	for _, e := range b.Except {
		if p, err := netip.ParsePrefix(e); err == nil && p.Contains(a) {
			return false
		}
	}
	return true
}

// Allows reports whether d lets a connection with peer ip on proto/port
// through: the reference the rendered iptables rules are tested against.
func (d *Direction) Allows(ip string, proto api.Protocol, port int32) bool {
	if d == nil {
		return true
	}
	for _, r := range d.Rules {
		if !r.Peers.contains(ip) {
			continue
		}
		if len(r.Ports) == 0 {
			return true
		}
		for _, p := range r.Ports {
			if p.Protocol != proto {
				continue
			}
			if p.Port == 0 || port == p.Port || p.EndPort != 0 && port >= p.Port && port <= p.EndPort {
				return true
			}
		}
	}
	return false
}

func uniqueSorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	sort.Slice(s, func(i, j int) bool { return ipLess(s[i], s[j]) })
	return slices.Compact(s)
}

// ipLess orders addresses numerically so rules read in address order.
func ipLess(a, b string) bool {
	x, errx := netip.ParseAddr(a)
	y, erry := netip.ParseAddr(b)
	if errx != nil || erry != nil {
		return a < b
	}
	return x.Less(y)
}

// String is a compact form for logs and test failures.
func (r Rule) String() string {
	var b strings.Builder
	if r.Peers == nil {
		b.WriteString("any")
	} else {
		parts := slices.Clone(r.Peers.IPs)
		for _, blk := range r.Peers.Blocks {
			s := blk.CIDR
			if len(blk.Except) > 0 {
				s += " except " + strings.Join(blk.Except, ",")
			}
			parts = append(parts, s)
		}
		b.WriteString("[" + strings.Join(parts, " ") + "]")
	}
	if len(r.Ports) > 0 {
		var ps []string
		for _, p := range r.Ports {
			switch {
			case p.Port == 0:
				ps = append(ps, string(p.Protocol))
			case p.EndPort != 0:
				ps = append(ps, fmt.Sprintf("%s/%d-%d", p.Protocol, p.Port, p.EndPort))
			default:
				ps = append(ps, fmt.Sprintf("%s/%d", p.Protocol, p.Port))
			}
		}
		b.WriteString(" on " + strings.Join(ps, ","))
	}
	return b.String()
}
