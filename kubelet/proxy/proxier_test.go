package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// eventually polls f until it returns nil or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readyEndpoint(ip string) api.Endpoint {
	return api.Endpoint{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)}}
}

// TestProxyInNetns runs the proxier against a real apiserver, writing real
// iptables rules inside a network namespace the test made, and checks
// traffic to a ClusterIP and a NodePort as endpoints come and go.
func TestProxyInNetns(t *testing.T) { forEachMode(t, testProxyInNetns) }

func testProxyInNetns(t *testing.T, mode string) {
	n := newTestNet(t, 3)
	for i := range 3 {
		n.serve(i, 8080)
	}
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	runner := IPTables{Netns: n.node}
	p, err := New(Config{Client: c, ClusterCIDR: "10.244.0.0/16", Runner: runner, MinSyncPeriod: 50 * time.Millisecond, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := Cleanup(runner); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		save, _ := runner.Save("nat")
		if strings.Contains(string(save), "KUBE-") {
			t.Errorf("rules left after cleanup:\n%s", save)
		}
		if tables := n.nftTables(); tables != "" {
			t.Errorf("nftables left after cleanup:\n%s", tables)
		}
	})

	svcs := client.Resource[api.Service](c).Namespace("default")
	svc, err := svcs.Create(ctx, &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.ServiceSpec{Type: api.ServiceTypeNodePort, Selector: map[string]string{"app": "web"},
			Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	clusterURL := fmt.Sprintf("http://%s:80/", svc.Spec.ClusterIP)
	nodeURL := fmt.Sprintf("http://10.244.250.1:%d/", svc.Spec.Ports[0].NodePort)

	// No endpoints yet: refused at once, not a hang.
	eventually(t, 10*time.Second, "refused without endpoints", func() error {
		start := time.Now()
		_, err := n.get(clusterURL)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("got %v, want connection refused", err)
		}
		if d := time.Since(start); d > time.Second {
			return fmt.Errorf("refusal took %v", d)
		}
		return nil
	})

	slices := client.Resource[api.EndpointSlice](c).Namespace("default")
	slice, err := slices.Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "web-abcde", Labels: map[string]string{api.LabelServiceName: "web"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints:   []api.Endpoint{readyEndpoint(n.podIP(0)), readyEndpoint(n.podIP(1)), readyEndpoint(n.podIP(2))},
	})
	if err != nil {
		t.Fatal(err)
	}
	// All three backends answer through the ClusterIP and the NodePort.
	for _, url := range []string{clusterURL, nodeURL} {
		seen := map[string]bool{}
		eventually(t, 10*time.Second, "all backends via "+url, func() error {
			body, err := n.get(url)
			if err != nil {
				return err
			}
			seen[body] = true
			if len(seen) < 3 {
				return fmt.Errorf("seen %v so far", seen)
			}
			return nil
		})
	}

	// Drop pod-1: no request reaches it afterwards.
	slice.Endpoints = []api.Endpoint{readyEndpoint(n.podIP(0)), readyEndpoint(n.podIP(2))}
	changed := time.Now()
	if slice, err = slices.Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pod-1 removed", func() error {
		for range 20 {
			body, err := n.get(clusterURL)
			if err != nil {
				return err
			}
			if body == "pod-1" {
				return errors.New("pod-1 still answers")
			}
		}
		return nil
	})
	t.Logf("endpoint removal in force %v after the update (includes 20 requests)", time.Since(changed))

	// A not-ready endpoint gets no traffic either.
	slice.Endpoints[1].Conditions.Ready = ptr(false)
	if slice, err = slices.Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "only pod-0", func() error {
		for range 10 {
			body, err := n.get(clusterURL)
			if err != nil || body != "pod-0" {
				return fmt.Errorf("got %q, %v", body, err)
			}
		}
		return nil
	})

	// Deleting the Service removes its rules: every line naming it and
	// every chain of its (the apiserver's own default/kubernetes stays).
	if mode == ModeNFTables {
		checkNFTServiceRemoved(t, n, func() error { return svcs.Delete(ctx, "web", nil) }, svc.Spec.ClusterIP)
		return
	}
	save, err := runner.Save("nat")
	if err != nil {
		t.Fatal(err)
	}
	var chains []string
	for _, l := range strings.Split(string(save), "\n") {
		if strings.Contains(l, `"default/web`) {
			for _, f := range strings.Fields(l) {
				if strings.HasPrefix(f, svcPrefix) || strings.HasPrefix(f, sepPrefix) {
					chains = append(chains, f)
				}
			}
		}
	}
	if len(chains) == 0 {
		t.Fatalf("no chains of default/web in:\n%s", save)
	}
	if err := svcs.Delete(ctx, "web", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "rules removed", func() error {
		save, err := runner.Save("nat")
		if err != nil {
			return err
		}
		if strings.Contains(string(save), `"default/web`) {
			return fmt.Errorf("rules of default/web remain:\n%s", save)
		}
		for _, c := range chains {
			if strings.Contains(string(save), c) {
				return fmt.Errorf("chain %s remains:\n%s", c, save)
			}
		}
		return nil
	})
}

