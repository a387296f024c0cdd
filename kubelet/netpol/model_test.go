package netpol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// The cluster of Kubernetes' netpol e2e tests (test/e2e/network/netpol):
// namespaces x, y, z, each with pods a, b, c that serve TCP and UDP on 80
// and 81 under the container port names serve-80-tcp and so on.
var matrixNamespaces = []string{"x", "y", "z"}
var matrixPods = []string{"a", "b", "c"}

func matrixState(policies ...*api.NetworkPolicy) State {
	var st State
	for i, ns := range matrixNamespaces {
		st.Namespaces = append(st.Namespaces, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns,
			Labels: map[string]string{"ns": ns, "kubernetes.io/metadata.name": ns}}})
		for j, p := range matrixPods {
			var ports []api.ContainerPort
			for _, port := range []int32{80, 81} {
				for _, proto := range []api.Protocol{api.ProtocolTCP, api.ProtocolUDP} {
					ports = append(ports, api.ContainerPort{Name: fmt.Sprintf("serve-%d-%s", port, strings.ToLower(string(proto))),
						ContainerPort: port, Protocol: proto})
				}
			}
			st.Pods = append(st.Pods, &api.Pod{
				ObjectMeta: api.ObjectMeta{Namespace: ns, Name: p, Labels: map[string]string{"pod": p}},
				Spec:       api.PodSpec{NodeName: "node-1", Containers: []api.Container{{Name: "c", Ports: ports}}},
				Status:     api.PodStatus{Phase: api.PodRunning, PodIP: fmt.Sprintf("10.244.%d.%d", i+1, j+10)},
			})
		}
	}
	for _, pol := range policies {
		if pol.Namespace == "" {
			pol.Namespace = "x"
		}
		st.Policies = append(st.Policies, pol)
	}
	return st
}

// reaches is what the rules say of a connection from one pod to another:
// the source's egress and the destination's ingress must both allow it.
func reaches(rules map[string]PodRules, from, to string, proto api.Protocol, port int32) bool {
	src, dst := rules[from], rules[to]
	return src.Egress.Allows(dst.IP, proto, port) && dst.Ingress.Allows(src.IP, proto, port)
}

func rulesByPod(prs []PodRules) map[string]PodRules {
	out := map[string]PodRules{}
	for _, pr := range prs {
		out[pr.Namespace+"/"+pr.Name] = pr
	}
	return out
}

func allPods() []string {
	var out []string
	for _, ns := range matrixNamespaces {
		for _, p := range matrixPods {
			out = append(out, ns+"/"+p)
		}
	}
	return out
}

// probe is one column of the matrix: a protocol and port and who reaches
// whom on it.
type probe struct {
	proto api.Protocol
	port  int32
	want  func(from, to string) bool
}

func ns(pod string) string { s, _, _ := strings.Cut(pod, "/"); return s }

func everyone(from, to string) bool { return true }

func policy(name string, sel map[string]string, spec func(*api.NetworkPolicySpec)) *api.NetworkPolicy {
	p := &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NetworkPolicySpec{PodSelector: api.LabelSelector{MatchLabels: sel}}}
	spec(&p.Spec)
	return p
}

func ptr[T any](v T) *T { return &v }

func tcp(port int32) api.NetworkPolicyPort {
	return api.NetworkPolicyPort{Protocol: ptr(api.ProtocolTCP), Port: ptr(api.FromInt(port))}
}

func named(name string, proto api.Protocol) api.NetworkPolicyPort {
	return api.NetworkPolicyPort{Protocol: ptr(proto), Port: ptr(api.FromString(name))}
}

func nsSel(l map[string]string) *api.LabelSelector  { return &api.LabelSelector{MatchLabels: l} }
func podSel(l map[string]string) *api.LabelSelector { return &api.LabelSelector{MatchLabels: l} }

var (
	ingressOnly = []api.PolicyType{policyTypeIngress}
	egressOnly  = []api.PolicyType{policyTypeEgress}
	both        = []api.PolicyType{policyTypeIngress, policyTypeEgress}
)

