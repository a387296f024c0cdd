package e2e_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/vishvananda/netlink"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/secureserving"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
	"github.com/minik8s/minik8s/kubelet/app"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/server"
	"github.com/minik8s/minik8s/kubelet/stats"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// node is a node side on real containerd: the apiserver, a registered
// Node, the pod manager and the kubelet server.
type node struct {
	cc         *client.Config
	c          *client.Client
	kubeconfig string
	name       string
	// kubelet is the kubelet server's address; admin is a client
	// certificate of system:masters it accepts.
	kubelet string
	admin   tls.Certificate
	other   tls.Certificate // a user the kubelet does not serve
}

// startNode starts a node side for one test; index keeps parallel tests'
// bridges, subnets and containerd namespaces apart.
func startNode(t *testing.T, ctx context.Context, index int) *node {
	t.Helper()
	const socket = "/run/containerd/containerd.sock"
	if os.Geteuid() != 0 {
		t.Skip("needs root for containerd")
	}
	if _, err := os.Stat(socket); err != nil {
		t.Skipf("needs containerd at %s", socket)
	}
	s := apiservertest.Start(t, apiservertest.WithTLS)
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cc.QPS = -1
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	seq := 200 + (os.Getpid()*4+index)%50
	nodeName, ns, bridge, cidr := "e2e-node", fmt.Sprintf("minik8s-e2e-%d-%d", os.Getpid(), index), fmt.Sprintf("mk8se%d", seq), fmt.Sprintf("10.244.%d.0/24", seq)
	dir := t.TempDir()
	logsDir := filepath.Join(dir, "logs")
	// The Node as nodeipam leaves it: a podCIDR.
	if _, err := client.Resource[api.Node](c).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: nodeName},
		Spec: api.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}}}); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(context.Background())
	rt, err := containerd.New(runCtx, containerd.Config{Namespace: ns, SandboxImage: testimage.Ref, StateDir: filepath.Join(dir, "state"), CgroupParent: "/" + ns})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	netCfg := network.Config{ConfDir: filepath.Join(dir, "net.d"), StateDir: filepath.Join(dir, "cni"), NetworkName: "minik8s-" + bridge, BridgeName: bridge}
	nm, err := network.New(netCfg)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	var managerDone, serverDone, statusDone = make(chan error, 1), make(chan error, 1), make(chan error, 1)
	t.Cleanup(func() {
		stop()
		for _, ch := range []chan error{managerDone, serverDone, statusDone} {
			select {
			case <-ch:
			case <-time.After(30 * time.Second):
			}
		}
		_ = rt.Close()
		cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer ccancel()
		rt2, err := containerd.New(cctx, containerd.Config{Namespace: ns, StateDir: filepath.Join(dir, "state"), CgroupParent: "/" + ns})
		if err != nil {
			return
		}
		defer rt2.Close()
		cs, _ := rt2.ListPodContainers(cctx, "")
		for _, ct := range cs {
			if ct.Kind == runtime.KindSandbox {
				np := network.Pod{Namespace: ct.PodNamespace, Name: ct.PodName, UID: ct.PodUID, SandboxID: ct.ID}
				if ct.State == runtime.StateRunning {
					np.NetNS = runtime.NetNSPath(ct.PID)
				}
				_ = nm.TearDown(cctx, np)
			}
		}
		for _, ct := range cs {
			_ = rt2.RemoveContainer(cctx, ct.ID)
			rt2.RemovePodCgroups(ct.PodUID)
		}
		nctx := namespaces.WithNamespace(cctx, ns)
		imgs, _ := rt2.Client().ImageService().List(nctx)
		for _, i := range imgs {
			_ = rt2.Client().ImageService().Delete(nctx, i.Name)
		}
		for range 20 {
			if rt2.Client().NamespaceService().Delete(nctx, ns) == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		// Every hierarchy, the unified one included.
		testimage.RemoveCgroupTree(ns)
		if l, err := netlink.LinkByName(bridge); err == nil {
			_ = netlink.LinkDel(l)
		}
	})
	if err := testimage.Import(namespaces.WithNamespace(ctx, ns), rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}
	bc := events.NewBroadcaster(c, events.Options{Component: "kubelet", Host: nodeName})
	go bc.Run(runCtx)

	// The kubelet server, on a free port; the node reports it.
	cert, err := bootstrap.EnsureServingCert(filepath.Join(dir, "root"), nodeName, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ns1, err := nodestatus.New(nodestatus.Config{Client: c, NodeName: nodeName, NodeIP: net.ParseIP("127.0.0.1"), RootDir: dir,
		KubeletPort: l.Addr().(*net.TCPAddr).Port, Recorder: bc.Recorder(), Logger: apiservertest.Logger(),
		RuntimeVersion: func() (string, error) {
			name, v, err := rt.Version(runCtx)
			return name + "://" + v, err
		},
		RuntimeHealthy: func() error { return rt.Status(runCtx) },
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { statusDone <- ns1.Run(runCtx) }()
	mgr := pods.New(c, rt, nm, bc.Recorder(), pods.Options{NodeName: nodeName, NodeIP: "127.0.0.1", RootDir: filepath.Join(dir, "root"),
		LogsDir: logsDir, ClusterDNS: []string{"10.96.0.10"}, ResyncPeriod: 2 * time.Second, Logger: apiservertest.Logger()})
	rt.SetOnExit(mgr.OnContainerExit)
	go func() { managerDone <- mgr.Run(runCtx) }()
	sp, err := stats.New(stats.Config{NodeName: nodeName, CgroupParent: "/" + ns, Containers: app.RuntimeContainers{Runtime: rt}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Certificate: cert, ClientCAs: s.PKI().CA.Pool(), PodLogsDir: logsDir,
		Pods: mgr, Exec: app.Executor{Pods: mgr}, Attach: app.Executor{Pods: mgr}, PortForward: app.Executor{Pods: mgr},
		Stats: sp, Authorizer: &app.SubjectAccessReviews{Client: c, NodeName: nodeName, DeniedTTL: time.Second},
		Tokens: &app.TokenReviews{Reviewer: &secureserving.TokenReviewer{Client: c, TTL: time.Minute}}, Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { serverDone <- srv.Serve(runCtx, l) }()

	nd, err := ns1.WaitForNode(ctx, func(n *api.Node) bool {
		return n.Status.DaemonEndpoints.KubeletEndpoint.Port != 0 && n.Spec.PodCIDR == cidr
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := nd.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(v, "containerd://") || len(v) <= len("containerd://") {
		t.Errorf("containerRuntimeVersion = %q", v)
	}
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("e2e-admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err = s.PKI().CA.IssueClient("e2e-other", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &node{cc: cc, c: c, kubeconfig: s.Options.WriteKubeconfig, name: nodeName, kubelet: l.Addr().String(), admin: admin, other: other}
}

// TestEndToEnd is a whole node side against real containerd: the node
// registers (nodestatus), the pod manager runs a pod, and its logs and an
// exec go client -> apiserver -> kubelet server -> container.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	n := startNode(t, ctx, 0)
	c, cc, nodeName := n.c, n.cc, n.name

	one := int64(1)
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "talker"}, Spec: api.PodSpec{
		NodeName: nodeName, TerminationGracePeriodSeconds: &one,
		Containers: []api.Container{{Name: "main", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent,
			Command: []string{"sh", "-c", "echo hello from the container; echo oops >&2; while true; do sleep 1; done"}}},
	}}
	pc := client.Resource[api.Pod](c).Namespace("default")
	if _, err := pc.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	var got string
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, err := c.Do(ctx, client.Request{Path: "/api/v1/namespaces/default/pods/talker/log"})
		got = string(b)
		// stdout and stderr are separate pipes: their order is not fixed.
		if err == nil && (got == "hello from the container\noops\n" || got == "oops\nhello from the container\n") {
			break
		}
		if time.Now().After(deadline) {
			p, _ := pc.Get(ctx, "talker")
			t.Fatalf("logs through the apiserver: %q, %v; pod %+v", got, err, p.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}

	var out bytes.Buffer
	q := url.Values{"command": {"sh", "-c", "hostname; read line; echo got $line"}, "stdin": {"true"}, "stdout": {"true"}, "stderr": {"true"}}
	if err := remotecommand.Exec(ctx, cc, "/api/v1/namespaces/default/pods/talker/exec", q,
		remotecommand.Options{Stdin: strings.NewReader("ping\n"), Stdout: &out, Stderr: io.Discard}); err != nil {
		t.Fatalf("exec: %v (out %q)", err, out.String())
	}
	if out.String() != "talker\ngot ping\n" {
		t.Errorf("exec output %q", out.String())
	}
	err := remotecommand.Exec(ctx, cc, "/api/v1/namespaces/default/pods/talker/exec", url.Values{"command": {"sh", "-c", "exit 7"}, "stdout": {"true"}},
		remotecommand.Options{Stdout: io.Discard})
	var ee *remotecommand.ExitError
	if !errors.As(err, &ee) || ee.Code != 7 {
		t.Errorf("exit 7: %v", err)
	}

	// Deleting the pod: the kubelet tears it down and removes the object.
	if err := pc.Delete(ctx, "talker", nil); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := pc.Get(ctx, "talker")
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod not removed: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