// TestProxySamePortTwoProtocols is the conformance spec "Services should
// serve endpoints on same port and different protocols": one Service port
// 80 over TCP and over UDP to the same pod port, then only TCP, then only
// UDP. A protocol or port the Service does not have is refused at once
// (kube-proxy's nftables mode rejects traffic to invalid ports of
// ClusterIPs); without that the packet left by the node's default route,
// and on a host whose network answers any address on port 80 the spec
// read that answer as the Service still serving TCP.
func TestProxySamePortTwoProtocols(t *testing.T) { forEachMode(t, testProxySamePortTwoProtocols) }

func testProxySamePortTwoProtocols(t *testing.T, mode string) {
	n := newTestNet(t, 1)
	n.serve(0, 8080)
	n.serveUDP(0, 8080)
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	runner := IPTables{Netns: n.node}
	p, err := New(Config{Client: c, ClusterCIDR: "10.244.0.0/16", Runner: runner, MinSyncPeriod: 50 * time.Millisecond, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := Cleanup(runner); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})

	tcpPort := api.ServicePort{Name: "tcp-port", Port: 80, TargetPort: api.FromInt(8080), Protocol: api.ProtocolTCP}
	udpPort := api.ServicePort{Name: "udp-port", Port: 80, TargetPort: api.FromInt(8080), Protocol: api.ProtocolUDP}
	svcs := client.Resource[api.Service](c).Namespace("default")
	svc, err := svcs.Create(ctx, &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "multiprotocol-test"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "multiport"},
			Ports: []api.ServicePort{tcpPort, udpPort}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Resource[api.EndpointSlice](c).Namespace("default").Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "multiprotocol-test-abcde", Labels: map[string]string{api.LabelServiceName: "multiprotocol-test"}},
		AddressType: api.AddressTypeIPv4,
		Ports: []api.EndpointSlicePort{
			{Name: ptr("tcp-port"), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)},
			{Name: ptr("udp-port"), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolUDP)},
		},
		Endpoints: []api.Endpoint{readyEndpoint(n.podIP(0))},
	})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	addr := ip + ":80"
	serves := func(proto string) error {
		var body string
		var err error
		if proto == "tcp" {
			body, err = n.get("http://" + addr + "/")
		} else {
			body, err = n.udp(addr)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", proto, addr, err)
		}
		if body != "pod-0" {
			return fmt.Errorf("%s %s answered %q, want pod-0", proto, addr, body)
		}
		return nil
	}
	// refused: the kernel's refusal, at once (not a timeout). A datagram
	// sent from the node's own namespace and rejected in OUTPUT fails the
	// send with EPERM; a pod's, rejected in FORWARD, gets the ICMP error.
	refused := func(proto, addr string) error {
		start := time.Now()
		var err error
		if proto == "tcp" {
			_, err = n.get("http://" + addr + "/")
		} else {
			_, err = n.udp(addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && (proto == "tcp" || !errors.Is(err, syscall.EPERM)) {
			return fmt.Errorf("%s %s: got %v, want connection refused", proto, addr, err)
		}
		if d := time.Since(start); d > time.Second {
			return fmt.Errorf("%s %s: refusal took %v", proto, addr, d)
		}
		return nil
	}
	eventually(t, 10*time.Second, "TCP and UDP served", func() error { return errors.Join(serves("tcp"), serves("udp")) })
	// Ports the Service does not have are refused on its ClusterIP.
	eventually(t, 10*time.Second, "other ports refused", func() error {
		return errors.Join(refused("tcp", ip+":81"), refused("udp", ip+":81"))
	})

	setPorts := func(ports ...api.ServicePort) {
		t.Helper()
		cur, err := svcs.Get(ctx, "multiprotocol-test")
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.Ports = ports
		if _, err := svcs.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	setPorts(tcpPort)
	eventually(t, 10*time.Second, "TCP only", func() error { return errors.Join(serves("tcp"), refused("udp", addr)) })
	setPorts(udpPort)
	eventually(t, 10*time.Second, "UDP only", func() error { return errors.Join(serves("udp"), refused("tcp", addr)) })

	// A deleted Service's ClusterIP is no longer refused here (its rules
	// are gone with it).
	if err := svcs.Delete(ctx, "multiprotocol-test", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "rules removed", func() error {
		save, err := runner.Save("filter")
		if err != nil {
			return err
		}
		if mode == ModeNFTables {
			save = []byte(strings.ReplaceAll(n.nftTables(), ip+" ", ip+"/32 "))
		}
		if strings.Contains(string(save), ip+"/32") {
			return fmt.Errorf("rules for %s remain:\n%s", ip, save)
		}
		return nil
	})
}
