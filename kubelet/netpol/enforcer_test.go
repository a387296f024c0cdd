package netpol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/proxy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// connectivity is one expected cell: from a namespace to an address.
type connectivity struct {
	from, network, addr string
	want                bool
}

func (c connectivity) String() string {
	return fmt.Sprintf("%s -> %s/%s", c.from, c.network, c.addr)
}

// TestEnforcerInNetns runs the enforcer against a real apiserver, writing
// real iptables rules in a network namespace the test made, and checks real
// TCP and UDP connectivity between three pods (x/a, x/b, y/c), the node
// and an address outside as policies come and go: default-deny ingress,
// then allow by pod and namespace labels, ipBlock with except, egress
// deny with DNS allowed (to outside and to the node), a named port and an
// endPort range; finally everything passes again and Cleanup leaves no
// rule.
func TestEnforcerInNetns(t *testing.T) {
	n := newTestNet(t, 3)
	podNS := []string{"x", "x", "y"}
	podName := []string{"a", "b", "c"}
	for i := range 3 {
		for _, port := range []int{80, 81, 82} {
			n.serveTCP(n.pods[i], n.podIP(i), port)
		}
		n.serveUDP(n.pods[i], n.podIP(i), 53)
	}
	n.serveTCP(n.ext, extIP, 80)
	n.serveUDP(n.ext, extIP, 53)
	n.serveTCP(n.node, nodeIP, 80)
	n.serveUDP(n.node, nodeIP, 53)

	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, ns := range []string{"x", "y"} {
		if _, err := client.Resource[api.Namespace](c).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns, Labels: map[string]string{"ns": ns}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		pods := client.Resource[api.Pod](c).Namespace(podNS[i])
		pod, err := pods.Create(ctx, &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: podName[i], Labels: map[string]string{"pod": podName[i]}},
			Spec: api.PodSpec{NodeName: "node-a", Containers: []api.Container{{Name: "srv", Image: "agnhost",
				Ports: []api.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "http-alt", ContainerPort: 81}, {Name: "dns", ContainerPort: 53, Protocol: api.ProtocolUDP}}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = api.PodRunning
		pod.Status.PodIP = n.podIP(i)
		pod.Status.PodIPs = []api.PodIP{{IP: n.podIP(i)}}
		if _, err := pods.UpdateStatus(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}

	runner := proxy.IPTables{Netns: n.node}
	reg := prometheus.NewRegistry()
	e, err := New(Config{Client: c, NodeName: "node-a", Runner: runner, MinSyncPeriod: 20 * time.Millisecond, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := Cleanup(runner); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if save, _ := runner.Save("filter"); strings.Contains(string(save), "MINIK8S-N") {
			t.Errorf("rules left after cleanup:\n%s", save)
		}
	})

	policies := map[string]*client.ResourceClient[api.NetworkPolicy, *api.NetworkPolicy]{
		"x": client.Resource[api.NetworkPolicy](c).Namespace("x"),
		"y": client.Resource[api.NetworkPolicy](c).Namespace("y"),
	}
	create := func(ns, name string, spec api.NetworkPolicySpec) {
		t.Helper()
		if _, err := policies[ns].Create(ctx, &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Name: name}, Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(ns, name string) {
		t.Helper()
		if err := policies[ns].Delete(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	a, b, cc := n.pods[0], n.pods[1], n.pods[2]
	addr := func(i, port int) string { return fmt.Sprintf("%s:%d", n.podIP(i), port) }
	// expect polls until every cell is as wanted.
	expect := func(step string, cells []connectivity) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			var wrong []string
			for _, cell := range cells {
				err := connect(cell.from, cell.network, cell.addr)
				if (err == nil) != cell.want {
					wrong = append(wrong, fmt.Sprintf("%v: want allowed=%v, got err=%v", cell, cell.want, err))
				}
			}
			if len(wrong) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s:\n%s", step, strings.Join(wrong, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// everyone: all pods, the node and outside reach all pods on port.
	everyone := func(port int, allowed func(from string, to int) bool) []connectivity {
		var out []connectivity
		for _, from := range []string{a, b, cc, n.node, n.ext} {
			for to := range 3 {
				if from == n.pods[to] {
					continue
				}
				out = append(out, connectivity{from, "tcp", addr(to, port), allowed(from, to)})
			}
		}
		return out
	}
	all := func(string, int) bool { return true }

	for deadline := time.Now().Add(30 * time.Second); !e.Synced(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no rules written within 30s")
		}
	}
	expect("no policy", everyone(80, all))
	// A connection from b to a open before the deny.
	old, err := dial(b, "tcp", addr(0, 81))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()

	create("x", "default-deny-ingress", api.NetworkPolicySpec{PolicyTypes: []api.PolicyType{"Ingress"}})
	expect("default-deny-ingress in x", everyone(80, func(from string, to int) bool {
		return to == 2 || from == n.node // the node always reaches its pods
	}))
	// Refused at once, as kube-router does, not left to time out: on the
	// bridge (x/b -> x/a) and routed from outside.
	for _, from := range []string{b, n.ext} {
		start := time.Now()
		if err := connect(from, "tcp", addr(0, 80)); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s -> x/a under default deny: %v, want connection refused", from, err)
		}
		t.Logf("%s -> x/a refused in %v", from, time.Since(start))
	}
	// Replies of open connections pass: policies apply to new connections.
	if _, err := old.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	old.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.ReadFull(old, make([]byte, 2)); err != nil {
		t.Errorf("connection open before the policy: %v", err)
	}

	create("x", "allow-c-to-a", api.NetworkPolicySpec{
		PodSelector: api.LabelSelector{MatchLabels: map[string]string{"pod": "a"}},
		Ingress: []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{
			NamespaceSelector: &api.LabelSelector{MatchLabels: map[string]string{"ns": "y"}},
			PodSelector:       &api.LabelSelector{MatchLabels: map[string]string{"pod": "c"}}}}}},
	})
	expect("allow from y/c (namespace and pod labels) to x/a", everyone(80, func(from string, to int) bool {
		return to == 2 || from == n.node || from == cc && to == 0
	}))

	remove("x", "allow-c-to-a")
	create("x", "allow-block", api.NetworkPolicySpec{
		PodSelector: api.LabelSelector{MatchLabels: map[string]string{"pod": "a"}},
		Ingress: []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{
			IPBlock: &api.IPBlock{CIDR: "10.244.250.0/24", Except: []string{n.podIP(2) + "/32"}}}}}},
	})
	expect("x/a from 10.244.250.0/24 except y/c", everyone(80, func(from string, to int) bool {
		return to == 2 || from == n.node || from == b && to == 0
	}))

	remove("x", "allow-block")
	remove("x", "default-deny-ingress")
	expect("no policy again", everyone(80, all))

	create("y", "egress-dns-only", api.NetworkPolicySpec{
		PolicyTypes: []api.PolicyType{"Egress"},
		Egress: []api.NetworkPolicyEgressRule{{Ports: []api.NetworkPolicyPort{
			{Protocol: ptr(api.ProtocolUDP), Port: ptr(api.FromInt(53))}}}},
	})
	expect("egress deny with DNS allowed from y/c", []connectivity{
		{cc, "udp", extIP + ":53", true},
		{cc, "udp", nodeIP + ":53", true},
		{cc, "udp", addr(0, 53), true},
		{cc, "tcp", extIP + ":80", false},
		{cc, "tcp", nodeIP + ":80", false}, // to its own node: INPUT
		{cc, "tcp", addr(0, 80), false},
		{a, "tcp", addr(2, 80), true}, // replies to x/a are no new connections
		{n.ext, "tcp", addr(2, 80), true},
		{a, "tcp", extIP + ":80", true},
	})
	remove("y", "egress-dns-only")

	create("x", "named-port", api.NetworkPolicySpec{
		PodSelector: api.LabelSelector{MatchLabels: map[string]string{"pod": "a"}},
		Ingress:     []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{{Port: ptr(api.FromString("http-alt"))}}}},
	})
	create("x", "end-port", api.NetworkPolicySpec{
		PodSelector: api.LabelSelector{MatchLabels: map[string]string{"pod": "b"}},
		Ingress: []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{
			{Protocol: ptr(api.ProtocolTCP), Port: ptr(api.FromInt(80)), EndPort: ptr(int32(81))}}}},
	})
	expect("named port http-alt on x/a, 80-81 on x/b", []connectivity{
		{cc, "tcp", addr(0, 81), true},
		{cc, "tcp", addr(0, 80), false},
		{cc, "udp", addr(0, 53), false},
		{cc, "tcp", addr(1, 80), true},
		{cc, "tcp", addr(1, 81), true},
		{cc, "tcp", addr(1, 82), false},
		{n.ext, "tcp", addr(1, 81), true},
		{n.ext, "tcp", addr(1, 82), false},
	})
	remove("x", "named-port")
	remove("x", "end-port")
	expect("all policies gone", append(everyone(80, all), everyone(82, all)...))

	if got := testutil.CollectAndCount(reg, "netpol_sync_policy_rules_duration_seconds"); got != 1 {
		t.Errorf("sync duration histogram: %d series", got)
	}
	if n := testutil.ToFloat64(e.syncs); n < 8 {
		t.Errorf("%v syncs for 8 policy changes", n)
	}
}
