package proxy

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/minik8s/minik8s/api"
	"golang.org/x/sys/unix"
)

// The nftables mode's objects, named as kube-proxy's nftables proxier
// names them: everything lives in the table "kube-proxy" of family ip, so
// none of the names needs a prefix of its own.
const (
	nftTable = "kube-proxy"

	nftFilterPreroutingPreDNAT = "filter-prerouting-pre-dnat"
	nftFilterOutputPreDNAT     = "filter-output-pre-dnat"
	nftFilterInput             = "filter-input"
	nftFilterForward           = "filter-forward"
	nftFilterOutput            = "filter-output"
	nftNATPrerouting           = "nat-prerouting"
	nftNATOutput               = "nat-output"
	nftNATPostrouting          = "nat-postrouting"

	nftServicesChain         = "services"
	nftServiceEndpointsCheck = "service-endpoints-check"
	nftNodePortEndpointsChk  = "nodeport-endpoints-check"
	nftClusterIPsCheck       = "cluster-ips-check"
	nftFirewallCheck         = "firewall-check"
	nftRejectChain           = "reject-chain"
	nftMasquerading          = "masquerading"
	nftMarkForMasquerade     = "mark-for-masquerade"

	nftServiceIPsMap        = "service-ips"
	nftServiceNodePortsMap  = "service-nodeports"
	nftNoEndpointServices   = "no-endpoint-services"
	nftNoEndpointNodePorts  = "no-endpoint-nodeports"
	nftFirewallIPsMap       = "firewall-ips"
	nftClusterIPsSet        = "cluster-ips"
	nftHairpinConnectionSet = "hairpin-connections"

	nftServicePrefix  = "service-"
	nftLocalPrefix    = "local-"
	nftExternalPrefix = "external-"
	nftFirewallPrefix = "firewall-"
	nftEndpointPrefix = "endpoint-"
	nftAffinityPrefix = "affinity-"

	// nftMasqMark is the packet mark bit asking for masquerade, the
	// iptables mode's 0x4000.
	nftMasqMark = 0x4000
)

// nftBaseChain is a chain hooked into the kernel.
type nftBaseChain struct {
	typ      nftables.ChainType
	hook     *nftables.ChainHook
	hookName string
	priority int32
}

// nftBaseChains are kube-proxy's: the firewall check before DNAT, the
// no-endpoint and invalid-port checks at filter priority (after DNAT, so a
// packet already sent to an endpoint no longer matches), and the nat hooks.
var nftBaseChains = []struct {
	name string
	nftBaseChain
}{
	{nftFilterPreroutingPreDNAT, nftBaseChain{nftables.ChainTypeFilter, nftables.ChainHookPrerouting, "prerouting", -110}},
	{nftFilterOutputPreDNAT, nftBaseChain{nftables.ChainTypeFilter, nftables.ChainHookOutput, "output", -110}},
	{nftFilterInput, nftBaseChain{nftables.ChainTypeFilter, nftables.ChainHookInput, "input", 0}},
	{nftFilterForward, nftBaseChain{nftables.ChainTypeFilter, nftables.ChainHookForward, "forward", 0}},
	{nftFilterOutput, nftBaseChain{nftables.ChainTypeFilter, nftables.ChainHookOutput, "output", 0}},
	{nftNATPrerouting, nftBaseChain{nftables.ChainTypeNAT, nftables.ChainHookPrerouting, "prerouting", -100}},
	{nftNATOutput, nftBaseChain{nftables.ChainTypeNAT, nftables.ChainHookOutput, "output", -100}},
	{nftNATPostrouting, nftBaseChain{nftables.ChainTypeNAT, nftables.ChainHookPostrouting, "postrouting", 100}},
}

// nftSetDef describes one of the fixed sets and maps.
type nftSetDef struct {
	name    string
	key     nftables.SetDatatype
	concat  bool
	verdict bool // a verdict map
}

var (
	typeIPProtoPort = nftables.MustConcatSetType(nftables.TypeIPAddr, nftables.TypeInetProto, nftables.TypeInetService)
	typeProtoPort   = nftables.MustConcatSetType(nftables.TypeInetProto, nftables.TypeInetService)
	typeHairpin     = nftables.MustConcatSetType(nftables.TypeIPAddr, nftables.TypeIPAddr, nftables.TypeInetProto, nftables.TypeInetService)
)

