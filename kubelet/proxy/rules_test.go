package proxy

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func ptr[T any](v T) *T { return &v }

func TestBuildServicePorts(t *testing.T) {
	svc := func(name, ip string, ports ...api.ServicePort) *api.Service {
		return &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name},
			Spec: api.ServiceSpec{ClusterIP: ip, Ports: ports}}
	}
	slice := func(svcName string, port int32, portName string, eps ...api.Endpoint) *api.EndpointSlice {
		return &api.EndpointSlice{
			ObjectMeta:  api.ObjectMeta{Namespace: "ns", Name: svcName + "-x", Labels: map[string]string{api.LabelServiceName: svcName}},
			AddressType: api.AddressTypeIPv4,
			Ports:       []api.EndpointSlicePort{{Name: ptr(portName), Port: ptr(port), Protocol: ptr(api.ProtocolTCP)}},
			Endpoints:   eps,
		}
	}
	ep := func(ip string, ready, serving, terminating bool) api.Endpoint {
		return api.Endpoint{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating}}
	}
	services := []*api.Service{
		svc("web", "10.96.0.10", api.ServicePort{Name: "http", Port: 80, Protocol: api.ProtocolTCP}),
		svc("headless", api.ClusterIPNone, api.ServicePort{Port: 80}),
		svc("draining", "10.96.0.11", api.ServicePort{Port: 80, Protocol: api.ProtocolTCP}),
		svc("empty", "10.96.0.12", api.ServicePort{Port: 53, Protocol: api.ProtocolUDP}),
	}
	slices := []*api.EndpointSlice{
		slice("web", 8080, "http", ep("10.244.1.3", true, true, false), ep("10.244.1.2", true, true, false), ep("10.244.2.9", false, false, false)),
		slice("web", 9090, "other", ep("10.244.1.4", true, true, false)),
		slice("draining", 8080, "", ep("10.244.3.1", false, true, true), ep("10.244.3.2", false, false, true)),
		slice("headless", 80, "", ep("10.244.4.1", true, true, false)),
	}
	got := buildServicePorts(services, slices, "")
	want := map[string]string{
		"ns/draining": "10.244.3.1:8080",
		"ns/empty":    "",
		"ns/web:http": "10.244.1.2:8080,10.244.1.3:8080",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d service ports, want %d: %+v", len(got), len(want), got)
	}
	for _, sp := range got {
		w, ok := want[sp.String()]
		if !ok {
			t.Errorf("unexpected service port %s", sp)
			continue
		}
		if g := strings.Join(sp.Endpoints, ","); g != w {
			t.Errorf("%s endpoints %q, want %q", sp, g, w)
		}
	}
}

