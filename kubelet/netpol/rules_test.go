package netpol

import (
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestRender: the restore input declares every chain it writes (names
// iptables accepts), shares a peer chain between pods that allow the same
// peers, gives an ipBlock with except its own chain, deletes chains of
// ours that are no longer wanted and leaves other chains alone.
func TestRender(t *testing.T) {
	t.Parallel()
	peers := &Peers{IPs: []string{"10.0.0.1"}, Blocks: []Block{{CIDR: "10.1.0.0/16", Except: []string{"10.1.2.0/24"}}}}
	in := &Direction{Rules: []Rule{{Peers: peers, Ports: []Port{{Protocol: api.ProtocolTCP, Port: 80, EndPort: 90}}}}}
	pods := []PodRules{
		{Namespace: "x", Name: "a", IP: "10.0.0.10", Ingress: in},
		{Namespace: "x", Name: "b", IP: "10.0.0.11", Ingress: in, Egress: &Direction{}},
		{Namespace: "x", Name: "c", IP: "10.0.0.12"},
	}
	stale := []string{"MINIK8S-NPI-OLDOLDOLDOLDOLDO", "KUBE-SERVICES", chainTop}
	data, live := render(pods, stale)
	text := string(data)
	for _, c := range live {
		if len(c) > 28 {
			t.Errorf("chain %s is longer than iptables allows", c)
		}
		if !strings.Contains(text, ":"+c+" - [0:0]\n") {
			t.Errorf("chain %s not declared", c)
		}
	}
	count := func(prefix string) int {
		n := 0
		for _, c := range live {
			if strings.HasPrefix(c, prefix) {
				n++
			}
		}
		return n
	}
	if count(podIngressPrefix) != 2 || count(podEgressPrefix) != 1 || count(peerPrefix) != 1 || count(blockPrefix) != 1 {
		t.Errorf("chains %v: want 2 ingress, 1 egress, 1 shared peer chain, 1 block chain", live)
	}
	if !strings.Contains(text, "-X MINIK8S-NPI-OLDOLDOLDOLDOLDO\n") || strings.Contains(text, "KUBE-SERVICES") || strings.Contains(text, "-X "+chainTop+"\n") {
		t.Errorf("stale chains handled wrong:\n%s", text)
	}
	for _, want := range []string{
		"-A MINIK8S-NETPOL -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN",
		"-p tcp -m tcp --dport 80:90 -j MINIK8S-NPP-",
		"-s 10.0.0.1/32 -j MARK --set-xmark 0x10000/0x10000",
		"-s 10.1.2.0/24 -j RETURN",
		"-s 10.0.0.10/32 -j RETURN", // x/a may reach itself
		"-d 10.0.0.11/32 -j RETURN", // x/b too
		`-m comment --comment "x/b egress not allowed by network policy" -j REJECT --reject-with icmp-port-unreachable`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "10.0.0.12") {
		t.Error("an unisolated pod has rules")
	}
	if !slices.Contains(ourChains([]byte(":MINIK8S-NETPOL - [0:0]\n:MINIK8S-NPP-X - [0:0]\n:FORWARD ACCEPT [0:0]\n")), chainTop) {
		t.Error("ourChains misses the top chain")
	}
}