// nftSetDefs are the sets and maps every sync fills.
var nftSetDefs = []nftSetDef{
	{nftClusterIPsSet, nftables.TypeIPAddr, false, false},
	{nftServiceIPsMap, typeIPProtoPort, true, true},
	{nftServiceNodePortsMap, typeProtoPort, true, true},
	{nftNoEndpointServices, typeIPProtoPort, true, true},
	{nftNoEndpointNodePorts, typeProtoPort, true, true},
	{nftFirewallIPsMap, typeIPProtoPort, true, true},
	{nftHairpinConnectionSet, typeHairpin, true, false},
}

// nftRule is one rule: nft's text for it (what `nft list` would show,
// near enough to read and to compare between syncs) and the expressions
// sent to the kernel.
type nftRule struct {
	text  string
	exprs []expr.Any
}

// nftChain is a chain with its rules; base is set for hooked chains.
type nftChain struct {
	name  string
	base  *nftBaseChain
	rules []nftRule
	// cached is body() of a service port's chain, computed once.
	cached string
}

// body is the chain's rules as text, what a partial sync compares.
func (c *nftChain) body() string {
	if c.cached != "" {
		return c.cached
	}
	var b strings.Builder
	for _, r := range c.rules {
		b.WriteString(r.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// nftElem is one element of a set or map.
type nftElem struct {
	key     []byte
	verdict *expr.Verdict
	text    string // "key : verdict"
}

// nftRuleset is everything the nftables mode writes for one sync.
type nftRuleset struct {
	chains map[string]*nftChain
	// order lists the chains: base and fixed ones, then per-service.
	order []string
	// elems maps a fixed set's name to its elements by key text.
	elems map[string]map[string]nftElem
	// affinity maps the ClientIP affinity sets to their timeout.
	affinity map[string]int32
}

// hashName is kube-proxy's nftables chain name base: 8 base32 characters
// of the SHA-256 of name, a dash, then name.
func hashName(name string) string {
	sum := sha256.Sum256([]byte(name))
	return base32.StdEncoding.EncodeToString(sum[:])[:8] + "-" + name
}

// nftPortName is "ns/name/proto/port", kube-proxy's per-service part of
// chain names.
func nftPortName(sp *servicePort) string {
	return sp.Namespace + "/" + sp.Name + "/" + strings.ToLower(string(sp.Protocol)) + "/" + sp.PortName
}

func nftServiceChain(sp *servicePort) string  { return nftServicePrefix + hashName(nftPortName(sp)) }
func nftLocalChain(sp *servicePort) string    { return nftLocalPrefix + hashName(nftPortName(sp)) }
func nftExternalChain(sp *servicePort) string { return nftExternalPrefix + hashName(nftPortName(sp)) }
func nftFirewallChain(sp *servicePort) string { return nftFirewallPrefix + hashName(nftPortName(sp)) }

// nftEndpointChain and nftAffinitySet are per endpoint "ip:port".
func nftEndpointChain(sp *servicePort, ep string) string {
	return nftEndpointPrefix + hashName(nftPortName(sp)+"__"+strings.Replace(ep, ":", "/", 1))
}

func nftAffinitySet(sp *servicePort, ep string) string {
	return nftAffinityPrefix + hashName(nftPortName(sp)+"__"+strings.Replace(ep, ":", "/", 1))
}

// isNFTServiceChain tells per-service chains from the fixed ones: only
// they have a "/" in their name.
func isNFTServiceChain(name string) bool { return strings.Contains(name, "/") }

// --- expressions -------------------------------------------------------

// rb builds a rule from parts, each nft text plus expressions.
type rb struct {
	text  []string
	exprs []expr.Any
}

func rule() *rb { return &rb{} }

func (r *rb) add(text string, e ...expr.Any) *rb {
	r.text = append(r.text, text)
	r.exprs = append(r.exprs, e...)
	return r
}

func (r *rb) done() nftRule {
	return nftRule{text: strings.Join(r.text, " "), exprs: r.exprs}
}

func ip4(s string) []byte { return net.ParseIP(s).To4() }

func be16(v int32) []byte { return binaryutil.BigEndian.PutUint16(uint16(v)) }

func native32(v uint32) []byte { return binaryutil.NativeEndian.PutUint32(v) }

func protoNum(p string) byte {
	if strings.EqualFold(p, "udp") {
		return unix.IPPROTO_UDP
	}
	return unix.IPPROTO_TCP
}

// pad4 pads b to a multiple of 4 bytes: concatenation fields each take
// whole 32-bit registers.
func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func concatKey(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, pad4(append([]byte(nil), p...))...)
	}
	return out
}

func loadDaddr(reg uint32) expr.Any {
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4}
}

