package hollow

import (
	"context"
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/kubelet/network"
)

func TestNetwork(t *testing.T) {
	n, err := NewNetwork("10.128.3.0/29")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var got []string
	for i := range 5 {
		ip, err := n.SetUp(ctx, network.Pod{SandboxID: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ip)
	}
	// .2 to .6: not the network, the gateway (.1) or the broadcast (.7).
	if fmt.Sprint(got) != "[10.128.3.2 10.128.3.3 10.128.3.4 10.128.3.5 10.128.3.6]" {
		t.Errorf("addresses %v", got)
	}
	if _, err := n.SetUp(ctx, network.Pod{SandboxID: "s5"}); err == nil {
		t.Error("a sixth address in a /29")
	}
	if ip, _ := n.SetUp(ctx, network.Pod{SandboxID: "s2"}); ip != "10.128.3.4" {
		t.Errorf("same sandbox again: %s", ip)
	}
	_ = n.TearDown(ctx, network.Pod{SandboxID: "s3"})
	if ip, _ := n.SetUp(ctx, network.Pod{SandboxID: "s9"}); ip != "10.128.3.5" {
		t.Errorf("freed address not reused: %s", ip)
	}
	if err := n.Configure("10.244.9.0/24"); err != nil {
		t.Fatal(err)
	}
	if ip, _ := n.SetUp(ctx, network.Pod{SandboxID: "new"}); ip != "10.244.9.2" {
		t.Errorf("after Configure: %s", ip)
	}
	if n.InUse() != 6 {
		t.Errorf("in use %d", n.InUse())
	}
}

func TestNthSubnet(t *testing.T) {
	for _, tt := range []struct {
		base    string
		bits, n int
		want    string
	}{
		{"10.128.0.0/10", 24, 0, "10.128.0.0/24"},
		{"10.128.0.0/10", 24, 300, "10.129.44.0/24"},
		{"fd00::/48", 64, 2, "fd00:0:0:2::/64"},
		{"10.128.0.0/10", 24, 1 << 14, "error"},
	} {
		got, err := NthSubnet(tt.base, tt.bits, tt.n)
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("NthSubnet(%s, %d, %d) = %s (%v), want %s", tt.base, tt.bits, tt.n, got, err, tt.want)
		}
	}
}
