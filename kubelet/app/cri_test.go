package app_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/kubelet/app"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/cri"
	"github.com/minik8s/minik8s/kubelet/runtime/cri/critest"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// criOptions are a test kubelet's options against apiserver s.
func criOptions(t *testing.T, s *apiservertest.Server, name string) app.Options {
	dir := t.TempDir()
	o := app.DefaultOptions()
	o.Kubeconfig = s.Options.WriteKubeconfig
	o.Node.HostnameOverride = name
	o.Node.NodeIP = "127.0.0.1"
	o.ServerListener, o.HealthzListener = daemontest.Listen(t), daemontest.Listen(t)
	o.Server.Address, o.Server.Port = "127.0.0.1", o.ServerListener.Addr().(*net.TCPAddr).Port
	o.HealthzPort = o.HealthzListener.Addr().(*net.TCPAddr).Port
	o.RootDir, o.PodLogsDir = filepath.Join(dir, "root"), filepath.Join(dir, "logs")
	o.CNIConfDir = filepath.Join(dir, "net.d")
	o.RuntimeOwner = name
	o.CgroupRoot = "/" + name
	return o
}

func runKubelet(t *testing.T, ctx context.Context, o app.Options) <-chan error {
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- app.Run(runCtx, o, apiservertest.Logger()) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return done
}