func loadSaddr(reg uint32) expr.Any {
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4}
}

func loadL4Proto(reg uint32) expr.Any { return &expr.Meta{Key: expr.MetaKeyL4PROTO, Register: reg} }

func loadDport(reg uint32) expr.Any {
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2}
}

func lookup(set string, dreg bool) *expr.Lookup {
	return &expr.Lookup{SourceRegister: 1, SetName: set, IsDestRegSet: dreg}
}

func verdict(kind expr.VerdictKind, chain string) *expr.Verdict {
	return &expr.Verdict{Kind: kind, Chain: chain}
}

func verdictText(v *expr.Verdict) string {
	switch v.Kind {
	case expr.VerdictJump:
		return "jump " + v.Chain
	case expr.VerdictGoto:
		return "goto " + v.Chain
	case expr.VerdictDrop:
		return "drop"
	case expr.VerdictReturn:
		return "return"
	case expr.VerdictAccept:
		return "accept"
	}
	return fmt.Sprint(v.Kind)
}

func (r *rb) jump(chain string) *rb {
	return r.add("jump "+chain, verdict(expr.VerdictJump, chain))
}

func (r *rb) goTo(chain string) *rb {
	return r.add("goto "+chain, verdict(expr.VerdictGoto, chain))
}

func (r *rb) drop() *rb { return r.add("drop", verdict(expr.VerdictDrop, "")) }

func (r *rb) ret() *rb { return r.add("return", verdict(expr.VerdictReturn, "")) }

func (r *rb) reject() *rb {
	// Code 3: ICMP port unreachable, what TCP clients read as "connection refused".
	return r.add("reject", &expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: 3})
}

func (r *rb) ctStateNew() *rb {
	return r.add("ct state new",
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: native32(expr.CtStateBitNEW), Xor: native32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: native32(0)})
}

// ctStatusDNAT is "ct status dnat" (IPS_DST_NAT).
func (r *rb) ctStatusDNAT() *rb {
	return r.add("ct status dnat",
		&expr.Ct{Register: 1, Key: expr.CtKeySTATUS},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: native32(0x20), Xor: native32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: native32(0)})
}

// vmapIPProtoPort is "ip daddr . meta l4proto . th dport vmap @m".
func (r *rb) vmapIPProtoPort(m string) *rb {
	return r.add("ip daddr . meta l4proto . th dport vmap @"+m,
		loadDaddr(1), loadL4Proto(9), loadDport(10), lookup(m, true))
}

// vmapProtoPort is "meta l4proto . th dport vmap @m".
func (r *rb) vmapProtoPort(m string) *rb {
	return r.add("meta l4proto . th dport vmap @"+m, loadL4Proto(1), loadDport(9), lookup(m, true))
}

func (r *rb) daddrIn(set string) *rb {
	return r.add("ip daddr @"+set, loadDaddr(1), lookup(set, false))
}

func (r *rb) saddrIn(set string) *rb {
	return r.add("ip saddr @"+set, loadSaddr(1), lookup(set, false))
}

// cidrMatch compares the address loaded in register 1 with cidr.
func cidrMatch(op expr.CmpOp, cidr string) []expr.Any {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		ip := net.ParseIP(cidr).To4()
		n = &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}
	}
	return []expr.Any{
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte(n.Mask), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: op, Register: 1, Data: n.IP.To4()},
	}
}

func (r *rb) saddr(op expr.CmpOp, cidr string) *rb {
	t := "ip saddr " + cidr
	if op == expr.CmpOpNeq {
		t = "ip saddr != " + cidr
	}
	return r.add(t, append([]expr.Any{loadSaddr(1)}, cidrMatch(op, cidr)...)...)
}

func (r *rb) daddrNotLocalhost() *rb {
	return r.add("ip daddr != 127.0.0.0/8", append([]expr.Any{loadDaddr(1)}, cidrMatch(expr.CmpOpNeq, "127.0.0.0/8")...)...)
}

