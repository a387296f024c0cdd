package netpol

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// testNet is a node network namespace with a bridge (10.244.250.1/24, pod
// traffic crossing it goes through iptables as on a node with
// br_netfilter), pod namespaces on the bridge, and an "outside" namespace
// (192.168.250.2) behind the node's uplink, all made by the test and
// removed after. It is the service proxy's test network plus the outside.
type testNet struct {
	t    testing.TB
	node string
	ext  string
	pods []string
}

const (
	nodeIP = "10.244.250.1"
	extIP  = "192.168.250.2"
)

func run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func requireNetAdmin(t testing.TB) {
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

func newTestNet(t testing.TB, pods int) *testNet {
	requireNetAdmin(t)
	tag := fmt.Sprintf("%d", os.Getpid()%100000)
	n := &testNet{t: t, node: "mk8s-np-node-" + tag, ext: "mk8s-np-ext-" + tag}
	run(t, "ip", "netns", "add", n.node)
	run(t, "ip", "netns", "add", n.ext)
	t.Cleanup(func() {
		for _, p := range n.pods {
			_ = exec.Command("ip", "netns", "del", p).Run()
		}
		_ = exec.Command("ip", "netns", "del", n.ext).Run()
		_ = exec.Command("ip", "netns", "del", n.node).Run()
	})
	in := func(ns string, args ...string) { run(t, append([]string{"ip", "netns", "exec", ns}, args...)...) }
	in(n.node, "ip", "link", "set", "lo", "up")
	in(n.node, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	if out, err := exec.Command("ip", "netns", "exec", n.node, "cat", "/proc/sys/net/bridge/bridge-nf-call-iptables").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("bridged traffic does not reach iptables here (br_netfilter: %q, %v)", out, err)
	}
	in(n.node, "ip", "link", "add", "br0", "type", "bridge")
	in(n.node, "ip", "addr", "add", nodeIP+"/24", "dev", "br0")
	in(n.node, "ip", "link", "set", "br0", "up")
	in(n.node, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink1")
	in(n.node, "ip", "link", "set", "uplink1", "netns", n.ext)
	in(n.node, "ip", "addr", "add", "192.168.250.1/24", "dev", "uplink0")
	in(n.node, "ip", "link", "set", "uplink0", "up")
	in(n.ext, "ip", "link", "set", "lo", "up")
	in(n.ext, "ip", "addr", "add", extIP+"/24", "dev", "uplink1")
	in(n.ext, "ip", "link", "set", "uplink1", "up")
	in(n.ext, "ip", "route", "add", "10.244.0.0/16", "via", "192.168.250.1")
	for i := 0; i < pods; i++ {
		pod := fmt.Sprintf("mk8s-np-pod%d-%s", i, tag)
		run(t, "ip", "netns", "add", pod)
		n.pods = append(n.pods, pod)
		host, peer := fmt.Sprintf("vh%d", i), fmt.Sprintf("vp%d", i)
		in(n.node, "ip", "link", "add", host, "type", "veth", "peer", "name", peer)
		in(n.node, "ip", "link", "set", peer, "netns", pod)
		in(n.node, "ip", "link", "set", host, "master", "br0")
		in(n.node, "ip", "link", "set", host, "up")
		in(pod, "ip", "link", "set", "lo", "up")
		in(pod, "ip", "addr", "add", n.podIP(i)+"/24", "dev", peer)
		in(pod, "ip", "link", "set", peer, "up")
		in(pod, "ip", "route", "add", "default", "via", nodeIP)
	}
	return n
}

func (n *testNet) podIP(i int) string { return fmt.Sprintf("10.244.250.%d", 10+i) }

// inNetns runs f on an OS thread switched into the named namespace.
func inNetns(name string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread stays locked (and is discarded when the goroutine
		// ends) so no other goroutine runs in the wrong namespace.
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

// serveTCP answers every connection to ip:port in namespace ns with "ok".
func (n *testNet) serveTCP(ns, ip string, port int) {
	n.t.Helper()
	var ln net.Listener
	if err := inNetns(ns, func() (err error) {
		ln, err = net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
		return err
	}); err != nil {
		n.t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					if _, err := io.WriteString(c, "ok"); err != nil {
						return
					}
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	n.t.Cleanup(func() { ln.Close() })
}

// serveUDP answers every datagram to ip:port in namespace ns with "ok".
func (n *testNet) serveUDP(ns, ip string, port int) {
	n.t.Helper()
	var pc net.PacketConn
	if err := inNetns(ns, func() (err error) {
		pc, err = net.ListenPacket("udp", fmt.Sprintf("%s:%d", ip, port))
		return err
	}); err != nil {
		n.t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte("ok"), from)
		}
	}()
	n.t.Cleanup(func() { pc.Close() })
}

// dial connects from namespace ns; the connection stays in ns.
func dial(ns, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(ns, func() (err error) {
		c, err = net.DialTimeout(network, addr, time.Second)
		return err
	})
	return c, err
}

// connect reports whether a TCP or UDP exchange from namespace ns to addr
// gets the server's answer.
func connect(ns, network, addr string) error {
	c, err := dial(ns, network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	if network == "udp" {
		if _, err := c.Write([]byte("hello")); err != nil {
			return err
		}
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "ok" {
		return fmt.Errorf("answer %q", buf)
	}
	return nil
}
