package pods_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/runtime"
	rtcontainerd "github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/runtime/cri"
	"github.com/minik8s/minik8s/kubelet/runtime/cri/critest"
	"github.com/minik8s/minik8s/kubelet/subpath"
	"github.com/minik8s/minik8s/kubelet/testimage"
	"github.com/vishvananda/netlink"
)

const socket = "/run/containerd/containerd.sock"

var subnetSeq atomic.Int32

func init() { subnetSeq.Store(int32(100 + os.Getpid()%60)) }

// node is one kubelet under test: a real apiserver, a Node object with a
// podCIDR, a containerd namespace, a CNI bridge and directories of its own.
type node struct {
	t        testing.TB
	c        *client.Client
	name     string
	ns       string
	bridge   string
	cidr     string
	dir      string
	logsDir  string
	opts     pods.Options
	insecure []string
	address  string
	// sandboxImage selects pause-container sandboxes; empty: netns only.
	sandboxImage string
	mu           sync.Mutex
	rt           *rtcontainerd.Runtime
	mgr          *pods.Manager
	cancel       context.CancelFunc
	done         chan error
	bc           *events.Broadcaster
	netConfig    network.Config
	server       *apiservertest.Server
	// beforeRun, when set, is given each pod manager before it runs (a
	// kubelet hands it its static pods then).
	beforeRun func(*pods.Manager)
	// criEndpoint selects the CRI driver on that containerd (withCRI):
	// criRT replaces rt, the runtime owns the pod network and reads the
	// node's conflist from its conf_dir (criConf).
	criEndpoint string
	criRT       *cri.Runtime
	criConf     critest.PluginConfig
}

// drivers are the runtime drivers the table tests run the pod manager on:
// the native containerd driver and the CRI driver on containerd's CRI
// plugin.
var drivers = []struct {
	name   string
	mutate func(*node)
}{
	{"containerd", func(*node) {}},
	{"cri", withCRI},
}

// withCRI runs the node's pods through containerd's CRI plugin.
func withCRI(nd *node) { nd.criEndpoint = critest.Endpoint }

// forEachDriver runs test once per runtime driver.
func forEachDriver(t *testing.T, test func(t *testing.T, driver func(*node))) {
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) { test(t, d.mutate) })
	}
}

// runtime is the node's runtime driver.
func (nd *node) runtime() runtime.Runtime {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.criRT != nil {
		return nd.criRT
	}
	return nd.rt
}

func requireContainerd(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("kubelet integration tests need root")
	}
	if _, err := os.Stat(socket); err != nil {
		t.Skipf("kubelet integration tests need containerd at %s", socket)
	}
}

func newNode(t testing.TB, mutate ...func(*node)) *node {
	return newNodeOn(t, nil, mutate...)
}