// fibLocal is "fib daddr type local" (or saddr).
func (r *rb) fibLocal(daddr bool) *rb {
	t := "fib saddr type local"
	if daddr {
		t = "fib daddr type local"
	}
	return r.add(t,
		&expr.Fib{Register: 1, FlagDADDR: daddr, FlagSADDR: !daddr, ResultADDRTYPE: true},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: native32(unix.RTN_LOCAL)})
}

func (r *rb) l4proto(p string) *rb {
	return r.add("meta l4proto "+strings.ToLower(p),
		loadL4Proto(1), &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{protoNum(p)}})
}

// markSetOr is "mark set mark or 0x4000".
func (r *rb) markSetOr() *rb {
	return r.add(fmt.Sprintf("mark set mark or %#x", nftMasqMark),
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: native32(^uint32(nftMasqMark)), Xor: native32(nftMasqMark)},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1})
}

// markMasq is "mark and 0x4000 != 0 mark set mark xor 0x4000".
func (r *rb) markMasq() *rb {
	return r.add(fmt.Sprintf("mark and %#x != 0 mark set mark xor %#x", nftMasqMark, nftMasqMark),
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: native32(nftMasqMark), Xor: native32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: native32(0)},
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: native32(0xffffffff), Xor: native32(nftMasqMark)},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1})
}

func (r *rb) masquerade() *rb {
	return r.add("masquerade fully-random", &expr.Masq{FullyRandom: true})
}

// dnatTo is "dnat to ip:port".
func (r *rb) dnatTo(ep string) *rb {
	host, port := splitHostPort(ep)
	return r.add("dnat to "+ep,
		&expr.Immediate{Register: 1, Data: ip4(host)},
		&expr.Immediate{Register: 2, Data: be16(port)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1, RegProtoMin: 2, Specified: true})
}

// numgenZero is "numgen random mod m == 0": true with probability 1/m.
func (r *rb) numgenZero(m int) *rb {
	return r.add(fmt.Sprintf("numgen random mod %d == 0", m),
		&expr.Numgen{Register: 1, Modulus: uint32(m), Type: unix.NFT_NG_RANDOM},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: native32(0)})
}

// updateSaddr is "update @set { ip saddr }": the affinity record.
func (r *rb) updateSaddr(set string) *rb {
	return r.add("update @"+set+" { ip saddr }",
		loadSaddr(1), &expr.Dynset{SrcRegKey: 1, SetName: set, Operation: unix.NFT_DYNSET_OP_UPDATE})
}

// hairpin is "ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections".
func (r *rb) hairpin() *rb {
	return r.add("ip saddr . ip daddr . meta l4proto . th dport @"+nftHairpinConnectionSet,
		loadSaddr(1), loadDaddr(9), loadL4Proto(10), loadDport(11), lookup(nftHairpinConnectionSet, false))
}

func splitHostPort(ep string) (string, int32) {
	i := strings.LastIndexByte(ep, ':')
	p, _ := strconv.Atoi(ep[i+1:])
	return ep[:i], int32(p)
}

// --- rendering ---------------------------------------------------------

// renderNFT builds the nftables mode's table for sps, the same service
// behaviour render gives the iptables mode. clusterCIDR, when set, limits
// masquerading of ClusterIP traffic to packets from outside the pod
// network.
func renderNFT(sps []*servicePort, clusterCIDR string) *nftRuleset {
	rs, _ := renderNFTCached(sps, clusterCIDR, nil)
	return rs
}

// nftFragment is what one service port adds to the table.
type nftFragment struct {
	chains   []*nftChain
	elems    []nftFragElem
	affinity map[string]int32
}

type nftFragElem struct {
	set, key string
	e        nftElem
}

