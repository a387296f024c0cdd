package netpol

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/kubelet/netnstest"
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
	nodeIP = netnstest.BridgeIP
	extIP  = "192.168.250.2"
)

func run(t testing.TB, args ...string) { t.Helper(); netnstest.Run(t, args...) }

func requireNetAdmin(t testing.TB) { t.Helper(); netnstest.RequireNetAdmin(t) }

func newTestNet(t testing.TB, pods int) *testNet {
	var ext string
	n := netnstest.New(t, "mk8s-np", pods, func(n *netnstest.Net) {
		ext = n.AddNamespace("mk8s-np-ext-" + n.Tag)
		n.In(n.Node, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		if out, err := exec.Command("ip", "netns", "exec", n.Node, "cat", "/proc/sys/net/bridge/bridge-nf-call-iptables").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
			t.Skipf("bridged traffic does not reach iptables here (br_netfilter: %q, %v)", out, err)
		}
		n.In(n.Node, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink1")
		n.In(n.Node, "ip", "link", "set", "uplink1", "netns", ext)
		n.In(n.Node, "ip", "addr", "add", "192.168.250.1/24", "dev", "uplink0")
		n.In(n.Node, "ip", "link", "set", "uplink0", "up")
		n.In(ext, "ip", "link", "set", "lo", "up")
		n.In(ext, "ip", "addr", "add", extIP+"/24", "dev", "uplink1")
		n.In(ext, "ip", "link", "set", "uplink1", "up")
		n.In(ext, "ip", "route", "add", "10.244.0.0/16", "via", "192.168.250.1")
	})
	return &testNet{t: t, node: n.Node, ext: ext, pods: n.Pods}
}

func (n *testNet) podIP(i int) string { return netnstest.PodIP(i) }

// inNetns runs f on an OS thread switched into the named namespace.
func inNetns(name string, f func() error) error { return netnstest.Do(name, f) }

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
