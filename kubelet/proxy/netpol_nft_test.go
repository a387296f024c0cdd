package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/netnstest"
	"github.com/minik8s/minik8s/kubelet/netpol"
	"github.com/minik8s/minik8s/kubelet/proxy"
)

func ptr[T any](v T) *T { return &v }

// TestNetworkPolicyWithNFTablesProxy: NetworkPolicy enforcement stays in
// iptables (kubelet/netpol) when the proxy runs in nftables mode. Both
// tables are hooked at once: the proxy's nat chains DNAT a ClusterIP to the
// pod, then the policy chains in the filter table's FORWARD judge the
// DNATed packet. A pod in namespace y reaches x/server through its
// Service; default-deny ingress in x stops it; a policy allowing y lets
// it through again.
func TestNetworkPolicyWithNFTablesProxy(t *testing.T) {
	n := netnstest.New(t, "mk8s-pn", 2, nil)
	server, clientPod := 0, 1
	var ln net.Listener
	if err := netnstest.Do(n.Pods[server], func() (err error) {
		ln, err = net.Listen("tcp", netnstest.PodIP(server)+":8080")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "server") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, ns := range []string{"x", "y"} {
		if _, err := client.Resource[api.Namespace](c).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns, Labels: map[string]string{"ns": ns}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range []struct{ ns, name string }{{"x", "server"}, {"y", "client"}} {
		pods := client.Resource[api.Pod](c).Namespace(p.ns)
		pod, err := pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: p.name, Labels: map[string]string{"app": p.name}},
			Spec: api.PodSpec{NodeName: "node-a", Containers: []api.Container{{Name: "c", Image: "agnhost"}}}})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = api.PodRunning
		pod.Status.PodIP = netnstest.PodIP(i)
		pod.Status.PodIPs = []api.PodIP{{IP: netnstest.PodIP(i)}}
		if _, err := pods.UpdateStatus(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := client.Resource[api.Service](c).Namespace("x").Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "server"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "server"}, Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt(8080)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.EndpointSlice](c).Namespace("x").Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "server-abcde", Labels: map[string]string{api.LabelServiceName: "server"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints: []api.Endpoint{{Addresses: []string{netnstest.PodIP(server)}, NodeName: ptr("node-a"),
			Conditions: api.EndpointConditions{Ready: ptr(true)}}},
	}); err != nil {
		t.Fatal(err)
	}

	runner := proxy.IPTables{Netns: n.Node}
	p, err := proxy.New(proxy.Config{Client: c, NodeName: "node-a", ClusterCIDR: "10.244.0.0/16", Runner: runner,
		MinSyncPeriod: 20 * time.Millisecond, Mode: proxy.ModeNFTables})
	if err != nil {
		t.Fatal(err)
	}
	e, err := netpol.New(netpol.Config{Client: c, NodeName: "node-a", Runner: runner, MinSyncPeriod: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- p.Run(ctx) }()
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		if err := proxy.Cleanup(runner); err != nil {
			t.Errorf("proxy cleanup: %v", err)
		}
		if err := netpol.Cleanup(runner); err != nil {
			t.Errorf("netpol cleanup: %v", err)
		}
	})

	url := fmt.Sprintf("http://%s:80/", svc.Spec.ClusterIP)
	get := func() error {
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := netnstest.Do(n.Pods[clientPod], func() (err error) {
				d := net.Dialer{Timeout: time.Second}
				c, err = d.DialContext(ctx, network, addr)
				return err
			})
			return c, err
		}
		hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "server" {
			return fmt.Errorf("answered %q", b)
		}
		return nil
	}
	expect := func(step string, want bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := get()
			if (err == nil) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: want reachable=%v, got %v", step, want, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	expect("through the nftables proxy, no policy", true)
	// The proxy wrote no iptables chains of its own: its rules are nf_tables'.
	if save, err := runner.Save("nat"); err != nil || strings.Contains(string(save), "KUBE-SERVICES") {
		t.Errorf("iptables-mode chains in nftables mode (%v):\n%s", err, save)
	}

	policies := client.Resource[api.NetworkPolicy](c).Namespace("x")
	if _, err := policies.Create(ctx, &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Name: "deny"},
		Spec: api.NetworkPolicySpec{PolicyTypes: []api.PolicyType{"Ingress"}}}); err != nil {
		t.Fatal(err)
	}
	expect("default-deny ingress in x", false)
	if _, err := policies.Create(ctx, &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Name: "allow-y"},
		Spec: api.NetworkPolicySpec{Ingress: []api.NetworkPolicyIngressRule{{From: []api.NetworkPolicyPeer{{
			NamespaceSelector: &api.LabelSelector{MatchLabels: map[string]string{"ns": "y"}}}}}}}}); err != nil {
		t.Fatal(err)
	}
	expect("ingress from namespace y allowed", true)
}