// renderNFTCached is renderNFT reusing the fragments of cache (the last
// sync's) for service ports that did not change; it returns the
// fragments of this sync.
func renderNFTCached(sps []*servicePort, clusterCIDR string, cache map[string]*nftFragment) (*nftRuleset, map[string]*nftFragment) {
	next := make(map[string]*nftFragment, len(sps))
	var cur *nftFragment // the fragment being rendered, nil outside
	endpoints := 0
	for _, sp := range sps {
		endpoints += len(sp.Endpoints)
	}
	rs := &nftRuleset{chains: make(map[string]*nftChain, 2*len(sps)+32), order: make([]string, 0, 2*len(sps)+32),
		elems: map[string]map[string]nftElem{}, affinity: map[string]int32{}}
	chain := func(name string) *nftChain {
		if cur != nil {
			for _, c := range cur.chains {
				if c.name == name {
					return c
				}
			}
			c := &nftChain{name: name}
			cur.chains = append(cur.chains, c)
			return c
		}
		c, ok := rs.chains[name]
		if !ok {
			c = &nftChain{name: name}
			rs.chains[name] = c
			rs.order = append(rs.order, name)
		}
		return c
	}
	add := func(name string, r *rb) { c := chain(name); c.rules = append(c.rules, r.done()) }
	for _, d := range nftSetDefs {
		size := len(sps)
		if d.name == nftHairpinConnectionSet {
			size = endpoints
		}
		rs.elems[d.name] = make(map[string]nftElem, size)
	}
	// elem adds an element; of two with the same key (two Services
	// claiming one load balancer address and port) the first stays.
	putElem := func(set, keyText string, e nftElem) {
		if _, dup := rs.elems[set][keyText]; !dup {
			rs.elems[set][keyText] = e
		}
	}
	elem := func(set, keyText string, key []byte, v *expr.Verdict) {
		text := keyText
		if v != nil {
			text += " : " + verdictText(v)
		}
		e := nftElem{key: key, verdict: v, text: text}
		if cur != nil {
			cur.elems = append(cur.elems, nftFragElem{set, keyText, e})
			return
		}
		putElem(set, keyText, e)
	}
	ipProtoPort := func(ip string, proto api.Protocol, port int32) ([]byte, string) {
		return concatKey(ip4(ip), []byte{protoNum(string(proto))}, be16(port)),
			fmt.Sprintf("%s . %s . %d", ip, strings.ToLower(string(proto)), port)
	}
	protoPort := func(proto api.Protocol, port int32) ([]byte, string) {
		return concatKey([]byte{protoNum(string(proto))}, be16(port)),
			fmt.Sprintf("%s . %d", strings.ToLower(string(proto)), port)
	}

	// Base chains and the jumps to the fixed chains.
	for _, bc := range nftBaseChains {
		b := bc.nftBaseChain
		chain(bc.name).base = &b
	}
	for _, j := range []struct{ src, dst string }{
		{nftFilterInput, nftNodePortEndpointsChk},
		{nftFilterInput, nftServiceEndpointsCheck},
		{nftFilterForward, nftServiceEndpointsCheck},
		{nftFilterOutput, nftServiceEndpointsCheck},
		{nftFilterPreroutingPreDNAT, nftFirewallCheck},
		{nftFilterOutputPreDNAT, nftFirewallCheck},
		{nftFilterForward, nftClusterIPsCheck},
		{nftFilterOutput, nftClusterIPsCheck},
	} {
		chain(j.dst)
		add(j.src, rule().ctStateNew().jump(j.dst))
	}
	add(nftNATOutput, rule().jump(nftServicesChain))
	add(nftNATPrerouting, rule().jump(nftServicesChain))
	add(nftNATPostrouting, rule().jump(nftMasquerading))

	add(nftMasquerading, rule().markMasq().masquerade())
	add(nftMasquerading, rule().ctStatusDNAT().hairpin().masquerade())
	add(nftMarkForMasquerade, rule().markSetOr())
	add(nftClusterIPsCheck, rule().daddrIn(nftClusterIPsSet).reject())
	add(nftRejectChain, rule().reject())
	add(nftServiceEndpointsCheck, rule().vmapIPProtoPort(nftNoEndpointServices))
	add(nftNodePortEndpointsChk, rule().daddrNotLocalhost().vmapProtoPort(nftNoEndpointNodePorts))
	add(nftFirewallCheck, rule().vmapIPProtoPort(nftFirewallIPsMap))
	if clusterCIDR != "" {
		add(nftServicesChain, rule().daddrIn(nftClusterIPsSet).saddr(expr.CmpOpNeq, clusterCIDR).jump(nftMarkForMasquerade))
	} else {
		add(nftServicesChain, rule().daddrIn(nftClusterIPsSet).jump(nftMarkForMasquerade))
	}
	add(nftServicesChain, rule().vmapIPProtoPort(nftServiceIPsMap))
	add(nftServicesChain, rule().fibLocal(true).daddrNotLocalhost().vmapProtoPort(nftServiceNodePortsMap))

	// Each service port is rendered into a fragment, kept for the next
	// sync: a port unchanged since is not rendered again (kube-proxy
	// rewrites only the services that changed), its chains' bodies not
	// joined again.
	renderOne := func(sp *servicePort) {
		proto := sp.Protocol
		hasEndpoints := len(sp.Endpoints) > 0
		svc, local, ext := nftServiceChain(sp), nftLocalChain(sp), nftExternalChain(sp)
		// The cluster chain serves ClusterIP traffic, and external traffic
		// (with externalTrafficPolicy Local, the pods' and the node's own,
		// which the external chain short-circuits to it), as in render.
		usesCluster := hasEndpoints && (!sp.InternalLocal || sp.hasExternal())
		usesLocal := len(sp.LocalEndpoints) > 0 && (sp.InternalLocal || sp.hasExternal() && sp.ExternalLocal)
		internal, hasInternal := svc, hasEndpoints
		if sp.InternalLocal {
			internal, hasInternal = local, len(sp.LocalEndpoints) > 0
		}
		external, hasExternal := svc, hasEndpoints
		if sp.ExternalLocal {
			external, hasExternal = local, len(sp.LocalEndpoints) > 0
		}
		var internalNoEP, externalNoEP *expr.Verdict
		if !hasEndpoints {
			internalNoEP, externalNoEP = verdict(expr.VerdictGoto, nftRejectChain), verdict(expr.VerdictGoto, nftRejectChain)
		} else {
			internalNoEP, externalNoEP = verdict(expr.VerdictDrop, ""), verdict(expr.VerdictDrop, "")
		}

		k, kt := ipProtoPort(sp.ClusterIP, proto, sp.Port)
		elem(nftClusterIPsSet, sp.ClusterIP, ip4(sp.ClusterIP), nil)
		if hasInternal {
			elem(nftServiceIPsMap, kt, k, verdict(expr.VerdictGoto, internal))
		} else {
			elem(nftNoEndpointServices, kt, k, internalNoEP)
		}
		usesExt := hasEndpoints && sp.hasExternal()
		for _, ip := range sp.ExternalIPs {
			k, kt := ipProtoPort(ip, proto, sp.Port)
			if hasEndpoints {
				elem(nftServiceIPsMap, kt, k, verdict(expr.VerdictGoto, ext))
			}
			if !hasExternal {
				elem(nftNoEndpointServices, kt, k, externalNoEP)
			}
		}
		usesFW := len(sp.LoadBalancerIPs) > 0 && len(sp.SourceRanges) > 0
		for _, ip := range sp.LoadBalancerIPs {
			k, kt := ipProtoPort(ip, proto, sp.Port)
			if hasEndpoints {
				elem(nftServiceIPsMap, kt, k, verdict(expr.VerdictGoto, ext))
			}
			if usesFW {
				elem(nftFirewallIPsMap, kt, k, verdict(expr.VerdictGoto, nftFirewallChain(sp)))
			}
			if !hasExternal {
				elem(nftNoEndpointServices, kt, k, externalNoEP)
			}
		}
		if sp.NodePort != 0 {
			k, kt := protoPort(proto, sp.NodePort)
			if hasEndpoints {
				elem(nftServiceNodePortsMap, kt, k, verdict(expr.VerdictGoto, ext))
			}
			if !hasExternal {
				elem(nftNoEndpointNodePorts, kt, k, externalNoEP)
			}
		}
		if usesFW {
			// Sources outside loadBalancerSourceRanges are dropped before
			// DNAT; the allowed ones return to the hook and go on.
			fw := nftFirewallChain(sp)
			for _, r := range sp.SourceRanges {
				add(fw, rule().saddr(expr.CmpOpEq, r).ret())
			}
			add(fw, rule().drop())
		}
		// Hairpin: an endpoint reaching itself through the Service is
		// masqueraded so that the answer comes back through the node.
		for _, ep := range sp.Endpoints {
			host, port := splitHostPort(ep)
			key := concatKey(ip4(host), ip4(host), []byte{protoNum(string(proto))}, be16(port))
			elem(nftHairpinConnectionSet, fmt.Sprintf("%s . %s . %s . %d", host, host, strings.ToLower(string(proto)), port), key, nil)
		}
		if !hasEndpoints {
			return
		}
		if usesExt {
			if !sp.ExternalLocal {
				add(ext, rule().jump(nftMarkForMasquerade))
			} else {
				if clusterCIDR != "" {
					add(ext, rule().saddr(expr.CmpOpEq, clusterCIDR).goTo(svc))
				}
				add(ext, rule().fibLocal(false).jump(nftMarkForMasquerade))
				add(ext, rule().fibLocal(false).goTo(svc))
			}
			if hasExternal {
				add(ext, rule().goTo(external))
			}
		}
		// endpointsTo picks one of eps at random: rule i of n takes the
		// packet with probability 1/(n-i), the last one always, as the
		// iptables mode's statistic matches do. (kube-proxy writes one
		// rule with a "numgen random mod n" anonymous map instead; the
		// kernel names and finds anonymous sets by walking all the
		// table's sets, which made a 10,000-Service sync quadratic.)
		endpointsTo := func(c string, eps []string) {
			if sp.AffinitySeconds > 0 {
				for _, ep := range eps {
					add(c, rule().saddrIn(nftAffinitySet(sp, ep)).goTo(nftEndpointChain(sp, ep)))
				}
			}
			for i, ep := range eps {
				r := rule()
				if i < len(eps)-1 {
					r.numgenZero(len(eps) - i)
				}
				if sp.AffinitySeconds > 0 {
					add(c, r.goTo(nftEndpointChain(sp, ep)))
				} else {
					add(c, r.l4proto(string(proto)).dnatTo(ep))
				}
			}
		}
		if usesCluster {
			endpointsTo(svc, sp.Endpoints)
		}
		if usesLocal {
			endpointsTo(local, sp.LocalEndpoints)
		}
		if sp.AffinitySeconds > 0 {
			for _, ep := range sp.Endpoints {
				set := nftAffinitySet(sp, ep)
				cur.affinity[set] = sp.AffinitySeconds
				add(nftEndpointChain(sp, ep), rule().updateSaddr(set))
				add(nftEndpointChain(sp, ep), rule().l4proto(string(proto)).dnatTo(ep))
			}
		}
	}
	for _, sp := range sps {
		key := fmt.Sprintf("%s|%v", clusterCIDR, *sp)
		f, ok := cache[key]
		if !ok {
			cur = &nftFragment{affinity: map[string]int32{}}
			renderOne(sp)
			for _, c := range cur.chains {
				c.cached = c.body()
			}
			f, cur = cur, nil
		}
		next[key] = f
		for _, c := range f.chains {
			if _, ok := rs.chains[c.name]; !ok {
				rs.order = append(rs.order, c.name)
			}
			rs.chains[c.name] = c
		}
		for _, e := range f.elems {
			putElem(e.set, e.key, e.e)
		}
		for set, secs := range f.affinity {
			rs.affinity[set] = secs
		}
	}
	return rs, next
}

