package proxy

import (
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// chainRules is the rule text of chain c, one per line.
func chainRules(rs *nftRuleset, c string) []string {
	ch, ok := rs.chains[c]
	if !ok {
		return nil
	}
	var out []string
	for _, r := range ch.rules {
		out = append(out, r.text)
	}
	return out
}

func wantRules(t *testing.T, rs *nftRuleset, chain string, want ...string) {
	t.Helper()
	got := chainRules(rs, chain)
	if !slices.Equal(got, want) {
		t.Errorf("chain %s:\n got %q\nwant %q\nin\n%s", chain, got, want, rs)
	}
}

func wantElems(t *testing.T, rs *nftRuleset, set string, want ...string) {
	t.Helper()
	got := rs.elemTexts(set)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("set %s lacks %q; has %q", set, w, got)
		}
	}
}

func noElem(t *testing.T, rs *nftRuleset, set, prefix string) {
	t.Helper()
	for _, e := range rs.elemTexts(set) {
		if strings.HasPrefix(e, prefix) {
			t.Errorf("set %s has %q", set, e)
		}
	}
}

// TestRenderNFT: the nftables mode's table for the services of TestRender,
// laid out as kube-proxy's nftables proxier lays it out.
func TestRenderNFT(t *testing.T) {
	sps := []*servicePort{
		{Namespace: "default", Name: "web", PortName: "http", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.10", Port: 80, NodePort: 30080,
			Endpoints: []string{"10.244.1.2:8080", "10.244.1.3:8080", "10.244.2.4:8080"}},
		{Namespace: "default", Name: "sticky", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.11", Port: 80, AffinitySeconds: 10800,
			Endpoints: []string{"10.244.1.2:8080"}},
		{Namespace: "default", Name: "none", Protocol: api.ProtocolUDP, ClusterIP: "10.96.0.12", Port: 53, NodePort: 30053},
		{Namespace: "default", Name: "one", Protocol: api.ProtocolUDP, ClusterIP: "10.96.0.13", Port: 53,
			Endpoints: []string{"10.244.1.9:5353"}},
	}
	rs := renderNFT(sps, "10.244.0.0/16")
	web, sticky := sps[0], sps[1]
	if got, want := nftServiceChain(web), "service-"+hashName("default/web/tcp/http"); got != want || !strings.HasPrefix(got, "service-") || len(got) != len("service-")+9+len("default/web/tcp/http") {
		t.Errorf("service chain name %q, want %q", got, want)
	}
	if !isNFTServiceChain(nftServiceChain(web)) || isNFTServiceChain(nftServicesChain) {
		t.Error("isNFTServiceChain mixes service chains and fixed ones")
	}

	// Hooks and jumps.
	for _, c := range []struct{ chain, hook string }{
		{nftFilterPreroutingPreDNAT, "type filter hook prerouting priority -110"},
		{nftFilterInput, "type filter hook input priority 0"},
		{nftNATPrerouting, "type nat hook prerouting priority -100"},
		{nftNATPostrouting, "type nat hook postrouting priority 100"},
	} {
		if !strings.Contains(rs.String(), "chain "+c.chain+" {\n\t\t"+c.hook+"\n") {
			t.Errorf("chain %s is not %q:\n%s", c.chain, c.hook, rs)
		}
	}
	wantRules(t, rs, nftFilterInput, "ct state new jump nodeport-endpoints-check", "ct state new jump service-endpoints-check")
	wantRules(t, rs, nftFilterForward, "ct state new jump service-endpoints-check", "ct state new jump cluster-ips-check")
	wantRules(t, rs, nftFilterOutput, "ct state new jump service-endpoints-check", "ct state new jump cluster-ips-check")
	wantRules(t, rs, nftNATOutput, "jump services")
	wantRules(t, rs, nftNATPostrouting, "jump masquerading")
	wantRules(t, rs, nftServicesChain,
		"ip daddr @cluster-ips ip saddr != 10.244.0.0/16 jump mark-for-masquerade",
		"ip daddr . meta l4proto . th dport vmap @service-ips",
		"fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports")
	wantRules(t, rs, nftMasquerading,
		"mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random",
		"ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random")
	wantRules(t, rs, nftMarkForMasquerade, "mark set mark or 0x4000")
	wantRules(t, rs, nftClusterIPsCheck, "ip daddr @cluster-ips reject")
	wantRules(t, rs, nftRejectChain, "reject")

	// ClusterIP and NodePort dispatch through the maps.
	wantElems(t, rs, nftServiceIPsMap,
		"10.96.0.10 . tcp . 80 : goto "+nftServiceChain(web),
		"10.96.0.11 . tcp . 80 : goto "+nftServiceChain(sticky))
	wantElems(t, rs, nftServiceNodePortsMap, "tcp . 30080 : goto "+nftExternalChain(web))
	wantElems(t, rs, nftClusterIPsSet, "10.96.0.10", "10.96.0.11", "10.96.0.12", "10.96.0.13")
	wantElems(t, rs, nftHairpinConnectionSet, "10.244.1.2 . 10.244.1.2 . tcp . 8080", "10.244.1.9 . 10.244.1.9 . udp . 5353")
	// Three endpoints: each taken with probability 1/3 (1/3, then 1/2 of
	// the rest, then the rest); one: a plain DNAT.
	wantRules(t, rs, nftServiceChain(web),
		"numgen random mod 3 == 0 meta l4proto tcp dnat to 10.244.1.2:8080",
		"numgen random mod 2 == 0 meta l4proto tcp dnat to 10.244.1.3:8080",
		"meta l4proto tcp dnat to 10.244.2.4:8080")
	wantRules(t, rs, nftServiceChain(sps[3]), "meta l4proto udp dnat to 10.244.1.9:5353")
	wantRules(t, rs, nftExternalChain(web), "jump mark-for-masquerade", "goto "+nftServiceChain(web))

	// Session affinity: a timeout set per endpoint, checked first.
	ep := nftEndpointChain(sticky, "10.244.1.2:8080")
	aff := nftAffinitySet(sticky, "10.244.1.2:8080")
	if !strings.HasPrefix(ep, "endpoint-") || !strings.HasSuffix(ep, "-default/sticky/tcp/__10.244.1.2/8080") {
		t.Errorf("endpoint chain name %q", ep)
	}
	if rs.affinity[aff] != 10800 {
		t.Errorf("affinity sets %v, want %s with timeout 10800", rs.affinity, aff)
	}
	wantRules(t, rs, nftServiceChain(sticky), "ip saddr @"+aff+" goto "+ep, "goto "+ep)
	wantRules(t, rs, ep, "update @"+aff+" { ip saddr }", "meta l4proto tcp dnat to 10.244.1.2:8080")

	// No endpoints: rejected through the no-endpoint maps, no chains.
	wantElems(t, rs, nftNoEndpointServices, "10.96.0.12 . udp . 53 : goto reject-chain")
	wantElems(t, rs, nftNoEndpointNodePorts, "udp . 30053 : goto reject-chain")
	noElem(t, rs, nftServiceIPsMap, "10.96.0.12 ")
	noElem(t, rs, nftServiceNodePortsMap, "udp . 30053")
	for name := range rs.chains {
		if strings.Contains(name, "default/none/") {
			t.Errorf("a service without endpoints has chain %s", name)
		}
	}
}