// newNodeOn is newNode against an apiserver started with server's options
// (apiservertest.WithTLS, admission plugins).
func newNodeOn(t testing.TB, server []func(*app.Options), mutate ...func(*node)) *node {
	requireContainerd(t)
	s := apiservertest.Start(t, server...)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := subnetSeq.Add(1)
	dir := t.TempDir()
	nd := &node{
		t: t, c: c, name: fmt.Sprintf("node-%d", n), ns: fmt.Sprintf("minik8s-test-%d-%d", os.Getpid(), n),
		bridge: fmt.Sprintf("mk8st%d", n), cidr: fmt.Sprintf("10.244.%d.0/24", n), dir: dir,
		logsDir: filepath.Join(dir, "logs"),
	}
	nd.opts = pods.Options{
		NodeName: nd.name, NodeIP: "127.0.0.1", RootDir: filepath.Join(dir, "root"), LogsDir: nd.logsDir,
		ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResyncPeriod: 2 * time.Second,
		BackoffInitial: time.Second, BackoffMax: 4 * time.Second,
	}
	nd.netConfig = network.Config{ConfDir: filepath.Join(dir, "net.d"), StateDir: filepath.Join(dir, "cni"),
		NetworkName: "minik8s-" + nd.bridge, BridgeName: nd.bridge}
	if f := os.Getenv("MINIK8S_KUBELET_DEBUG_LOG"); f != "" {
		out, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			nd.opts.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	for _, m := range mutate {
		m(nd)
	}
	nd.server = s
	if nd.criEndpoint != "" {
		if !critest.Available() {
			t.Skip("the CRI driver's tests need root and containerd at " + critest.Socket)
		}
		critest.Lock(t)
		pctx, pcancel := context.WithTimeout(context.Background(), time.Minute)
		nd.criConf, err = critest.Prepare(pctx, t)
		pcancel()
		if err != nil {
			t.Fatal(err)
		}
		// containerd loads the first conflist of its conf_dir alone.
		if others, _ := filepath.Glob(filepath.Join(nd.criConf.CNI.ConfDir, "*.conf*")); len(others) > 0 {
			t.Fatalf("%s already holds %v: containerd's CRI plugin loads only its first conflist, the test node's must be alone", nd.criConf.CNI.ConfDir, others)
		}
		nd.netConfig.ConfDir, nd.netConfig.BinDirs = nd.criConf.CNI.ConfDir, []string{nd.criConf.CNI.BinDir}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: nd.name}}
	if nd.cidr != "" { // "" is a node the IPAM controller has not reached
		node.Spec.PodCIDR, node.Spec.PodCIDRs = nd.cidr, []string{nd.cidr}
	}
	if _, err := client.Resource[api.Node](c).Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nd.cleanup)
	nd.start()
	if nd.criEndpoint != "" {
		return nd // critest.Prepare imported the test image
	}
	if err := testimage.Import(namespaces.WithNamespace(ctx, nd.ns), nd.rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}
	return nd
}