func waitNode(t *testing.T, ctx context.Context, c *client.Client, name string, done <-chan error, cond func(*api.Node) bool) *api.Node {
	t.Helper()
	var last *api.Node
	for ctx.Err() == nil {
		select {
		case err := <-done:
			t.Fatalf("kubelet exited: %v", err)
		default:
		}
		if nd, err := client.Resource[api.Node](c).Get(ctx, name); err == nil {
			last = nd
			if cond(nd) {
				return nd
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("node %s: timed out; last %+v", name, last)
	return nil
}

func readyCondition(n *api.Node) *api.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == api.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// TestKubeletCRIRuntimeDown: a --container-runtime-endpoint nobody
// answers leaves the kubelet running and its Node NotReady with "container
// runtime is down", not a kubelet that exits.
func TestKubeletCRIRuntimeDown(t *testing.T) {
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)
	o := criOptions(t, s, fmt.Sprintf("cridown-%d", os.Getpid()%1000))
	o.ContainerRuntimeEndpoint = "unix://" + filepath.Join(t.TempDir(), "absent.sock")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := runKubelet(t, ctx, o)
	nd := waitNode(t, ctx, c, o.Node.HostnameOverride, done, func(n *api.Node) bool { return readyCondition(n) != nil })
	rc := readyCondition(nd)
	if rc.Status != api.ConditionFalse || !strings.Contains(rc.Message, "container runtime is down") || nd.Status.NodeInfo.ContainerRuntimeVersion != "" {
		t.Fatalf("Ready %+v, containerRuntimeVersion %q; want False, container runtime is down", *rc, nd.Status.NodeInfo.ContainerRuntimeVersion)
	}
	select {
	case err := <-done:
		t.Fatalf("kubelet exited: %v", err)
	case <-time.After(2 * time.Second):
	}
}

// TestKubeletRunsPodCRI runs the whole kubelet with
// --container-runtime-endpoint on containerd's CRI plugin: the Node
// reports the runtime's version, the kubelet writes the conflist where the
// plugin reads it, and a pod runs with an IP of the node's podCIDR and a
// containerd:// container ID.
func TestKubeletRunsPodCRI(t *testing.T) {
	if !critest.Available() {
		t.Skip("needs root and containerd at " + critest.Socket)
	}
	critest.Lock(t)
	pctx, pcancel := context.WithTimeout(context.Background(), time.Minute)
	pc, err := critest.Prepare(pctx, t)
	pcancel()
	if err != nil {
		t.Fatal(err)
	}
	if others, _ := filepath.Glob(filepath.Join(pc.CNI.ConfDir, "*.conf*")); len(others) > 0 {
		t.Fatalf("%s already holds %v: containerd's CRI plugin loads only its first conflist", pc.CNI.ConfDir, others)
	}
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)
	n := 200 + os.Getpid()%50
	o := criOptions(t, s, fmt.Sprintf("crinode-%d", n))
	o.ContainerRuntimeEndpoint = critest.Endpoint
	o.CNIConfDir, o.CNIBinDir, o.CNIBridge = pc.CNI.ConfDir, pc.CNI.BinDir, fmt.Sprintf("mk8scri%d", n)
	cidr := fmt.Sprintf("10.244.%d.0/24", n)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() { cleanupCRI(t, o) })
	done := runKubelet(t, ctx, o)

	vctx, vcancel := context.WithTimeout(ctx, 10*time.Second)
	rt, err := cri.New(vctx, cri.Config{Endpoint: critest.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	name, version, err := rt.Version(vctx)
	vcancel()
	rt.Close()
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.Resource[api.Node](c)
	nd := waitNode(t, ctx, c, o.Node.HostnameOverride, done, func(*api.Node) bool { return true })
	for {
		nd.Spec.PodCIDR, nd.Spec.PodCIDRs = cidr, []string{cidr}
		if _, err = nodes.Update(ctx, nd); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		if nd, err = nodes.Get(ctx, nd.Name); err != nil {
			t.Fatal(err)
		}
	}
	want := name + "://" + version
	nd = waitNode(t, ctx, c, nd.Name, done, func(n *api.Node) bool {
		rc := readyCondition(n)
		return rc != nil && rc.Status == api.ConditionTrue && n.Status.NodeInfo.ContainerRuntimeVersion == want
	})
	if !strings.HasPrefix(want, "containerd://1.") {
		t.Errorf("containerRuntimeVersion %q", want)
	}
	pods := client.Resource[api.Pod](c).Namespace("default")
	one := int64(1)
	_, err = pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "cri-pod", Namespace: "default"},
		Spec: api.PodSpec{NodeName: nd.Name, TerminationGracePeriodSeconds: &one, Containers: []api.Container{{
			Name: "main", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent, Command: []string{"sh", "-c", "echo up; sleep 600"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var p *api.Pod
	for {
		p, err = pods.Get(ctx, "cri-pod")
		if err == nil && p.Status.Phase == api.PodRunning && p.Status.PodIP != "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod not running: %+v %v", p, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, ipnet, _ := net.ParseCIDR(cidr)
	if !ipnet.Contains(net.ParseIP(p.Status.PodIP)) || len(p.Status.ContainerStatuses) != 1 ||
		!strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://") {
		t.Fatalf("pod status %+v", p.Status)
	}
	if _, err := os.Stat(filepath.Join(o.CNIConfDir, "10-minik8s.conflist")); err != nil {
		t.Fatalf("the kubelet's conflist: %v", err)
	}
}

// cleanupCRI removes the test kubelet's sandboxes, cgroups, conflist,
// bridge and masquerade rule.
func cleanupCRI(t *testing.T, o app.Options) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt, err := cri.New(ctx, cri.Config{Endpoint: o.ContainerRuntimeEndpoint, CgroupParent: o.CgroupRoot, Owner: o.RuntimeOwner})
	if err == nil {
		cs, _ := rt.ListPodContainers(ctx, "")
		for _, c := range cs {
			if c.Kind == runtime.KindSandbox {
				_ = rt.RemoveContainer(ctx, c.ID)
			}
		}
		for _, c := range cs {
			rt.RemovePodCgroups(c.PodUID)
		}
		rt.Close()
	}
	testimage.RemoveCgroupTree(o.CgroupRoot)
	_ = os.Remove(filepath.Join(o.CNIConfDir, "10-minik8s.conflist"))
	if err := network.RemoveMasquerade(); err != nil {
		t.Logf("cleanup: %v", err)
	}
	if l, err := netlink.LinkByName(o.CNIBridge); err == nil {
		_ = netlink.LinkDel(l)
	}
}