// TestRenderNFTExternal is TestRenderExternal's services in nftables mode.
func TestRenderNFTExternal(t *testing.T) {
	sps := []*servicePort{
		{Namespace: "default", Name: "lb", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.20", Port: 80, NodePort: 30080,
			ExternalIPs: []string{"192.0.2.10"}, LoadBalancerIPs: []string{"172.18.0.3"}, SourceRanges: []string{"172.18.0.0/16"},
			Endpoints: []string{"10.244.1.2:8080", "10.244.2.2:8080"}},
		{Namespace: "default", Name: "local", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.21", Port: 81, NodePort: 30081,
			LoadBalancerIPs: []string{"172.18.0.4"}, ExternalLocal: true, HealthCheckNodePort: 31000,
			Endpoints: []string{"10.244.1.3:8080", "10.244.2.3:8080"}, LocalEndpoints: []string{"10.244.1.3:8080"}},
		{Namespace: "default", Name: "elsewhere", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.22", Port: 82, NodePort: 30082,
			LoadBalancerIPs: []string{"172.18.0.5"}, ExternalLocal: true,
			Endpoints: []string{"10.244.2.4:8080"}},
		{Namespace: "default", Name: "internal", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.23", Port: 80, InternalLocal: true,
			Endpoints: []string{"10.244.2.5:8080"}},
	}
	rs := renderNFT(sps, "10.244.0.0/16")
	lb, local, elsewhere, internal := sps[0], sps[1], sps[2], sps[3]
	wantElems(t, rs, nftServiceIPsMap,
		"192.0.2.10 . tcp . 80 : goto "+nftExternalChain(lb),
		"172.18.0.3 . tcp . 80 : goto "+nftExternalChain(lb),
		"172.18.0.4 . tcp . 81 : goto "+nftExternalChain(local),
		"172.18.0.5 . tcp . 82 : goto "+nftExternalChain(elsewhere))
	// loadBalancerSourceRanges: checked before DNAT.
	wantElems(t, rs, nftFirewallIPsMap, "172.18.0.3 . tcp . 80 : goto "+nftFirewallChain(lb))
	wantRules(t, rs, nftFirewallChain(lb), "ip saddr 172.18.0.0/16 return", "drop")
	wantRules(t, rs, nftFilterPreroutingPreDNAT, "ct state new jump firewall-check")
	wantRules(t, rs, nftFirewallCheck, "ip daddr . meta l4proto . th dport vmap @firewall-ips")
	// externalTrafficPolicy Local: pods and the node anywhere (the node
	// masqueraded), the rest to the local endpoints, unmasqueraded.
	wantRules(t, rs, nftExternalChain(local),
		"ip saddr 10.244.0.0/16 goto "+nftServiceChain(local),
		"fib saddr type local jump mark-for-masquerade",
		"fib saddr type local goto "+nftServiceChain(local),
		"goto "+nftLocalChain(local))
	wantRules(t, rs, nftLocalChain(local), "meta l4proto tcp dnat to 10.244.1.3:8080")
	// No local endpoint: no jump to a local chain, and what is not
	// short-circuited is dropped.
	wantRules(t, rs, nftExternalChain(elsewhere),
		"ip saddr 10.244.0.0/16 goto "+nftServiceChain(elsewhere),
		"fib saddr type local jump mark-for-masquerade",
		"fib saddr type local goto "+nftServiceChain(elsewhere))
	wantElems(t, rs, nftNoEndpointNodePorts, "tcp . 30082 : drop")
	wantElems(t, rs, nftNoEndpointServices, "172.18.0.5 . tcp . 82 : drop")
	// internalTrafficPolicy Local without a local endpoint: dropped.
	wantElems(t, rs, nftNoEndpointServices, "10.96.0.23 . tcp . 80 : drop")
	noElem(t, rs, nftServiceIPsMap, "10.96.0.23 ")
	if _, ok := rs.chains[nftServiceChain(internal)]; ok {
		t.Errorf("internal Local service without local endpoints has a service chain:\n%s", rs)
	}

	// Two Services on one load balancer address and port: the first wins
	// (a map holds one verdict per key).
	dup := *local
	dup.Name, dup.LoadBalancerIPs, dup.Port = "dup", lb.LoadBalancerIPs, lb.Port
	rs = renderNFT(append(sps, &dup), "")
	wantElems(t, rs, nftServiceIPsMap, "172.18.0.3 . tcp . 80 : goto "+nftExternalChain(lb))
	wantRules(t, rs, nftServicesChain,
		"ip daddr @cluster-ips jump mark-for-masquerade",
		"ip daddr . meta l4proto . th dport vmap @service-ips",
		"fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports")
}

