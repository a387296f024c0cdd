package netnstest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
)

// BridgeIP is the node's address on its pod bridge br0 (/24).
const BridgeIP = "10.244.250.1"

// PodIP is pod i's address on the bridge.
func PodIP(i int) string { return fmt.Sprintf("10.244.250.%d", 10+i) }

// Run runs a command, failing the test with its output if it fails.
func Run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// RequireNetAdmin skips the test without root, iproute2 or iptables, or in
// -short mode.
func RequireNetAdmin(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces and iptables")
	}
	for _, tool := range []string{"ip", "iptables", "iptables-restore", "iptables-save"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (installed by scripts/deps.sh test)", tool)
		}
	}
}

// Do runs f on an OS thread switched into the named namespace.
func Do(name string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread stays locked (and is discarded when the goroutine
		// ends) so no other goroutine ever runs in the wrong namespace.
		runtime.LockOSThread()
		target, err := netns.GetFromName(name)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return <-errc
}

// Net is a node namespace with a bridge and pod namespaces on it.
type Net struct {
	T testing.TB
	// Tag makes this test process's namespace names unique.
	Tag  string
	Node string
	Pods []string
	made []string
}

// New makes PREFIX-node-TAG (loopback up, bridge br0 at BridgeIP/24),
// calls extra to add to it (before the pods), then pods namespaces
// PREFIX-podI-TAG on the bridge at PodIP(i), routed through the bridge.
func New(t testing.TB, prefix string, pods int, extra func(n *Net)) *Net {
	RequireNetAdmin(t)
	n := &Net{T: t, Tag: fmt.Sprintf("%d", os.Getpid()%100000)}
	t.Cleanup(func() {
		for i := len(n.made) - 1; i >= 0; i-- {
			_ = exec.Command("ip", "netns", "del", n.made[i]).Run()
		}
	})
	n.Node = n.AddNamespace(prefix + "-node-" + n.Tag)
	n.In(n.Node, "ip", "link", "set", "lo", "up")
	n.In(n.Node, "ip", "link", "add", "br0", "type", "bridge")
	n.In(n.Node, "ip", "addr", "add", BridgeIP+"/24", "dev", "br0")
	n.In(n.Node, "ip", "link", "set", "br0", "up")
	if extra != nil {
		extra(n)
	}
	for i := 0; i < pods; i++ {
		pod := n.AddNamespace(fmt.Sprintf("%s-pod%d-%s", prefix, i, n.Tag))
		n.Pods = append(n.Pods, pod)
		host, peer := fmt.Sprintf("vh%d", i), fmt.Sprintf("vp%d", i)
		n.In(n.Node, "ip", "link", "add", host, "type", "veth", "peer", "name", peer)
		n.In(n.Node, "ip", "link", "set", peer, "netns", pod)
		n.In(n.Node, "ip", "link", "set", host, "master", "br0")
		n.In(n.Node, "ip", "link", "set", host, "up")
		n.In(pod, "ip", "link", "set", "lo", "up")
		n.In(pod, "ip", "addr", "add", PodIP(i)+"/24", "dev", peer)
		n.In(pod, "ip", "link", "set", peer, "up")
		n.In(pod, "ip", "route", "add", "default", "via", BridgeIP)
	}
	return n
}

// AddNamespace makes a namespace removed with the others at the end.
func (n *Net) AddNamespace(name string) string {
	n.T.Helper()
	Run(n.T, "ip", "netns", "add", name)
	n.made = append(n.made, name)
	return name
}

// In runs a command in namespace ns.
func (n *Net) In(ns string, args ...string) {
	n.T.Helper()
	Run(n.T, append([]string{"ip", "netns", "exec", ns}, args...)...)
}
