package app_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/vishvananda/netlink"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/kubelet/app"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestKubeletRunsPod runs the whole kubelet (app.Run) against a secured
// apiserver: it registers its Node, waits for a podCIDR, runs a pod, and
// serves /healthz (healthz port) and /metrics (HTTPS port).
func TestKubeletRunsPod(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/run/containerd/containerd.sock"); err != nil {
		t.Skip("needs containerd at /run/containerd/containerd.sock")
	}
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)
	n := 200 + os.Getpid()%50
	dir := t.TempDir()
	o := app.DefaultOptions()
	o.Kubeconfig = s.Options.WriteKubeconfig
	o.Node.HostnameOverride = fmt.Sprintf("appnode-%d", n)
	o.Node.NodeIP = "127.0.0.1"
	o.ServerListener, o.HealthzListener = daemontest.Listen(t), daemontest.Listen(t)
	o.Server.Address, o.Server.Port = "127.0.0.1", o.ServerListener.Addr().(*net.TCPAddr).Port
	o.HealthzPort = o.HealthzListener.Addr().(*net.TCPAddr).Port
	o.ContainerdNamespace = fmt.Sprintf("minik8s-apptest-%d", os.Getpid())
	o.CgroupRoot = "/" + o.ContainerdNamespace
	o.RootDir, o.PodLogsDir = filepath.Join(dir, "root"), filepath.Join(dir, "logs")
	o.CNIConfDir, o.CNIBridge = filepath.Join(dir, "net.d"), fmt.Sprintf("mk8sapp%d", n)
	o.ClusterDNS = "10.96.0.10"
	cidr := fmt.Sprintf("10.244.%d.0/24", n)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// No registry: the pod's image is loaded into the node's containerd.
	rt, err := containerd.New(ctx, containerd.Config{Namespace: o.ContainerdNamespace, StateDir: filepath.Join(dir, "import")})
	if err != nil {
		t.Fatal(err)
	}
	if err := testimage.Import(namespaces.WithNamespace(ctx, o.ContainerdNamespace), rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}
	rt.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- app.Run(runCtx, o, apiservertest.Logger()) }()
	t.Cleanup(func() {
		stop()
		<-done
		cleanup(t, o, cidr)
		testimage.RemoveCgroupTree(o.ContainerdNamespace)
	})

	nodes := client.Resource[api.Node](c)
	var node *api.Node
	for node == nil {
		if nd, err := nodes.Get(ctx, o.Node.HostnameOverride); err == nil {
			node = nd
		} else if ctx.Err() != nil {
			t.Fatal("node never registered")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The controller-manager's nodeipam would do this.
	for {
		nd, err := nodes.Get(ctx, node.Name)
		if err != nil {
			t.Fatal(err)
		}
		nd.Spec.PodCIDR, nd.Spec.PodCIDRs = cidr, []string{cidr}
		if _, err = nodes.Update(ctx, nd); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
	}
	pods := client.Resource[api.Pod](c).Namespace("default")
	one := int64(1)
	_, err = pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "app-pod", Namespace: "default"},
		Spec: api.PodSpec{NodeName: node.Name, TerminationGracePeriodSeconds: &one, Containers: []api.Container{{
			Name: "main", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent, Command: []string{"sh", "-c", "echo up; sleep 600"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := pods.Get(ctx, "app-pod")
		if err == nil && p.Status.Phase == api.PodRunning && p.Status.PodIP != "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod not running: %+v %v", p, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	get := func(hc *http.Client, url string) string {
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if h := get(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/healthz", o.HealthzPort)); !strings.Contains(h, "ok") {
		t.Fatalf("healthz: %q", h)
	}
	// The metrics are on the kubelet's HTTPS port, for a client the
	// cluster CA certified (a cluster admin here), as in Kubernetes.
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("root", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{admin}}}} //nolint:gosec // the kubelet's own certificate
	metricsURL := fmt.Sprintf("https://127.0.0.1:%d/metrics", o.Server.Port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		m := get(hc, metricsURL)
		if strings.Contains(m, "kubelet_running_pods 1") && strings.Contains(m, `kubelet_running_containers{container_state="running"} 1`) &&
			strings.Contains(m, "kubelet_pod_start_duration_seconds_count 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics: %s", grep(m, "kubelet_"))
		}
	}
	nd, err := nodes.Get(ctx, node.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(nd.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") {
		t.Errorf("containerRuntimeVersion %q", nd.Status.NodeInfo.ContainerRuntimeVersion)
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func cleanup(t *testing.T, o app.Options, cidr string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt, err := containerd.New(ctx, containerd.Config{Address: o.ContainerdAddress, Namespace: o.ContainerdNamespace, StateDir: app.RuntimeStateDir(o.ContainerdNamespace), CgroupParent: o.CgroupRoot})
	defer os.RemoveAll(app.RuntimeStateDir(o.ContainerdNamespace))
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	defer rt.Close()
	nm, _ := network.New(network.Config{ConfDir: o.CNIConfDir, StateDir: filepath.Join(o.RootDir, "cni"), BridgeName: o.CNIBridge})
	_ = nm.Configure(cidr)
	cs, _ := rt.ListPodContainers(ctx, "")
	for _, c := range cs {
		if c.Kind == runtime.KindSandbox {
			np := network.Pod{Namespace: c.PodNamespace, Name: c.PodName, UID: c.PodUID, SandboxID: c.ID, NetNS: c.NetNSPath()}
			_ = nm.TearDown(ctx, np)
		}
	}
	for _, c := range cs {
		_ = rt.RemoveContainer(ctx, c.ID)
		rt.RemovePodCgroups(c.PodUID)
	}
	if err := testimage.DeleteNamespace(ctx, rt.Client(), o.ContainerdNamespace); err != nil {
		t.Logf("cleanup: %v", err)
	}
	// The kubelet's node masquerade rule outlives it, as it must for the
	// pods; the test's goes with the test.
	if err := network.RemoveMasquerade(); err != nil {
		t.Logf("cleanup: %v", err)
	}
	if l, err := netlink.LinkByName(o.CNIBridge); err == nil {
		_ = netlink.LinkDel(l)
	}
}