func TestValidateMode(t *testing.T) {
	for _, m := range []string{"", "iptables", "nftables"} {
		if err := ValidateMode(m); err != nil {
			t.Errorf("ValidateMode(%q) = %v", m, err)
		}
	}
	err := ValidateMode("ipvs")
	if err == nil || err.Error() != `unknown proxy mode "ipvs": want iptables or nftables` {
		t.Errorf("ValidateMode(ipvs) = %v", err)
	}
	if _, err := New(Config{Mode: "ipvs"}); err == nil || !strings.Contains(err.Error(), `unknown proxy mode "ipvs"`) {
		t.Errorf("New with mode ipvs: %v", err)
	}
}

// TestRenderNFTCached: a sync reuses the last one's rendering of the
// service ports that did not change, and the result is the table a fresh
// rendering gives.
func TestRenderNFTCached(t *testing.T) {
	mk := func(eps ...string) []*servicePort {
		return []*servicePort{
			{Namespace: "default", Name: "a", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.10", Port: 80, NodePort: 30080, Endpoints: eps},
			{Namespace: "default", Name: "b", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.11", Port: 80, AffinitySeconds: 60,
				Endpoints: []string{"10.244.1.5:8080", "10.244.1.6:8080"}},
		}
	}
	first, cache := renderNFTCached(mk("10.244.1.2:8080", "10.244.1.3:8080"), "10.244.0.0/16", nil)
	sps := mk("10.244.1.2:8080")
	second, _ := renderNFTCached(sps, "10.244.0.0/16", cache)
	if got, want := second.String(), renderNFT(sps, "10.244.0.0/16").String(); got != want {
		t.Errorf("cached rendering differs from a fresh one:\n%s\nwant\n%s", got, want)
	}
	a, b := nftServiceChain(sps[0]), nftServiceChain(sps[1])
	if second.chains[b] != first.chains[b] {
		t.Error("the unchanged service was rendered again")
	}
	if second.chains[a] == first.chains[a] || len(second.chains[a].rules) != 1 {
		t.Errorf("the changed service kept its old chain: %q", chainRules(second, a))
	}
}
