package network

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

func TestGateway(t *testing.T) {
	for cidr, want := range map[string]string{"10.244.2.0/24": "10.244.2.1/24", "10.88.0.0/16": "10.88.0.1/16"} {
		gw, err := gateway(cidr)
		if err != nil || gw.String() != want {
			t.Errorf("gateway(%s) = %v, %v; want %s", cidr, gw, err, want)
		}
	}
	if _, err := gateway("fd00::/64"); err == nil {
		t.Error("gateway of an IPv6 CIDR accepted")
	}
}

// inNetNS runs f on a locked thread inside a fresh network namespace.
func inNetNS(t *testing.T, f func()) {
	t.Helper()
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	name := fmt.Sprintf("mk8s-br-%d", os.Getpid()%100000)
	ns, err := netns.NewNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ns.Close()
		_ = netns.Set(orig)
		_ = netns.DeleteNamed(name)
	}()
	f()
}

// TestRepairBridge: a bridge left with another node's gateway is deleted
// (the bridge plugin would refuse it forever); one with this node's
// gateway, or none at all, is left alone.
func TestRepairBridge(t *testing.T) {
	inNetNS(t, func() {
		gw, _ := gateway("10.244.2.0/24")
		if stale, err := repairBridge("mk8s-br", gw); err != nil || stale != nil {
			t.Fatalf("no bridge: %v, %v", stale, err)
		}
		mk := func(addr string) {
			br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "mk8s-br"}}
			if err := netlink.LinkAdd(br); err != nil {
				t.Fatal(err)
			}
			a, _ := netlink.ParseAddr(addr)
			if err := netlink.AddrAdd(br, a); err != nil {
				t.Fatal(err)
			}
		}
		mk("10.244.2.1/24")
		if stale, err := repairBridge("mk8s-br", gw); err != nil || stale != nil {
			t.Fatalf("bridge with the right gateway: %v, %v", stale, err)
		}
		if _, err := netlink.LinkByName("mk8s-br"); err != nil {
			t.Fatalf("bridge with the right gateway deleted: %v", err)
		}
		_ = netlink.LinkDel(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "mk8s-br"}})
		mk("10.244.7.1/24")
		stale, err := repairBridge("mk8s-br", gw)
		if err != nil || len(stale) != 1 || stale[0] != "10.244.7.1/24" {
			t.Fatalf("bridge with another node's gateway: %v, %v", stale, err)
		}
		if _, err := netlink.LinkByName("mk8s-br"); err == nil {
			t.Fatal("bridge with another node's gateway still there")
		}
	})
}