func TestRender(t *testing.T) {
	sps := []*servicePort{
		{Namespace: "default", Name: "web", PortName: "http", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.10", Port: 80, NodePort: 30080,
			Endpoints: []string{"10.244.1.2:8080", "10.244.1.3:8080", "10.244.2.4:8080"}},
		{Namespace: "default", Name: "sticky", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.11", Port: 80, AffinitySeconds: 10800,
			Endpoints: []string{"10.244.1.2:8080"}},
		{Namespace: "default", Name: "none", Protocol: api.ProtocolUDP, ClusterIP: "10.96.0.12", Port: 53, NodePort: 30053},
	}
	web := svcChain(sps[0])
	rs := render(sps, "10.244.0.0/16")
	nat, filter := string(rs.natRestore(nil, []string{web, "KUBE-SVC-STALESTALESTALE1", "KUBE-SEP-STALESTALESTALE2"})), string(filterRestore(rs.filter))
	mustContain := func(text string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(text, l+"\n") {
				t.Errorf("missing line %q in\n%s", l, text)
			}
		}
	}
	sep0, sep1, sep2 := sepChain(sps[0], "10.244.1.2:8080"), sepChain(sps[0], "10.244.1.3:8080"), sepChain(sps[0], "10.244.2.4:8080")
	mustContain(nat,
		`-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j `+web,
		`-A `+web+` -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ`,
		`-A `+web+` -m comment --comment "default/web:http -> 10.244.1.2:8080" -m statistic --mode random --probability 0.3333333333 -j `+sep0,
		`-A `+web+` -m comment --comment "default/web:http -> 10.244.1.3:8080" -m statistic --mode random --probability 0.5000000000 -j `+sep1,
		`-A `+web+` -m comment --comment "default/web:http -> 10.244.2.4:8080" -j `+sep2,
		`-A `+sep2+` -m comment --comment "default/web:http" -p tcp -m tcp -j DNAT --to-destination 10.244.2.4:8080`,
		`-A `+sep2+` -m comment --comment "default/web:http" -s 10.244.2.4/32 -j KUBE-MARK-MASQ`,
		`-A KUBE-NODEPORTS -m comment --comment "default/web:http" -p tcp -m tcp --dport 30080 -j `+extChain(sps[0]),
		`-A `+extChain(sps[0])+` -m comment --comment "masquerade traffic for default/web:http external destinations" -j KUBE-MARK-MASQ`,
		`-A `+extChain(sps[0])+` -j `+web,
		// Stale chains are flushed and deleted; a chain still in use is not.
		":KUBE-SVC-STALESTALESTALE1 - [0:0]", "-X KUBE-SVC-STALESTALESTALE1", "-X KUBE-SEP-STALESTALESTALE2",
	)
	if strings.Contains(nat, "-X "+web) {
		t.Errorf("a live chain is deleted:\n%s", nat)
	}
	// The nodeports jump is the last rule of KUBE-SERVICES.
	var lastServices string
	for _, l := range strings.Split(nat, "\n") {
		if strings.HasPrefix(l, "-A KUBE-SERVICES ") {
			lastServices = l
		}
	}
	if !strings.HasSuffix(lastServices, "-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS") {
		t.Errorf("last KUBE-SERVICES rule is %q", lastServices)
	}
	sticky := svcChain(sps[1])
	stickySep := sepChain(sps[1], "10.244.1.2:8080")
	mustContain(nat,
		`-A `+sticky+` -m comment --comment "default/sticky -> 10.244.1.2:8080" -m recent --name `+stickySep+` --rcheck --seconds 10800 --reap -j `+stickySep,
		`-A `+stickySep+` -m comment --comment "default/sticky" -p tcp -m recent --name `+stickySep+` --set -m tcp -j DNAT --to-destination 10.244.1.2:8080`,
	)
	mustContain(filter,
		`-A KUBE-SERVICES -m comment --comment "default/none has no endpoints" -d 10.96.0.12/32 -p udp -m udp --dport 53 -j REJECT --reject-with icmp-port-unreachable`,
		`-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/none has no endpoints" -m addrtype --dst-type LOCAL -p udp -m udp --dport 30053 -j REJECT --reject-with icmp-port-unreachable`,
		// Every ClusterIP refuses the ports and protocols its Service lacks.
		`-A KUBE-SERVICES -m comment --comment "default/web cluster IP: no such port" -d 10.96.0.10/32 -j REJECT --reject-with icmp-port-unreachable`,
		`-A KUBE-SERVICES -m comment --comment "default/sticky cluster IP: no such port" -d 10.96.0.11/32 -j REJECT --reject-with icmp-port-unreachable`,
		`-A KUBE-SERVICES -m comment --comment "default/none cluster IP: no such port" -d 10.96.0.12/32 -j REJECT --reject-with icmp-port-unreachable`,
	)
	if strings.Contains(nat, "default/none") {
		t.Errorf("a service without endpoints has nat rules:\n%s", nat)
	}
	// A partial sync writes only what changed: one endpoint less for web
	// rewrites web's chain and drops one endpoint chain, nothing of sticky.
	prev := rs.bodies()
	sps[0].Endpoints = sps[0].Endpoints[:2]
	rs2 := render(sps, "10.244.0.0/16")
	var existing []string
	for c := range prev {
		if strings.HasPrefix(c, "KUBE-S") && c != "KUBE-SERVICES" {
			existing = append(existing, c)
		}
	}
	partial := string(rs2.natRestore(prev, existing))
	mustContain(partial, ":"+web+" - [0:0]", ":KUBE-SERVICES - [0:0]", "-X "+sep2)
	for _, c := range []string{sticky, stickySep, sep0, sep1} {
		if strings.Contains(partial, ":"+c+" ") {
			t.Errorf("partial sync rewrites unchanged chain %s:\n%s", c, partial)
		}
	}
	if got := existingChains([]byte("*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:" + web + " - [0:0]\n:KUBE-SEP-ABC - [0:0]\nCOMMIT\n")); strings.Join(got, ",") != web+",KUBE-SEP-ABC" {
		t.Errorf("existingChains = %v", got)
	}
}

