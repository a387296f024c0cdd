package podroutes

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func node(name, cidr, ip string) *api.Node {
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NodeSpec{PodCIDR: cidr}}
	if ip != "" {
		n.Status.Addresses = []api.NodeAddress{{Type: api.NodeInternalIP, Address: ip}, {Type: api.NodeHostName, Address: name}}
	}
	return n
}

func TestDesired(t *testing.T) {
	got := desired([]*api.Node{
		node("self", "10.244.0.0/24", "192.168.1.1"),
		node("b", "10.244.2.0/24", "192.168.1.3"),
		node("a", "10.244.1.0/24", "192.168.1.2"),
		node("no-cidr", "", "192.168.1.4"),
		node("no-ip", "10.244.5.0/24", ""),
		node("bad", "nonsense", "192.168.1.6"),
	}, "self")
	var s []string
	for _, r := range got {
		s = append(s, r.dst.String()+" via "+r.gw.String())
	}
	if want := "10.244.1.0/24 via 192.168.1.2,10.244.2.0/24 via 192.168.1.3"; strings.Join(s, ",") != want {
		t.Fatalf("desired = %v, want %s", s, want)
	}
}

// TestDesiredNotANode: a host that is not a node (the apiserver's, with
// --pod-routes) routes to every node.
func TestDesiredNotANode(t *testing.T) {
	got := desired([]*api.Node{node("b", "10.244.2.0/24", "192.168.1.3"), node("a", "10.244.1.0/24", "192.168.1.2")}, "")
	var s []string
	for _, r := range got {
		s = append(s, r.dst.String()+" via "+r.gw.String())
	}
	if want := "10.244.1.0/24 via 192.168.1.2,10.244.2.0/24 via 192.168.1.3"; strings.Join(s, ",") != want {
		t.Fatalf("desired = %v, want %s", s, want)
	}
}
