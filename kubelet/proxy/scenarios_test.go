package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// scenarioEnv is one proxier running in a test network against a real
// apiserver, for the traffic scenarios below.
type scenarioEnv struct {
	t      *testing.T
	ctx    context.Context
	n      *testNet
	svcs   *client.ResourceClient[api.Service, *api.Service]
	slices *client.ResourceClient[api.EndpointSlice, *api.EndpointSlice]
}

// startProxy serves HTTP on port 8080 in pods pods and runs a proxier in
// mode for node "node-a" (pod 0 is on it, the others elsewhere).
func startProxy(t *testing.T, mode string, pods int) *scenarioEnv {
	n := newTestNet(t, pods)
	for i := range pods {
		n.serve(i, 8080)
	}
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	runner := IPTables{Netns: n.node}
	p, err := New(Config{Client: c, NodeName: "node-a", ClusterCIDR: "10.244.0.0/16", Runner: runner,
		MinSyncPeriod: 50 * time.Millisecond, Mode: mode})
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
	return &scenarioEnv{t: t, ctx: ctx, n: n,
		svcs:   client.Resource[api.Service](c).Namespace("default"),
		slices: client.Resource[api.EndpointSlice](c).Namespace("default")}
}

// service creates svc and a slice with pods eps (pod 0 on node-a).
func (e *scenarioEnv) service(svc *api.Service, eps ...int) *api.Service {
	e.t.Helper()
	svc.Spec.Selector = map[string]string{"app": svc.Name}
	if len(svc.Spec.Ports) == 0 {
		svc.Spec.Ports = []api.ServicePort{{Port: 80, TargetPort: api.FromInt(8080)}}
	}
	out, err := e.svcs.Create(e.ctx, svc)
	if err != nil {
		e.t.Fatal(err)
	}
	var endpoints []api.Endpoint
	for _, i := range eps {
		ep := readyEndpoint(e.n.podIP(i))
		node := "node-b"
		if i == 0 {
			node = "node-a"
		}
		ep.NodeName = ptr(node)
		endpoints = append(endpoints, ep)
	}
	if _, err := e.slices.Create(e.ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: svc.Name + "-abcde", Labels: map[string]string{api.LabelServiceName: svc.Name}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints:   endpoints,
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// answers waits until url is answered by one of want, and then checks
// that 12 requests in a row are.
func (e *scenarioEnv) answers(what, url string, from int, want ...string) {
	e.t.Helper()
	eventually(e.t, 10*time.Second, what, func() error {
		for range 12 {
			body, err := e.getFrom(from, url)
			if err != nil {
				return err
			}
			ok := false
			for _, w := range want {
				ok = ok || body == w
			}
			if !ok {
				return fmt.Errorf("%s answered %q, want one of %v", url, body, want)
			}
		}
		return nil
	})
}

// fails waits until requests to url fail.
func (e *scenarioEnv) fails(what, url string) {
	e.t.Helper()
	eventually(e.t, 15*time.Second, what, func() error {
		if body, err := e.getFrom(-1, url); err == nil {
			return fmt.Errorf("%s answered %q", url, body)
		}
		return nil
	})
}

// getFrom fetches url from pod i's namespace, or the node's for -1.
func (e *scenarioEnv) getFrom(i int, url string) (string, error) {
	if i < 0 {
		return e.n.get(url)
	}
	return e.n.getFromPod(i, url)
}

// TestProxyScenariosInNetns runs each Service traffic scenario under
// both proxy modes: external IPs, load balancer addresses with
// loadBalancerSourceRanges, ClientIP session affinity, a pod reaching
// itself through its Service (hairpin), and the Local traffic policies.
func TestProxyScenariosInNetns(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		e := startProxy(t, mode, 3)

		e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"},
			Spec: api.ServiceSpec{ExternalIPs: []string{"192.0.2.10"}}}, 1, 2)
		e.answers("external IP", "http://192.0.2.10:80/", -1, "pod-1", "pod-2")
		e.answers("external IP from a pod", "http://192.0.2.10:80/", 0, "pod-1", "pod-2")

		lb := e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "lb"},
			Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, LoadBalancerSourceRanges: []string{"10.244.250.0/24"}}}, 1)
		lb.Status.LoadBalancer.Ingress = []api.LoadBalancerIngress{{IP: "198.51.100.7"}}
		lb, err := e.svcs.UpdateStatus(e.ctx, lb)
		if err != nil {
			t.Fatal(err)
		}
		e.answers("load balancer IP from an allowed source", "http://198.51.100.7:80/", -1, "pod-1")
		lb.Spec.LoadBalancerSourceRanges = []string{"192.168.0.0/16"}
		if _, err := e.svcs.Update(e.ctx, lb); err != nil {
			t.Fatal(err)
		}
		e.fails("load balancer IP from a source not allowed", "http://198.51.100.7:80/")

		sticky := e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "sticky"},
			Spec: api.ServiceSpec{SessionAffinity: api.ServiceAffinityClientIP}}, 0, 1, 2)
		url := fmt.Sprintf("http://%s:80/", sticky.Spec.ClusterIP)
		first := ""
		eventually(t, 10*time.Second, "sticky answers", func() (err error) { first, err = e.n.get(url); return err })
		e.answers("ClientIP affinity keeps one backend", url, -1, first)

		// The node's CNI bridge sets hairpin mode on pod ports (kubelet/network):
		// a DNATed frame goes back out the port it came in by.
		run(t, "ip", "netns", "exec", e.n.node, "ip", "link", "set", "vh0", "type", "bridge_slave", "hairpin", "on")
		hair := e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "hairpin"}}, 0)
		e.answers("a pod through its own Service", fmt.Sprintf("http://%s:80/", hair.Spec.ClusterIP), 0, "pod-0")

		// internalTrafficPolicy Local: only node-a's endpoint (pod 0).
		local := api.ServiceInternalTrafficPolicyLocal
		itp := e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "itp"},
			Spec: api.ServiceSpec{InternalTrafficPolicy: &local}}, 0, 1, 2)
		e.answers("internalTrafficPolicy Local", fmt.Sprintf("http://%s:80/", itp.Spec.ClusterIP), -1, "pod-0")
		itpNone := e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "itp-none"},
			Spec: api.ServiceSpec{InternalTrafficPolicy: &local}}, 1, 2)
		e.fails("internalTrafficPolicy Local without a local endpoint", fmt.Sprintf("http://%s:80/", itpNone.Spec.ClusterIP))

		// externalTrafficPolicy Local on a node port: traffic from the
		// node itself goes to any endpoint (kube-proxy short-circuits it).
		etp := e.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "etp"},
			Spec: api.ServiceSpec{Type: api.ServiceTypeNodePort, ExternalTrafficPolicy: api.ServiceExternalTrafficPolicyLocal}}, 1, 2)
		e.answers("externalTrafficPolicy Local from the node", fmt.Sprintf("http://10.244.250.1:%d/", etp.Spec.Ports[0].NodePort), -1, "pod-1", "pod-2")

		// A Service losing its endpoints is refused at once (asked from a
		// pod: kube-proxy's iptables mode rejects external IPs in INPUT and
		// FORWARD only, its nftables mode in OUTPUT too).
		if err := e.slices.Delete(e.ctx, "ext-abcde", nil); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "refused without endpoints", func() error {
			_, err := e.n.getFromPod(0, "http://192.0.2.10:80/")
			if !errors.Is(err, syscall.ECONNREFUSED) {
				return fmt.Errorf("got %v, want connection refused", err)
			}
			return nil
		})
	})
}

// getFromPod fetches url with a connection made in pod i's namespace.
func (n *testNet) getFromPod(i int, url string) (string, error) {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := inNetns(n.pods[i], func() (err error) {
			d := net.Dialer{Timeout: 2 * time.Second}
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