// TestMatrix follows the cases of Kubernetes' netpol e2e suite
// (network_policy.go), checked over the whole 9x9 matrix.
func TestMatrix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		policies []*api.NetworkPolicy
		probes   []probe
	}{
		{
			name:     "no policy: everyone reaches everyone",
			policies: nil,
			probes:   []probe{{api.ProtocolTCP, 80, everyone}, {api.ProtocolUDP, 81, everyone}},
		},
		{
			name: "default-deny-ingress",
			policies: []*api.NetworkPolicy{policy("deny-ingress", nil, func(s *api.NetworkPolicySpec) {
				s.PolicyTypes = ingressOnly
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return ns(to) != "x" }}},
		},
		{
			name: "default-deny-all",
			policies: []*api.NetworkPolicy{policy("deny-all", nil, func(s *api.NetworkPolicySpec) {
				s.PolicyTypes = both
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return ns(to) != "x" && ns(from) != "x" }}},
		},
		{
			name: "allow from pods within the server namespace by podSelector",
			policies: []*api.NetworkPolicy{policy("x-a-allows-x-b", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{PodSelector: podSel(map[string]string{"pod": "b"})}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return to != "x/a" || from == "x/b" }}},
		},
		{
			name: "allow ingress from pods in all namespaces",
			policies: []*api.NetworkPolicy{policy("allow-all-ns", nil, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: &api.LabelSelector{}}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, everyone}},
		},
		{
			name: "allow traffic only from a different namespace, by namespaceSelector",
			policies: []*api.NetworkPolicy{policy("allow-y", nil, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: nsSel(map[string]string{"ns": "y"})}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return ns(to) != "x" || ns(from) == "y" }}},
		},
		{
			name: "namespaceSelector with matchExpressions on the default namespace label",
			policies: []*api.NetworkPolicy{policy("not-y", nil, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: &api.LabelSelector{
					MatchExpressions: []api.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: "NotIn", Values: []string{"y"}}}}}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return ns(to) != "x" || ns(from) != "y" }}},
		},
		{
			name: "podSelector or namespaceSelector (two peers)",
			policies: []*api.NetworkPolicy{policy("or", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{
					{NamespaceSelector: nsSel(map[string]string{"ns": "y"})},
					{PodSelector: podSel(map[string]string{"pod": "b"})},
				}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return to != "x/a" || ns(from) == "y" || from == "x/b" }}},
		},
		{
			name: "podSelector and namespaceSelector (one peer)",
			policies: []*api.NetworkPolicy{policy("and", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{
					{NamespaceSelector: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "ns", Operator: "In", Values: []string{"y", "z"}}}},
						PodSelector: podSel(map[string]string{"pod": "b"})},
				}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return to != "x/a" || from == "y/b" || from == "z/b" }}},
		},
		{
			name: "ports: only 81 from namespace y",
			policies: []*api.NetworkPolicy{policy("y-on-81", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: nsSel(map[string]string{"ns": "y"})}},
					Ports: []api.NetworkPolicyPort{tcp(81)}}}
			})},
			probes: []probe{
				{api.ProtocolTCP, 80, func(from, to string) bool { return to != "x/a" }},
				{api.ProtocolTCP, 81, func(from, to string) bool { return to != "x/a" || ns(from) == "y" }},
				{api.ProtocolUDP, 81, func(from, to string) bool { return to != "x/a" }},
			},
		},
		{
			name: "stacked policies with overlapping podSelectors are additive",
			policies: []*api.NetworkPolicy{
				policy("y-on-80", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
					s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: nsSel(map[string]string{"ns": "y"})}},
						Ports: []api.NetworkPolicyPort{tcp(80)}}}
				}),
				policy("y-on-81", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
					s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: nsSel(map[string]string{"ns": "y"})}},
						Ports: []api.NetworkPolicyPort{tcp(81)}}}
				}),
			},
			probes: []probe{
				{api.ProtocolTCP, 80, func(from, to string) bool { return to != "x/a" || ns(from) == "y" }},
				{api.ProtocolTCP, 81, func(from, to string) bool { return to != "x/a" || ns(from) == "y" }},
			},
		},
		{
			name: "allow-all ingress takes precedence over deny",
			policies: []*api.NetworkPolicy{
				policy("deny", nil, func(s *api.NetworkPolicySpec) { s.PolicyTypes = ingressOnly }),
				policy("allow-all", nil, func(s *api.NetworkPolicySpec) { s.Ingress = []api.NetworkPolicyIngressRule{{}} }),
			},
			probes: []probe{{api.ProtocolTCP, 80, everyone}},
		},
		{
			name: "ingress on one named port",
			policies: []*api.NetworkPolicy{policy("named", nil, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{named("serve-81-udp", api.ProtocolUDP)}}}
			})},
			probes: []probe{
				{api.ProtocolUDP, 81, everyone},
				{api.ProtocolUDP, 80, func(from, to string) bool { return ns(to) != "x" }},
				{api.ProtocolTCP, 81, func(from, to string) bool { return ns(to) != "x" }},
			},
		},
		{
			name: "a named port no container has limits to nothing, not to every port",
			policies: []*api.NetworkPolicy{policy("no-such-port", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{named("no-such-port", api.ProtocolTCP)}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return to != "x/a" }}},
		},
		{
			name: "egress on one named port resolves against the destination",
			policies: []*api.NetworkPolicy{policy("egress-named", nil, func(s *api.NetworkPolicySpec) {
				s.PolicyTypes = egressOnly
				s.Egress = []api.NetworkPolicyEgressRule{{Ports: []api.NetworkPolicyPort{named("serve-80-tcp", api.ProtocolTCP)}}}
			})},
			probes: []probe{
				{api.ProtocolTCP, 80, everyone},
				{api.ProtocolTCP, 81, func(from, to string) bool { return ns(from) != "x" }},
			},
		},
		{
			name: "egress deny with DNS allowed",
			policies: []*api.NetworkPolicy{policy("dns-only", nil, func(s *api.NetworkPolicySpec) {
				s.PolicyTypes = egressOnly
				s.Egress = []api.NetworkPolicyEgressRule{{Ports: []api.NetworkPolicyPort{
					{Protocol: ptr(api.ProtocolUDP), Port: ptr(api.FromInt(53))}, {Protocol: ptr(api.ProtocolTCP), Port: ptr(api.FromInt(53))}}}}
			})},
			probes: []probe{
				{api.ProtocolUDP, 53, everyone},
				{api.ProtocolTCP, 53, everyone},
				{api.ProtocolUDP, 80, func(from, to string) bool { return ns(from) != "x" }},
			},
		},
		{
			name: "egress to a pod in another namespace by podSelector and namespaceSelector",
			policies: []*api.NetworkPolicy{policy("to-y-b", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.PolicyTypes = egressOnly
				s.Egress = []api.NetworkPolicyEgressRule{{To: []api.NetworkPolicyPeer{{
					NamespaceSelector: nsSel(map[string]string{"ns": "y"}), PodSelector: podSel(map[string]string{"pod": "b"})}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return from != "x/a" || to == "y/b" }}},
		},
		{
			name: "ingress and egress together, policyTypes defaulted from the rules",
			policies: []*api.NetworkPolicy{policy("both", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{PodSelector: podSel(map[string]string{"pod": "b"})}}}}
				s.Egress = []api.NetworkPolicyEgressRule{{To: []api.NetworkPolicyPeer{{PodSelector: podSel(map[string]string{"pod": "c"})}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool {
				return (to != "x/a" || from == "x/b") && (from != "x/a" || to == "x/c")
			}}},
		},
		{
			name: "client-side egress deny wins over a server that allows",
			policies: []*api.NetworkPolicy{
				policy("x-a-no-egress", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) { s.PolicyTypes = egressOnly }),
				policy("allow-everything-in", nil, func(s *api.NetworkPolicySpec) { s.Ingress = []api.NetworkPolicyIngressRule{{}} }),
			},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return from != "x/a" }}},
		},
		{
			name: "any port on one protocol",
			policies: []*api.NetworkPolicy{policy("udp-only", nil, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{{Protocol: ptr(api.ProtocolUDP)}}}}
			})},
			probes: []probe{
				{api.ProtocolUDP, 80, everyone},
				{api.ProtocolUDP, 81, everyone},
				{api.ProtocolTCP, 80, func(from, to string) bool { return ns(to) != "x" }},
			},
		},
		{
			name: "SCTP is not TCP",
			policies: []*api.NetworkPolicy{policy("sctp", nil, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{{Protocol: ptr(api.ProtocolSCTP), Port: ptr(api.FromInt(80))}}}}
			})},
			probes: []probe{{api.ProtocolTCP, 80, func(from, to string) bool { return ns(to) != "x" }}},
		},
		{
			name: "endPort: a range of ports",
			policies: []*api.NetworkPolicy{policy("range", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
				s.Ingress = []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{{Protocol: ptr(api.ProtocolTCP), Port: ptr(api.FromInt(80)), EndPort: ptr(int32(90))}}}}
			})},
			probes: []probe{
				{api.ProtocolTCP, 79, func(from, to string) bool { return to != "x/a" }},
				{api.ProtocolTCP, 80, everyone},
				{api.ProtocolTCP, 85, everyone},
				{api.ProtocolTCP, 90, everyone},
				{api.ProtocolTCP, 91, func(from, to string) bool { return to != "x/a" }},
			},
		},
		{
			name: "a policy applies only to pods of its namespace",
			policies: []*api.NetworkPolicy{policy("deny", nil, func(s *api.NetworkPolicySpec) {
				s.PolicyTypes = ingressOnly
			})},
			probes: []probe{{api.ProtocolUDP, 80, func(from, to string) bool { return ns(to) != "x" }}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rules := rulesByPod(Compute(matrixState(tc.policies...), "node-1"))
			for _, pr := range tc.probes {
				var wrong []string
				for _, from := range allPods() {
					for _, to := range allPods() {
						if got, want := reaches(rules, from, to, pr.proto, pr.port), pr.want(from, to); got != want {
							wrong = append(wrong, fmt.Sprintf("%s -> %s: got %v, want %v", from, to, got, want))
						}
					}
				}
				if len(wrong) > 0 {
					t.Errorf("%s/%d: %d cells wrong:\n%s", pr.proto, pr.port, len(wrong), strings.Join(wrong, "\n"))
				}
			}
		})
	}
}