// elemTexts lists a set's elements as text, sorted (for tests and logs).
func (rs *nftRuleset) elemTexts(set string) []string {
	var out []string
	for _, e := range rs.elems[set] {
		out = append(out, e.text)
	}
	sort.Strings(out)
	return out
}

// String is the ruleset in nft's list syntax, near enough to read.
func (rs *nftRuleset) String() string {
	var b strings.Builder
	b.WriteString("table ip " + nftTable + " {\n")
	for _, d := range nftSetDefs {
		kind := "set"
		if d.verdict {
			kind = "map"
		}
		typ := d.key.Name
		if d.verdict {
			typ += " : verdict"
		}
		fmt.Fprintf(&b, "\t%s %s {\n\t\ttype %s\n", kind, d.name, typ)
		if es := rs.elemTexts(d.name); len(es) > 0 {
			fmt.Fprintf(&b, "\t\telements = { %s }\n", strings.Join(es, ",\n\t\t\t     "))
		}
		b.WriteString("\t}\n")
	}
	var aff []string
	for s := range rs.affinity {
		aff = append(aff, s)
	}
	sort.Strings(aff)
	for _, s := range aff {
		fmt.Fprintf(&b, "\tset %s {\n\t\ttype ipv4_addr\n\t\tflags dynamic,timeout\n\t\ttimeout %ds\n\t}\n", s, rs.affinity[s])
	}
	for _, name := range rs.order {
		c := rs.chains[name]
		fmt.Fprintf(&b, "\tchain %s {\n", name)
		if c.base != nil {
			typ := "filter"
			if c.base.typ == nftables.ChainTypeNAT {
				typ = "nat"
			}
			fmt.Fprintf(&b, "\t\ttype %s hook %s priority %d\n", typ, c.base.hookName, c.base.priority)
		}
		for _, r := range c.rules {
			b.WriteString("\t\t" + r.text + "\n")
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}