// TestRenderExternal: external IPs and load balancer addresses go through
// the EXT chain as node ports do; loadBalancerSourceRanges admit only
// their sources (the rest dropped in the filter table); with
// externalTrafficPolicy Local external traffic keeps its source and goes
// to this node's endpoints (pods and the node itself anywhere), and is
// dropped where the node has none; internalTrafficPolicy Local sends
// ClusterIP traffic to this node's endpoints only, dropped without them.
func TestRenderExternal(t *testing.T) {
	sps := []*servicePort{
		{Namespace: "default", Name: "lb", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.20", Port: 80, NodePort: 30080,
			ExternalIPs: []string{"192.0.2.10"}, LoadBalancerIPs: []string{"172.18.0.3"}, SourceRanges: []string{"172.18.0.0/16"},
			Endpoints: []string{"10.244.1.2:8080", "10.244.2.2:8080"}},
		{Namespace: "default", Name: "local", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.21", Port: 80, NodePort: 30081,
			LoadBalancerIPs: []string{"172.18.0.3"}, ExternalLocal: true, HealthCheckNodePort: 31000,
			Endpoints: []string{"10.244.1.3:8080", "10.244.2.3:8080"}, LocalEndpoints: []string{"10.244.1.3:8080"}},
		{Namespace: "default", Name: "elsewhere", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.22", Port: 80, NodePort: 30082,
			LoadBalancerIPs: []string{"172.18.0.3"}, ExternalLocal: true,
			Endpoints: []string{"10.244.2.4:8080"}},
		{Namespace: "default", Name: "internal", Protocol: api.ProtocolTCP, ClusterIP: "10.96.0.23", Port: 80, InternalLocal: true,
			Endpoints: []string{"10.244.2.5:8080"}},
	}
	rs := render(sps, "10.244.0.0/16")
	nat, filter := string(rs.natRestore(nil, nil)), string(filterRestore(rs.filter))
	has := func(text string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(text, l+"\n") {
				t.Errorf("missing line %q in\n%s", l, text)
			}
		}
	}
	lb, local, elsewhere := sps[0], sps[1], sps[2]
	has(nat,
		`-A KUBE-SERVICES -m comment --comment "default/lb external IP" -d 192.0.2.10/32 -p tcp -m tcp --dport 80 -j `+extChain(lb),
		`-A KUBE-SERVICES -m comment --comment "default/lb loadbalancer IP" -d 172.18.0.3/32 -p tcp -m tcp --dport 80 -j `+fwChain(lb),
		`-A `+fwChain(lb)+` -m comment --comment "default/lb loadbalancer IP" -s 172.18.0.0/16 -j `+extChain(lb),
		`-A `+extChain(lb)+` -j `+svcChain(lb),
		`-A KUBE-SERVICES -m comment --comment "default/local loadbalancer IP" -d 172.18.0.3/32 -p tcp -m tcp --dport 80 -j `+extChain(local),
		`-A `+extChain(local)+` -m comment --comment "pod traffic for default/local external destinations" -s 10.244.0.0/16 -j `+svcChain(local),
		`-A `+extChain(local)+` -m comment --comment "masquerade LOCAL traffic for default/local external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
		`-A `+extChain(local)+` -m comment --comment "route LOCAL traffic for default/local external destinations" -m addrtype --src-type LOCAL -j `+svcChain(local),
		`-A `+extChain(local)+` -j `+svlChain(local),
		`-A `+svlChain(local)+` -m comment --comment "default/local -> 10.244.1.3:8080" -j `+sepChain(local, "10.244.1.3:8080"),
		`-A KUBE-NODEPORTS -m comment --comment "default/local" -p tcp -m tcp --dport 30081 -j `+extChain(local),
	)
	// internalTrafficPolicy Local without a local endpoint: no DNAT.
	if strings.Contains(nat, `"default/internal cluster IP"`) {
		t.Errorf("ClusterIP traffic of an internal Local service without local endpoints is DNATed:\n%s", nat)
	}
	has(filter,
		`-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/lb traffic not accepted by `+fwChain(lb)+`" -d 172.18.0.3/32 -p tcp -m tcp --dport 80 -j DROP`,
		`-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/elsewhere has no local endpoints" -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30082 -j DROP`,
		`-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/elsewhere has no local endpoints" -d 172.18.0.3/32 -p tcp -m tcp --dport 80 -j DROP`,
		`-A KUBE-SERVICES -m comment --comment "default/internal has no local endpoints" -d 10.96.0.23/32 -p tcp -m tcp --dport 80 -j DROP`,
	)
	// External traffic to a Local service is not masqueraded.
	if strings.Contains(nat, "masquerade traffic for default/local external") {
		t.Errorf("externalTrafficPolicy Local masquerades external traffic:\n%s", nat)
	}
	// The Local SVL chain holds only the node's endpoint.
	if strings.Contains(nat, "-A "+svlChain(local)+` -m comment --comment "default/local -> 10.244.2.3:8080"`) {
		t.Errorf("a remote endpoint in the local chain:\n%s", nat)
	}
	// No local endpoint: the EXT chain has no jump to the empty SVL chain.
	if strings.Contains(nat, "-A "+extChain(elsewhere)+" -j "+svlChain(elsewhere)) {
		t.Errorf("EXT jumps to an empty local chain:\n%s", nat)
	}
}