// TestIPBlock: the e2e cases "should enforce except clause while egress
// access to server in CIDR block" and "should ensure an IP overlapping both
// IPBlock.CIDR and IPBlock.Except is allowed" (by another policy).
func TestIPBlock(t *testing.T) {
	t.Parallel()
	except := policy("cidr-except", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
		s.PolicyTypes = egressOnly
		s.Egress = []api.NetworkPolicyEgressRule{{To: []api.NetworkPolicyPeer{{IPBlock: &api.IPBlock{CIDR: "10.244.1.0/24", Except: []string{"10.244.1.11/32"}}}}}}
	})
	rules := rulesByPod(Compute(matrixState(except), "node-1"))
	for to, want := range map[string]bool{"x/a": true, "x/b": false, "x/c": true, "y/a": false, "z/c": false} {
		if got := reaches(rules, "x/a", to, api.ProtocolTCP, 80); got != want {
			t.Errorf("x/a -> %s with except: got %v, want %v", to, got, want)
		}
	}
	if !rules["x/a"].Egress.Allows("10.244.1.200", api.ProtocolTCP, 80) || rules["x/a"].Egress.Allows("8.8.8.8", api.ProtocolUDP, 53) {
		t.Errorf("the block is not the CIDR minus the except: %v", rules["x/a"].Egress.Rules)
	}
	exact := policy("cidr-exact", map[string]string{"pod": "a"}, func(s *api.NetworkPolicySpec) {
		s.PolicyTypes = egressOnly
		s.Egress = []api.NetworkPolicyEgressRule{{To: []api.NetworkPolicyPeer{{IPBlock: &api.IPBlock{CIDR: "10.244.1.11/32"}}}}}
	})
	rules = rulesByPod(Compute(matrixState(except, exact), "node-1"))
	if !reaches(rules, "x/a", "x/b", api.ProtocolTCP, 80) {
		t.Error("an IP in one policy's except and another's CIDR is not allowed")
	}
	// Ingress ipBlock: from y's pods by address, IPv6 blocks ignored.
	in := policy("from-y-block", nil, func(s *api.NetworkPolicySpec) {
		s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{IPBlock: &api.IPBlock{CIDR: "10.244.2.0/24"}}, {IPBlock: &api.IPBlock{CIDR: "::/0"}}}}}
	})
	rules = rulesByPod(Compute(matrixState(in), "node-1"))
	for _, from := range allPods() {
		if got, want := reaches(rules, from, "x/c", api.ProtocolTCP, 80), ns(from) == "y"; got != want {
			t.Errorf("%s -> x/c: got %v, want %v", from, got, want)
		}
	}
}

