package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// testNet is a node network namespace with a bridge (10.244.250.1/24) and
// pod namespaces attached to it, all made by the test and removed after.
type testNet struct {
	t    testing.TB
	node string
	pods []string
}

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

func newTestNet(t *testing.T, pods int) *testNet { return newTestNetB(t, pods) }

// newTestNetB is newTestNet for tests and benchmarks.
func newTestNetB(t testing.TB, pods int) *testNet {
	requireNetAdmin(t)
	tag := fmt.Sprintf("%d", os.Getpid()%100000)
	n := &testNet{t: t, node: "mk8s-px-node-" + tag}
	run(t, "ip", "netns", "add", n.node)
	t.Cleanup(func() {
		for _, p := range n.pods {
			_ = exec.Command("ip", "netns", "del", p).Run()
		}
		_ = exec.Command("ip", "netns", "del", n.node).Run()
	})
	in := func(ns string, args ...string) { run(t, append([]string{"ip", "netns", "exec", ns}, args...)...) }
	in(n.node, "ip", "link", "set", "lo", "up")
	in(n.node, "ip", "link", "add", "br0", "type", "bridge")
	in(n.node, "ip", "addr", "add", "10.244.250.1/24", "dev", "br0")
	in(n.node, "ip", "link", "set", "br0", "up")
	// Like a real node, a default route (ClusterIPs route nowhere real).
	in(n.node, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink1")
	in(n.node, "ip", "link", "set", "uplink0", "up")
	in(n.node, "ip", "link", "set", "uplink1", "up")
	in(n.node, "ip", "route", "add", "default", "dev", "uplink0")
	for i := 0; i < pods; i++ {
		pod := fmt.Sprintf("mk8s-px-pod%d-%s", i, tag)
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
		in(pod, "ip", "route", "add", "default", "via", "10.244.250.1")
	}
	return n
}

func (n *testNet) podIP(i int) string { return fmt.Sprintf("10.244.250.%d", 10+i) }

// inNetns runs f on an OS thread switched into the named namespace.
func inNetns(name string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is left locked (and so discarded when the goroutine
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
