package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/minik8s/minik8s/kubelet/netnstest"
)

// testNet is a node network namespace with a bridge (10.244.250.1/24) and
// pod namespaces attached to it (kubelet/netnstest), all made by the test
// and removed after.
type testNet struct {
	t    testing.TB
	node string
	pods []string
}

func run(t testing.TB, args ...string) { t.Helper(); netnstest.Run(t, args...) }

func requireNetAdmin(t testing.TB) { t.Helper(); netnstest.RequireNetAdmin(t) }

func newTestNet(t *testing.T, pods int) *testNet { return newTestNetB(t, pods) }

// newTestNetB is newTestNet for tests and benchmarks.
func newTestNetB(t testing.TB, pods int) *testNet {
	n := netnstest.New(t, "mk8s-px", pods, func(n *netnstest.Net) {
		// Like a real node, a default route (ClusterIPs route nowhere real).
		n.In(n.Node, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink1")
		n.In(n.Node, "ip", "link", "set", "uplink0", "up")
		n.In(n.Node, "ip", "link", "set", "uplink1", "up")
		n.In(n.Node, "ip", "route", "add", "default", "dev", "uplink0")
	})
	return &testNet{t: t, node: n.Node, pods: n.Pods}
}

func (n *testNet) podIP(i int) string { return netnstest.PodIP(i) }

// inNetns runs f on an OS thread switched into the named namespace.
func inNetns(name string, f func() error) error { return netnstest.Do(name, f) }

// serve starts an HTTP server in pod i answering its own name.
func (n *testNet) serve(i int, port int) {
	n.t.Helper()
	var ln net.Listener
	err := inNetns(n.pods[i], func() (err error) {
		ln, err = net.Listen("tcp", fmt.Sprintf("%s:%d", n.podIP(i), port))
		return err
	})
	if err != nil {
		n.t.Fatal(err)
	}
	name := fmt.Sprintf("pod-%d", i)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })}
	go srv.Serve(ln)
	n.t.Cleanup(func() { srv.Close() })
}

// client is an HTTP client whose connections start in the node namespace.
func (n *testNet) client() *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := inNetns(n.node, func() (err error) {
			d := net.Dialer{Timeout: 2 * time.Second}
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	return &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// get fetches url from the node namespace: the body, or the error.
func (n *testNet) get(url string) (string, error) {
	resp, err := n.client().Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// serveUDP starts a UDP server in pod i answering each datagram with its
// own name, as agnhost netexec's --udp-port does.
func (n *testNet) serveUDP(i int, port int) {
	n.t.Helper()
	var pc net.PacketConn
	err := inNetns(n.pods[i], func() (err error) {
		pc, err = net.ListenPacket("udp", fmt.Sprintf("%s:%d", n.podIP(i), port))
		return err
	})
	if err != nil {
		n.t.Fatal(err)
	}
	name := fmt.Sprintf("pod-%d", i)
	go func() {
		buf := make([]byte, 1500)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(name), from)
		}
	}()
	n.t.Cleanup(func() { pc.Close() })
}

// udp sends a datagram to addr from the node namespace and returns the
// answer, or the error: ECONNREFUSED when an ICMP port unreachable comes
// back, a timeout when nothing does.
func (n *testNet) udp(addr string) (string, error) {
	var c net.Conn
	err := inNetns(n.node, func() (err error) {
		c, err = net.Dial("udp", addr)
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte("hostName")); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	m, err := c.Read(buf)
	return string(buf[:m]), err
}
