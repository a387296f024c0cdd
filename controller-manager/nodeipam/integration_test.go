package nodeipam_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// Nodes get distinct /24s of the cluster CIDR; a block a node already had
// before the controller started is not handed out again; a deleted node's
// block is released.
func TestPodCIDRsAssigned(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"nodeipam"}, func(o *app.Options) {
		o.Controller.ClusterCIDR = "10.244.0.0/30"
		o.Controller.NodeCIDRMaskSize = 32
	})
	ctx := cl.Context(time.Minute)
	nodes := client.Resource[api.Node](cl.Client)
	create := func(name, cidr string) {
		t.Helper()
		n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NodeSpec{PodCIDR: cidr}}
		if cidr != "" {
			n.Spec.PodCIDRs = []string{cidr}
		}
		if _, err := nodes.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	podCIDRs := func() map[string]string {
		l, err := nodes.List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range l.Items {
			if n.Spec.PodCIDR != "" {
				if len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != n.Spec.PodCIDR {
					t.Fatalf("node %s: podCIDR %q podCIDRs %q", n.Name, n.Spec.PodCIDR, n.Spec.PodCIDRs)
				}
				out[n.Name] = n.Spec.PodCIDR
			}
		}
		return out
	}
	create("pre", "10.244.0.1/32")
	for _, n := range []string{"a", "b", "c"} {
		create(n, "")
	}
	cl.Eventually(30*time.Second, "3 nodes assigned", func() (bool, error) { return len(podCIDRs()) == 4, nil })
	seen := map[string]string{}
	cluster := netip.MustParsePrefix("10.244.0.0/30")
	for node, cidr := range podCIDRs() {
		if other, dup := seen[cidr]; dup {
			t.Fatalf("nodes %s and %s share %s", node, other, cidr)
		}
		seen[cidr] = node
		if !cluster.Contains(netip.MustParsePrefix(cidr).Addr()) {
			t.Fatalf("node %s got %s outside the cluster CIDR", node, cidr)
		}
	}
	// The range is full: a fifth node waits, with a CIDRNotAvailable event.
	create("d", "")
	cl.Eventually(30*time.Second, "CIDRNotAvailable event", func() (bool, error) {
		evs, err := client.Resource[api.Event](cl.Client).List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "CIDRNotAvailable" && e.InvolvedObject.Name == "d" {
				return true, nil
			}
		}
		return false, nil
	})
	// Deleting a node frees its block for the waiting one.
	freed := podCIDRs()["b"]
	if err := nodes.Delete(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "d gets b's block", func() (bool, error) { return podCIDRs()["d"] == freed, nil })
}
