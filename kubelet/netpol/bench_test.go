package netpol

import (
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/proxy"
)

// benchState is a cluster of 2,000 pods in 50 namespaces (100 on the
// node under test) and 500 policies: per namespace a default deny, and
// allow rules from an app label, another namespace, a block and a named
// port.
func benchState() State {
	var st State
	for n := range 50 {
		ns := fmt.Sprintf("ns-%d", n)
		st.Namespaces = append(st.Namespaces, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns, Labels: map[string]string{"team": fmt.Sprint(n % 5)}}})
		for p := range 40 {
			node := fmt.Sprintf("node-%d", (n*40+p)%20)
			st.Pods = append(st.Pods, &api.Pod{
				ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pod-%d", p), Labels: map[string]string{"app": fmt.Sprintf("app-%d", p%10)}},
				Spec: api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c",
					Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
				Status: api.PodStatus{Phase: api.PodRunning, PodIP: fmt.Sprintf("10.%d.%d.%d", 244+n/50, n%50, p+2)},
			})
		}
		st.Policies = append(st.Policies, &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "deny"},
			Spec: api.NetworkPolicySpec{PolicyTypes: both}})
		for i := range 9 {
			st.Policies = append(st.Policies, &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("allow-%d", i)},
				Spec: api.NetworkPolicySpec{
					PodSelector: api.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app-%d", i)}},
					PolicyTypes: both,
					Ingress: []api.NetworkPolicyIngressRule{{
						From: []api.NetworkPolicyPeer{
							{PodSelector: podSel(map[string]string{"app": fmt.Sprintf("app-%d", i+1)})},
							{NamespaceSelector: nsSel(map[string]string{"team": fmt.Sprint(i % 5)}), PodSelector: podSel(map[string]string{"app": "app-0"})},
							{IPBlock: &api.IPBlock{CIDR: "192.168.0.0/16", Except: []string{"192.168.1.0/24"}}},
						},
						Ports: []api.NetworkPolicyPort{named("http", api.ProtocolTCP), tcp(9090)},
					}},
					Egress: []api.NetworkPolicyEgressRule{
						{To: []api.NetworkPolicyPeer{{NamespaceSelector: nsSel(map[string]string{"team": fmt.Sprint(i % 5)})}}, Ports: []api.NetworkPolicyPort{named("http", api.ProtocolTCP)}},
						{Ports: []api.NetworkPolicyPort{{Protocol: ptr(api.ProtocolUDP), Port: ptr(api.FromInt(53))}}},
					},
				}})
		}
	}
	return st
}

// BenchmarkComputeAndRender: one sync's work before iptables-restore, for
// one node of a 2,000-pod, 500-policy cluster.
func BenchmarkComputeAndRender(b *testing.B) {
	st := benchState()
	var rules int
	for b.Loop() {
		data, _ := render(Compute(st, "node-3"), nil)
		rules = len(data)
	}
	b.ReportMetric(float64(rules), "bytes/restore")
}

// BenchmarkSyncInNetns: a whole sync for that node (compute, render,
// iptables-restore into a network namespace): "full" from an empty table,
// "policy added" when a new policy selecting 10 of its pods came in (what
// a NetworkPolicy create costs once the informers have it; it alternates
// with the policy removed).
func BenchmarkSyncInNetns(b *testing.B) {
	n := newTestNet(b, 0)
	runner := proxy.IPTables{Netns: n.node}
	b.Cleanup(func() { _ = Cleanup(runner) })
	st := benchState()
	extra := &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Namespace: "ns-3", Name: "new"},
		Spec: api.NetworkPolicySpec{PodSelector: api.LabelSelector{MatchLabels: map[string]string{"app": "app-9"}},
			Ingress: []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{NamespaceSelector: nsSel(map[string]string{"team": "1"})}}}}}}
	with := st
	with.Policies = append(append([]*api.NetworkPolicy(nil), st.Policies...), extra)
	sync := func(st State, existing []string) []string {
		data, live := render(Compute(st, "node-3"), existing)
		if err := runner.Restore(data); err != nil {
			b.Fatal(err)
		}
		return live
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := Cleanup(runner); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			sync(st, nil)
		}
	})
	b.Run("policy added", func(b *testing.B) {
		live := sync(st, nil)
		i := 0
		for b.Loop() {
			if i%2 == 0 {
				live = sync(with, live)
			} else {
				live = sync(st, live)
			}
			i++
		}
		b.ReportMetric(float64(len(live)), "chains")
	})
}