// start runs a kubelet pod manager against the node.
func (nd *node) start() {
	nd.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if nd.criEndpoint != "" {
		nd.startCRI(ctx, cancel)
		return
	}
	rt, err := rtcontainerd.New(ctx, rtcontainerd.Config{Address: nd.address, Namespace: nd.ns, SandboxImage: nd.sandboxImage, StateDir: filepath.Join(nd.dir, "state"),
		CgroupParent: "/" + nd.ns, InsecureRegistries: nd.insecure})
	if err != nil {
		cancel()
		nd.t.Fatal(err)
	}
	nm, err := network.New(nd.netConfig)
	if err != nil {
		cancel()
		nd.t.Fatal(err)
	}
	bc := events.NewBroadcaster(nd.c, events.Options{Component: "kubelet", Host: nd.name})
	go bc.Run(ctx)
	mgr := pods.New(nd.c, rt, nm, bc.Recorder(), nd.opts)
	rt.SetOnExit(mgr.OnContainerExit)
	if nd.beforeRun != nil {
		nd.beforeRun(mgr)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	nd.mu.Lock()
	nd.rt, nd.mgr, nd.cancel, nd.done, nd.bc = rt, mgr, cancel, done, bc
	nd.mu.Unlock()
}

// startCRI runs the pod manager on the CRI driver.
func (nd *node) startCRI(ctx context.Context, cancel context.CancelFunc) {
	nd.t.Helper()
	// Image volumes as the kubelet mounts them on containerd's CRI.
	mounter := rtcontainerd.NewCRIImageMounter(nd.criEndpoint, filepath.Join(nd.dir, "image-volumes"), nil)
	rt, err := cri.New(ctx, cri.Config{Endpoint: nd.criEndpoint, PodLogsDir: nd.logsDir, CgroupParent: "/" + nd.ns, Owner: nd.ns,
		RelistPeriod: 500 * time.Millisecond, ImageMounter: mounter})
	if err != nil {
		cancel()
		nd.t.Fatal(err)
	}
	mounter.RuntimeName = rt.Version
	nd.t.Cleanup(func() { _ = mounter.Close() })
	nm, err := network.New(nd.netConfig)
	if err != nil {
		cancel()
		nd.t.Fatal(err)
	}
	bc := events.NewBroadcaster(nd.c, events.Options{Component: "kubelet", Host: nd.name})
	go bc.Run(ctx)
	mgr := pods.New(nd.c, rt, nm, bc.Recorder(), nd.opts)
	rt.SetOnExit(mgr.OnContainerExit)
	if nd.beforeRun != nil {
		nd.beforeRun(mgr)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	nd.mu.Lock()
	nd.criRT, nd.mgr, nd.cancel, nd.done, nd.bc = rt, mgr, cancel, done, bc
	nd.mu.Unlock()
}

// kill stops the kubelet abruptly: no pod is stopped, containers keep
// running, the runtime lets go of them as a dying process would.
func (nd *node) kill() {
	nd.cancel()
	select {
	case <-nd.done:
	case <-time.After(30 * time.Second):
		nd.t.Fatal("kubelet did not stop")
	}
	nd.closeRuntime()
}

func (nd *node) closeRuntime() {
	if nd.criRT != nil {
		_ = nd.criRT.Close()
		return
	}
	_ = nd.rt.Close()
}

// cleanupCRI removes what a CRI node left: its sandboxes (with their
// containers and network), cgroups, conflist and bridge.
func (nd *node) cleanupCRI() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if dirs, err := os.ReadDir(filepath.Join(nd.opts.RootDir, "pods")); err == nil {
		for _, d := range dirs {
			if err := subpath.Clean(filepath.Join(nd.opts.RootDir, "pods", d.Name())); err != nil {
				nd.t.Logf("cleanup: %v", err)
			}
		}
	}
	rt, err := cri.New(ctx, cri.Config{Endpoint: nd.criEndpoint, PodLogsDir: nd.logsDir, CgroupParent: "/" + nd.ns, Owner: nd.ns})
	if err == nil {
		cs, _ := rt.ListPodContainers(ctx, "")
		for _, c := range cs {
			if c.Kind == runtime.KindSandbox {
				_ = rt.RemoveContainer(ctx, c.ID)
			}
		}
		for _, c := range cs {
			_ = rt.RemoveContainer(ctx, c.ID)
			rt.RemovePodCgroups(c.PodUID)
		}
		_ = rt.Close()
	}
	testimage.RemoveCgroupTree(nd.ns)
	files, _ := filepath.Glob(filepath.Join(nd.netConfig.ConfDir, "*"+nd.netConfig.NetworkName+".conflist*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	if l, err := netlink.LinkByName(nd.bridge); err == nil {
		_ = netlink.LinkDel(l)
	}
}

func (nd *node) cleanup() {
	nd.cancel()
	select {
	case <-nd.done:
	case <-time.After(30 * time.Second):
	}
	if nd.criEndpoint != "" {
		if nd.criRT != nil {
			_ = nd.criRT.Close()
		}
		nd.cleanupCRI()
		return
	}
	_ = nd.rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt, err := rtcontainerd.New(ctx, rtcontainerd.Config{Address: nd.address, Namespace: nd.ns, StateDir: filepath.Join(nd.dir, "state"), CgroupParent: "/" + nd.ns})
	if err != nil {
		nd.t.Logf("cleanup: %v", err)
		return
	}
	defer rt.Close()
	// Pods the test left running keep their subPath bind mounts; they go
	// before the temp dir is removed through them.
	if dirs, err := os.ReadDir(filepath.Join(nd.opts.RootDir, "pods")); err == nil {
		for _, d := range dirs {
			if err := subpath.Clean(filepath.Join(nd.opts.RootDir, "pods", d.Name())); err != nil {
				nd.t.Logf("cleanup: %v", err)
			}
			// And their image volumes' mounts and snapshots.
			imgs := filepath.Join(nd.opts.RootDir, "pods", d.Name(), "volumes", "kubernetes.io~image")
			vols, _ := os.ReadDir(imgs)
			for _, v := range vols {
				if err := rt.UnmountImage(ctx, filepath.Join(imgs, v.Name())); err != nil {
					nd.t.Logf("cleanup: %v", err)
				}
			}
		}
	}
	nm, _ := network.New(nd.netConfig)
	_ = nm.Configure(nd.cidr)
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
	if err := testimage.DeleteNamespace(ctx, rt.Client(), nd.ns); err != nil {
		nd.t.Logf("cleanup: delete namespace %s: %v", nd.ns, err)
	}
	testimage.RemoveCgroupTree(nd.ns)
	if l, err := netlink.LinkByName(nd.bridge); err == nil {
		_ = netlink.LinkDel(l)
	}
}

func (nd *node) pods() *client.ResourceClient[api.Pod, *api.Pod] {
	return client.Resource[api.Pod](nd.c).Namespace("default")
}

// pod is a pod bound to the node running the busybox test image.
func (nd *node) pod(name string, containers ...api.Container) *api.Pod {
	for i := range containers {
		if containers[i].Image == "" {
			containers[i].Image = testimage.Ref
		}
		if containers[i].ImagePullPolicy == "" {
			containers[i].ImagePullPolicy = api.PullIfNotPresent
		}
	}
	one := int64(1)
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       api.PodSpec{NodeName: nd.name, Containers: containers, TerminationGracePeriodSeconds: &one},
	}
}

func (nd *node) create(p *api.Pod) *api.Pod {
	nd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := nd.pods().Create(ctx, p)
	if err != nil {
		nd.t.Fatal(err)
	}
	return out
}

// waitPod polls the pod until cond holds.
func (nd *node) waitPod(name string, timeout time.Duration, what string, cond func(*api.Pod) bool) *api.Pod {
	nd.t.Helper()
	deadline := time.Now().Add(timeout)
	var last *api.Pod
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p, err := nd.pods().Get(ctx, name)
		cancel()
		if err == nil {
			last = p
			if cond(p) {
				return p
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	nd.t.Fatalf("pod %s: timed out waiting for %s; last status: %s", name, what, statusString(last))
	return nil
}

func statusString(p *api.Pod) string {
	if p == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s ip=%s", p.Status.Phase, p.Status.PodIP)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, " [%s ready=%v restarts=%d", cs.Name, cs.Ready, cs.RestartCount)
		switch {
		case cs.State.Waiting != nil:
			fmt.Fprintf(&b, " waiting %s %q", cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Running != nil:
			b.WriteString(" running")
		case cs.State.Terminated != nil:
			fmt.Fprintf(&b, " terminated %d %s", cs.State.Terminated.ExitCode, cs.State.Terminated.Reason)
		}
		b.WriteString("]")
	}
	return b.String()
}

func running(p *api.Pod) bool {
	if p.Status.Phase != api.PodRunning {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return len(p.Status.ContainerStatuses) > 0
}

func status(p *api.Pod, name string) api.ContainerStatus {
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if cs.Name == name {
			return cs
		}
	}
	return api.ContainerStatus{}
}

func condition(p *api.Pod, t api.PodConditionType) api.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// events returns "Reason: message" of the pod's events.
func (nd *node) events(name string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := client.Resource[api.Event](nd.c).Namespace("default").List(ctx, client.ListOptions{})
	if err != nil {
		nd.t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

func (nd *node) waitEvent(name, prefix string, timeout time.Duration) {
	nd.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, e := range nd.events(name) {
			if strings.HasPrefix(e, prefix) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	nd.t.Fatalf("no event %q for pod %s; events: %q", prefix, name, nd.events(name))
}

func (nd *node) logFile(p *api.Pod, container string, restart int) string {
	return pods.LogPath(nd.logsDir, p, container, restart)
}

func (nd *node) waitFile(path, want string, timeout time.Duration) string {
	nd.t.Helper()
	deadline := time.Now().Add(timeout)
	var b []byte
	for time.Now().Before(deadline) {
		b, _ = os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return string(b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	nd.t.Fatalf("%s: no %q in %q", path, want, b)
	return ""
}

func (nd *node) exec(p *api.Pod, container string, cmd ...string) (string, int) {
	nd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out strings.Builder
	code, err := nd.mgr.Exec(ctx, string(p.UID), container, cmd, false, nil, &out, &out, nil)
	if err != nil {
		nd.t.Fatalf("exec %v in %s: %v", cmd, container, err)
	}
	return out.String(), code
}

func sh(script string) []string { return []string{"sh", "-c", script} }