// TestComputeScope: which pods get rules and which pods are peers.
func TestComputeScope(t *testing.T) {
	t.Parallel()
	st := matrixState(policy("from-b", nil, func(s *api.NetworkPolicySpec) {
		s.Ingress = []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{PodSelector: podSel(map[string]string{"pod": "b"})}}}}
	}))
	st.Pods[1].Spec.NodeName = "node-2" // x/b elsewhere: a peer, not ours
	st.Pods[2].Status.PodIP = ""        // x/c has no IP yet
	st.Pods[3].Spec.HostNetwork = true  // y/a on the host network: not isolated
	st.Pods = append(st.Pods, &api.Pod{ // a finished pod with x/b's label: not a peer
		ObjectMeta: api.ObjectMeta{Namespace: "x", Name: "done", Labels: map[string]string{"pod": "b"}},
		Spec:       api.PodSpec{NodeName: "node-1"},
		Status:     api.PodStatus{Phase: api.PodSucceeded, PodIP: "10.244.9.9"},
	})
	got := map[string]string{}
	for _, pr := range Compute(st, "node-1") {
		var rs []string
		if pr.Ingress != nil {
			for _, r := range pr.Ingress.Rules {
				rs = append(rs, r.String())
			}
		}
		got[pr.Namespace+"/"+pr.Name] = pr.IP + " " + strings.Join(rs, ";")
	}
	want := map[string]string{
		"x/a": "10.244.1.10 [10.244.1.11]",
		"y/b": "10.244.2.11 ", "y/c": "10.244.2.12 ",
		"z/a": "10.244.3.10 ", "z/b": "10.244.3.11 ", "z/c": "10.244.3.12 ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}
