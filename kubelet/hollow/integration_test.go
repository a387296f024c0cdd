package hollow_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/kubelet/hollow"
)

// adminClient is the apiserver's admin (system:masters, which may
// impersonate) without a rate limit.
func adminClient(t testing.TB, s *apiservertest.Server) *client.Client {
	t.Helper()
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startFleet runs a fleet until the test ends.
func startFleet(t testing.TB, cfg hollow.FleetConfig) *hollow.Fleet {
	t.Helper()
	f, err := hollow.NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("fleet: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the fleet did not stop within 30 s")
		}
	})
	return f
}

func poll(t *testing.T, ctx context.Context, what string, f func() error) {
	t.Helper()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func nodeReady(n *api.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func podReady(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// TestHollowNodes runs 20 hollow nodes against a real apiserver over TLS,
// each acting as system:node:NAME: all register and become Ready, their
// Leases renew, pods bound to them run with IPs of their pod CIDRs and
// pass their probes, a deleted pod goes away, a deleted Node comes back,
// and a node cannot write
// another node's status (the Node authorizer sees the node identity).
func TestHollowNodes(t *testing.T) {
	const count = 20
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := adminClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	fleet := startFleet(t, hollow.FleetConfig{
		Client: admin, Count: count, NamePrefix: "hollow-node-", RootDir: t.TempDir(),
		Template: hollow.Config{
			Labels: map[string]string{"node.kubernetes.io/pool": "hollow"},
			// The Lease is renewed every second here (10 s in the binary)
			// so the test sees renewals quickly.
			LeaseRenewInterval: time.Second,
			// And the status is computed every second (10 s), so a
			// deleted Node comes back soon.
			StatusUpdateFrequency: time.Second,
		},
		DeleteNodesOnExit: true, Logger: apiservertest.Logger(),
	})
	nodes := client.Resource[api.Node](admin)
	poll(t, ctx, "all hollow nodes Ready", func() error {
		l, err := nodes.List(ctx, client.ListOptions{LabelSelector: hollow.LabelHollow + "=true"})
		if err != nil {
			return err
		}
		ready := 0
		for i := range l.Items {
			if nodeReady(&l.Items[i]) {
				ready++
			}
		}
		if ready != count {
			return fmt.Errorf("%d of %d nodes Ready (%d registered)", ready, count, len(l.Items))
		}
		return nil
	})
	t.Logf("%d hollow nodes Ready in %v", count, time.Since(start).Round(time.Millisecond))
	if got := fleet.ReadyCount(); got != count {
		t.Errorf("fleet reports %d Ready nodes, want %d", got, count)
	}

	n3, err := nodes.Get(ctx, "hollow-node-3")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"kubernetes.io/hostname": "hollow-node-3", hollow.LabelHollow: "true", "node.kubernetes.io/pool": "hollow"} {
		if n3.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, n3.Labels[k], want)
		}
	}
	for res, want := range map[api.ResourceName]string{api.ResourcePods: "110", api.ResourceCPU: "4", api.ResourceMemory: "16Gi"} {
		if q, ok := n3.Status.Capacity[res]; !ok || q.String() != want {
			t.Errorf("capacity %s = %v, want %s", res, n3.Status.Capacity[res], want)
		}
	}
	var internalIP string
	for _, a := range n3.Status.Addresses {
		if a.Type == api.NodeInternalIP {
			internalIP = a.Address
		}
	}
	if ip := net.ParseIP(internalIP); ip == nil || !ip.IsLoopback() {
		t.Errorf("InternalIP %q, want a loopback address", internalIP)
	}

	// Every Lease renews.
	leases := client.Resource[api.Lease](admin).Namespace("kube-node-lease")
	first := map[string]time.Time{}
	poll(t, ctx, "every Lease renewed", func() error {
		var stale []string
		for i := range count {
			name := fmt.Sprintf("hollow-node-%d", i)
			l, err := leases.Get(ctx, name)
			if err != nil {
				return err
			}
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != name || l.Spec.RenewTime == nil {
				return fmt.Errorf("lease %s: %+v", name, l.Spec)
			}
			if f, ok := first[name]; !ok {
				first[name] = l.Spec.RenewTime.Time
				stale = append(stale, name)
			} else if !l.Spec.RenewTime.After(f) {
				stale = append(stale, name)
			}
		}
		if len(stale) > 0 {
			return fmt.Errorf("not renewed yet: %v", stale)
		}
		return nil
	})

	// A deleted Node is registered again, as the kubelet does.
	old5, err := nodes.Get(ctx, "hollow-node-5")
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes.Delete(ctx, "hollow-node-5", nil); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "hollow-node-5 registered again", func() error {
		n, err := nodes.Get(ctx, "hollow-node-5")
		if err != nil {
			return err
		}
		if n.UID == old5.UID || !nodeReady(n) {
			return fmt.Errorf("uid %s (old %s), ready %v", n.UID, old5.UID, nodeReady(n))
		}
		return nil
	})

	// A node acts as itself: it may not write another node's status.
	node0 := fleet.Nodes()[0]
	as0 := admin.Impersonating(client.Impersonation{UserName: "system:node:" + node0.Name(), Groups: []string{"system:nodes"}})
	other, _ := nodes.Get(ctx, "hollow-node-1")
	if _, err := client.Resource[api.Node](as0).UpdateStatus(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("hollow-node-0 updating hollow-node-1's status: got %v, want Forbidden", err)
	}

	// Node 0 gets a podCIDR (as from nodeipam): its pods take addresses
	// from it; the others use their fallback /24.
	if _, err := nodes.Patch(ctx, "hollow-node-0", client.MergePatchType,
		[]byte(`{"spec":{"podCIDR":"10.244.77.0/24","podCIDRs":["10.244.77.0/24"]}}`)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "hollow-node-0 configures its podCIDR", func() error {
		if got := node0.Network().CIDR(); got != "10.244.77.0/24" {
			return fmt.Errorf("network CIDR %s", got)
		}
		return nil
	})

	podsc := client.Resource[api.Pod](admin).Namespace("default")
	grace := int64(5)
	var created []string
	for i := range 2 * count {
		name := fmt.Sprintf("p-%d", i)
		c := api.Container{Name: "app", Image: "registry.example/app:1", Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}}}
		if i%4 == 0 {
			// Probes of every kind: on a hollow node they succeed.
			c.ReadinessProbe = &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/healthz", Port: api.IntOrString{Type: api.String, StrVal: "http"}}}, PeriodSeconds: 1}
			c.LivenessProbe = &api.Probe{ProbeHandler: api.ProbeHandler{TCPSocket: &api.TCPSocketAction{Port: api.IntOrString{Type: api.Int, IntVal: 8080}}}, PeriodSeconds: 1}
			c.StartupProbe = &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1}
		}
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.PodSpec{NodeName: fmt.Sprintf("hollow-node-%d", i%count), Containers: []api.Container{c}, TerminationGracePeriodSeconds: &grace}}
		if _, err := podsc.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		created = append(created, name)
	}
	poll(t, ctx, "every pod Running and Ready with an IP of its node", func() error {
		l, err := podsc.List(ctx, client.ListOptions{})
		if err != nil {
			return err
		}
		var notYet []string
		ips := map[string]string{}
		for i := range l.Items {
			p := &l.Items[i]
			if p.Status.Phase != api.PodRunning || p.Status.PodIP == "" || !podReady(p) {
				notYet = append(notYet, fmt.Sprintf("%s(%s ip=%q ready=%v)", p.Name, p.Status.Phase, p.Status.PodIP, podReady(p)))
				continue
			}
			if other, dup := ips[p.Status.PodIP]; dup {
				return fmt.Errorf("pods %s and %s share IP %s", other, p.Name, p.Status.PodIP)
			}
			ips[p.Status.PodIP] = p.Name
			var idx int
			fmt.Sscanf(p.Spec.NodeName, "hollow-node-%d", &idx)
			want := fmt.Sprintf("10.128.%d.", idx)
			if idx == 0 {
				want = "10.244.77."
			}
			if !strings.HasPrefix(p.Status.PodIP, want) {
				return fmt.Errorf("pod %s on %s has IP %s, want %s*", p.Name, p.Spec.NodeName, p.Status.PodIP, want)
			}
			if p.Status.HostIP == "" || len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready {
				return fmt.Errorf("pod %s: hostIP %q, statuses %+v", p.Name, p.Status.HostIP, p.Status.ContainerStatuses)
			}
		}
		if len(l.Items) != len(created) || len(notYet) > 0 {
			return fmt.Errorf("%d pods, not running: %v", len(l.Items), notYet)
		}
		return nil
	})
	if got := fleet.RunningContainers(); got != len(created) {
		t.Errorf("fleet runs %d containers, want %d", got, len(created))
	}

	// Graceful deletion completes: the hollow kubelet stops the
	// containers and removes the pod.
	var wg sync.WaitGroup
	for _, name := range created[:count/2] {
		wg.Go(func() {
			if err := podsc.Delete(ctx, name, nil); err != nil {
				t.Errorf("delete %s: %v", name, err)
			}
		})
	}
	wg.Wait()
	poll(t, ctx, "deleted pods gone", func() error {
		for _, name := range created[:count/2] {
			if _, err := podsc.Get(ctx, name); err == nil {
				return fmt.Errorf("pod %s still exists", name)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	poll(t, ctx, "their containers stopped and addresses freed", func() error {
		if got, want := fleet.RunningContainers(), len(created)-count/2; got != want {
			return fmt.Errorf("%d containers running, want %d", got, want)
		}
		inUse := 0
		for _, n := range fleet.Nodes() {
			inUse += n.Network().InUse()
		}
		if want := len(created) - count/2; inUse != want {
			return errors.New("addresses in use: " + fmt.Sprint(inUse) + ", want " + fmt.Sprint(want))
		}
		return nil
	})
	t.Logf("whole run %v", time.Since(start).Round(time.Millisecond))
}
