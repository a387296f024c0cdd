package podroutes_test

// An external test package: it starts an apiserver, whose package imports
// this one (--pod-routes).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/podroutes"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

func node(name, cidr, ip string) *api.Node {
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NodeSpec{PodCIDR: cidr}}
	n.Status.Addresses = []api.NodeAddress{{Type: api.NodeInternalIP, Address: ip}, {Type: api.NodeHostName, Address: name}}
	return n
}

func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestRoutesBetweenNamespaces makes two "nodes" (network namespaces on one
// link) and a "pod" behind node B, runs the syncer in node A against a real
// apiserver, and checks that A reaches the pod through the route it adds,
// follows an address change and removes the route with the Node.
func TestRoutesBetweenNamespaces(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root and network namespaces")
	}
	for _, tool := range []string{"ip", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (scripts/deps.sh test installs it)", tool)
		}
	}
	tag := fmt.Sprint(os.Getpid() % 100000)
	a, b, pod := "mk8s-rt-a-"+tag, "mk8s-rt-b-"+tag, "mk8s-rt-pod-"+tag
	for _, ns := range []string{a, b, pod} {
		sh(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	in := func(ns string, args ...string) string {
		return sh(t, append([]string{"ip", "netns", "exec", ns}, args...)...)
	}
	in(a, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0b")
	in(a, "ip", "link", "set", "eth0b", "netns", b)
	in(a, "ip", "addr", "add", "192.168.250.1/24", "dev", "eth0")
	in(a, "ip", "link", "set", "eth0", "up")
	in(b, "ip", "addr", "add", "192.168.250.2/24", "dev", "eth0b")
	in(b, "ip", "addr", "add", "192.168.250.3/24", "dev", "eth0b")
	in(b, "ip", "link", "set", "eth0b", "up")
	in(b, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	in(b, "ip", "link", "add", "cni0", "type", "veth", "peer", "name", "eth0p")
	in(b, "ip", "link", "set", "eth0p", "netns", pod)
	in(b, "ip", "addr", "add", "10.244.61.1/24", "dev", "cni0")
	in(b, "ip", "link", "set", "cni0", "up")
	in(pod, "ip", "addr", "add", "10.244.61.2/24", "dev", "eth0p")
	in(pod, "ip", "link", "set", "eth0p", "up")
	in(pod, "ip", "route", "add", "default", "via", "10.244.61.1")
	for _, ns := range []string{a, b, pod} {
		in(ns, "ip", "link", "set", "lo", "up")
	}
	// A route of someone else's that the syncer must leave alone.
	in(a, "ip", "route", "add", "10.244.99.0/24", "via", "192.168.250.2")

	nsA, err := netns.GetFromName(a)
	if err != nil {
		t.Fatal(err)
	}
	defer nsA.Close()
	h, err := netlink.NewHandleAt(nsA)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nodes := client.Resource[api.Node](c)
	for _, n := range []*api.Node{node("a", "10.244.60.0/24", "192.168.250.1"), node("b", "10.244.61.0/24", "192.168.250.2")} {
		st := n.Status
		created, err := nodes.Create(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		created.Status = st
		if _, err := nodes.UpdateStatus(ctx, created); err != nil {
			t.Fatal(err)
		}
	}
	syncer := podroutes.New(podroutes.Config{Client: c, NodeName: "a", Handle: h, ResyncPeriod: time.Second})
	done := make(chan error, 1)
	go func() { done <- syncer.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitRoute := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			got := in(a, "ip", "route", "show", "proto", "77")
			if strings.TrimSpace(got) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("routes of proto 77 = %q, want %q", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitRoute("10.244.61.0/24 via 192.168.250.2 dev eth0")
	in(a, "busybox", "ping", "-c", "1", "-W", "3", "10.244.61.2")

	// The node's address changes: the route follows.
	nb, err := nodes.Get(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	nb.Status.Addresses[0].Address = "192.168.250.3"
	if _, err := nodes.UpdateStatus(ctx, nb); err != nil {
		t.Fatal(err)
	}
	waitRoute("10.244.61.0/24 via 192.168.250.3 dev eth0")
	in(a, "busybox", "ping", "-c", "1", "-W", "3", "10.244.61.2")

	// The Node goes: so does its route; the foreign one stays.
	if err := nodes.Delete(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	waitRoute("")
	if got := in(a, "ip", "route", "show", "10.244.99.0/24"); !strings.Contains(got, "via 192.168.250.2") {
		t.Fatalf("a route the syncer does not own was touched: %q", got)
	}
}
