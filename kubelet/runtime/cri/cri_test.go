package cri_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/cri"
	"github.com/minik8s/minik8s/kubelet/runtime/cri/critest"
	"github.com/minik8s/minik8s/kubelet/testimage"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criClient is a CRI client of the test's containerd, to see what the
// driver handed it.
func criClient(t *testing.T) criapi.RuntimeServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(critest.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return criapi.NewRuntimeServiceClient(conn)
}

// newRuntime connects to the host containerd's CRI plugin with its
// sandbox and test images present; the test's sandboxes carry an owner
// label of their own and are removed at the end.
func newRuntime(t *testing.T) (*cri.Runtime, string, critest.PluginConfig) {
	t.Helper()
	if !critest.Available() {
		t.Skip("needs root and containerd at " + critest.Socket)
	}
	critest.Lock(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc, err := critest.Prepare(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	owner := fmt.Sprintf("critest-%d", time.Now().UnixNano())
	logs := t.TempDir()
	rt, err := cri.New(ctx, cri.Config{Endpoint: critest.Endpoint, PodLogsDir: logs, CgroupParent: "/" + owner, Owner: owner, RelistPeriod: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs, _ := rt.ListPodContainers(context.Background(), "")
		uids := map[string]bool{}
		for _, c := range cs {
			uids[c.PodUID] = true
			if c.Kind == runtime.KindSandbox {
				_ = rt.RemoveContainer(context.Background(), c.ID)
			}
		}
		for uid := range uids {
			rt.RemovePodCgroups(uid)
		}
		testimage.RemoveCgroupTree("/" + owner)
		_ = rt.Close()
	})
	return rt, logs, pc
}

func waitFor(t *testing.T, what string, d time.Duration, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func find(cs []runtime.Container, id string) *runtime.Container {
	for i := range cs {
		if cs[i].ID == id {
			return &cs[i]
		}
	}
	return nil
}

// TestCRIContainerLifecycle runs a host-network sandbox and containers in
// the host containerd's CRI plugin: version, labels and annotations read
// back by ListPodContainers, CRI-format logs at kube's path, ExecSync,
// streaming exec (stdin, exit code, a terminal and its size), attach,
// a resource update seen in the cgroup, stop with exit code and OnExit,
// remove.
func TestCRIContainerLifecycle(t *testing.T) {
	rt, logs, _ := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var exitMu sync.Mutex
	exited := map[string]string{}
	rt.SetOnExit(func(uid, id string) { exitMu.Lock(); exited[id] = uid; exitMu.Unlock() })

	name, version, err := rt.Version(ctx)
	if err != nil || name != "containerd" || version == "" {
		t.Fatalf("Version = %q %q %v, want containerd and a version", name, version, err)
	}
	if rt.Type() != "containerd" {
		t.Fatalf("Type = %q", rt.Type())
	}
	if err := rt.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if id, ok, err := rt.ImagePresent(ctx, testimage.Ref); err != nil || !ok || !strings.Contains(id, "sha256:") {
		t.Fatalf("ImagePresent(%s) = %q %v %v", testimage.Ref, id, ok, err)
	}
	if _, ok, err := rt.ImagePresent(ctx, "minik8s.local/absent:1"); err != nil || ok {
		t.Fatalf("ImagePresent(absent) = %v %v", ok, err)
	}
	if u, err := rt.ImageUser(ctx, testimage.Ref); err != nil || u != "" {
		t.Fatalf("ImageUser = %q %v, want none", u, err)
	}

	uid := fmt.Sprintf("uid-%d", time.Now().UnixNano())
	sb, err := rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: uid, PodNamespace: "default", PodName: "p1", Hostname: "p1", HostNetwork: true,
		Labels: map[string]string{"app": "p1"}, Annotations: map[string]string{"team": "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	// The pod's labels and annotations are the sandbox's, as kube's.
	if st, err := criClient(t).PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: sb.ID}); err != nil ||
		st.Status.Labels["app"] != "p1" || st.Status.Labels[cri.LabelPodUID] != uid || st.Status.Annotations["team"] != "blue" {
		t.Fatalf("sandbox labels %v annotations %v (%v), want the pod's with kube's", st.GetStatus().GetLabels(), st.GetStatus().GetAnnotations(), err)
	}
	if sb.State != runtime.StateRunning || !sb.HostNetwork || sb.PID == 0 || sb.PodUID != uid || sb.Kind != runtime.KindSandbox {
		t.Fatalf("sandbox = %+v", sb)
	}
	logPath := filepath.Join(logs, "default_p1_"+uid, "c1", "2.log")
	base := runtime.ContainerConfig{PodUID: uid, PodNamespace: "default", PodName: "p1", Image: "minik8s.local/busybox", ImageRef: testimage.Ref,
		SandboxID: sb.ID, HostNetwork: true, Security: runtime.Security{MaskedPaths: runtime.DefaultMaskedPaths(), ReadonlyPaths: runtime.DefaultReadonlyPaths()}}
	c1cfg := base
	c1cfg.Name, c1cfg.RestartCount, c1cfg.Hash, c1cfg.LogPath = "c1", 2, "5f3a", logPath
	c1cfg.Command = []string{"sh", "-c", "echo hello; echo oops >&2; sleep 1000"}
	c1cfg.Env = []string{"GREETING=hi=there"}
	c1cfg.Annotations = map[string]string{"io.kubernetes.container.terminationMessagePath": "/dev/termination-log", cri.AnnotationHash: "forged"}
	c1, err := rt.CreateContainer(ctx, c1cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, c1); err != nil {
		t.Fatal(err)
	}
	// kube's container annotations, the driver's own winning.
	if st, err := criClient(t).ContainerStatus(ctx, &criapi.ContainerStatusRequest{ContainerId: c1}); err != nil ||
		st.Status.Annotations["io.kubernetes.container.terminationMessagePath"] != "/dev/termination-log" || st.Status.Annotations[cri.AnnotationHash] != "5f3a" {
		t.Fatalf("container annotations %v (%v)", st.GetStatus().GetAnnotations(), err)
	}
	var logText string
	waitFor(t, "the container's log", 10*time.Second, func() bool {
		b, _ := os.ReadFile(logPath)
		logText = string(b)
		return strings.Contains(logText, "oops")
	})
	// CRI format: RFC3339Nano time, stream, P/F tag, the line.
	for _, want := range []string{" stdout F hello\n", " stderr F oops\n"} {
		if !strings.Contains(logText, want) {
			t.Fatalf("log %s = %q, want a line ending %q", logPath, logText, want)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, strings.Fields(logText)[0]); err != nil {
		t.Fatalf("log line does not start with a timestamp: %q", logText)
	}

	cs, err := rt.ListPodContainers(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	got := find(cs, c1)
	if len(cs) != 2 || got == nil || find(cs, sb.ID) == nil {
		t.Fatalf("ListPodContainers = %+v", cs)
	}
	if got.Name != "c1" || got.Kind != runtime.KindContainer || got.RestartCount != 2 || got.Hash != "5f3a" || got.PodName != "p1" ||
		got.PodNamespace != "default" || got.State != runtime.StateRunning || got.PID == 0 || got.LogPath != logPath ||
		got.Image != "minik8s.local/busybox" || !strings.Contains(got.ImageID, "sha256:") || got.StartedAt.IsZero() {
		t.Fatalf("container = %+v", *got)
	}
	if all, err := rt.ListPodContainers(ctx, ""); err != nil || len(all) != 2 {
		t.Fatalf("ListPodContainers(all) = %d %v, want this test's 2", len(all), err)
	}

	// ExecSync: no stdin, no terminal.
	var out, errOut bytes.Buffer
	code, err := rt.Exec(ctx, c1, []string{"sh", "-c", "echo $GREETING; echo e >&2; exit 3"}, false, nil, &out, &errOut, nil)
	if err != nil || code != 3 || out.String() != "hi=there\n" || errOut.String() != "e\n" {
		t.Fatalf("ExecSync = %d %v %q %q", code, err, out.String(), errOut.String())
	}
	// Streaming exec with stdin.
	out.Reset()
	code, err = rt.Exec(ctx, c1, []string{"sh", "-c", "read x; echo got $x; exit 5"}, false, strings.NewReader("abc\n"), &out, &errOut, nil)
	if err != nil || code != 5 || out.String() != "got abc\n" {
		t.Fatalf("streaming exec = %d %v %q", code, err, out.String())
	}
	// A terminal, resized.
	out.Reset()
	resize := make(chan runtime.TerminalSize, 1)
	resize <- runtime.TerminalSize{Width: 100, Height: 40}
	pr, pw := ioPipe()
	defer pw.Close()
	code, err = rt.Exec(ctx, c1, []string{"sh", "-c", "sleep 1; test -t 0 && echo tty; busybox stty size"}, true, pr, &out, nil, resize)
	if err != nil || code != 0 || !strings.Contains(out.String(), "tty") || !strings.Contains(out.String(), "40 100") {
		t.Fatalf("tty exec = %d %v %q, want tty and size 40 100", code, err, out.String())
	}

	// Attach to a container waiting on its stdin.
	c2cfg := base
	c2cfg.Name, c2cfg.Stdin, c2cfg.StdinOnce = "c2", true, true
	c2cfg.Command = []string{"sh", "-c", "read x; echo attached $x; sleep 1000"}
	c2, err := rt.CreateContainer(ctx, c2cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, c2); err != nil {
		t.Fatal(err)
	}
	var aout syncBuffer
	actx, acancel := context.WithCancel(ctx)
	aerr := make(chan error, 1)
	go func() { aerr <- rt.Attach(actx, c2, false, strings.NewReader("there\n"), &aout, &aout, nil) }()
	waitFor(t, "attached output", 10*time.Second, func() bool { return strings.Contains(aout.String(), "attached there") })
	acancel()
	<-aerr

	// Resources: the update reaches the container's cgroup under
	// PARENT/pod<UID>/<ID>.
	if err := rt.UpdateContainerResources(ctx, c1, runtime.Resources{MemoryLimit: 64 << 20, CPUShares: 512}); err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join("/sys/fs/cgroup/memory", rt.PodCgroup(uid), c1, "memory.limit_in_bytes")
	if b, err := os.ReadFile(cg); err == nil {
		if strings.TrimSpace(string(b)) != "67108864" {
			t.Fatalf("%s = %s, want 67108864", cg, b)
		}
	} else if _, err2 := os.Stat("/sys/fs/cgroup/memory"); err2 == nil {
		t.Fatalf("container cgroup: %v", err)
	}
	cs, _ = rt.ListPodContainers(ctx, uid)
	if got := find(cs, c1); got == nil || got.Resources == nil || got.Resources.MemoryLimit != 64<<20 {
		t.Fatalf("resources after update = %+v", got)
	}

	// Stop: sh as PID 1 ignores SIGTERM, so the grace period ends in
	// SIGKILL (137).
	if err := rt.StopContainer(ctx, c1, time.Second); err != nil {
		t.Fatal(err)
	}
	cs, _ = rt.ListPodContainers(ctx, uid)
	if got := find(cs, c1); got == nil || got.State != runtime.StateExited || got.ExitCode != 137 || got.Reason != "Error" || got.FinishedAt.IsZero() {
		t.Fatalf("stopped container = %+v", got)
	}
	waitFor(t, "OnExit for the stopped container", 5*time.Second, func() bool {
		exitMu.Lock()
		defer exitMu.Unlock()
		return exited[c1] == uid
	})
	if err := rt.RemoveContainer(ctx, c1); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveContainer(ctx, c1); err != nil {
		t.Fatalf("removing a removed container: %v", err)
	}
	cs, _ = rt.ListPodContainers(ctx, uid)
	if find(cs, c1) != nil || len(cs) != 2 {
		t.Fatalf("after remove: %+v", cs)
	}
	// Removing the sandbox removes what is left of the pod.
	if err := rt.StopContainer(ctx, sb.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveContainer(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if cs, err := rt.ListPodContainers(ctx, uid); err != nil || len(cs) != 0 {
		t.Fatalf("after removing the sandbox: %+v %v", cs, err)
	}
}

// TestCRIPodNetwork writes the node's conflist with kubelet/network where
// containerd's CRI plugin reads it (its conf_dir, /etc/cni/net.d) and runs a sandbox of
// its own network: the runtime attaches it and reports its IP from the
// pod CIDR, and the sandbox's network namespace is reachable by PID.
func TestCRIPodNetwork(t *testing.T) {
	rt, _, pc := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	confDir := pc.CNI.ConfDir
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if others, _ := filepath.Glob(filepath.Join(confDir, "*.conf*")); len(others) > 0 {
		t.Fatalf("%s already holds %v: the CRI plugin loads only the first conflist, this test's must be alone", confDir, others)
	}
	nm, err := network.New(network.Config{ConfDir: confDir, BinDirs: []string{pc.CNI.BinDir}, StateDir: t.TempDir(),
		NetworkName: "mk8s-critest", BridgeName: "mk8scri0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.Configure("10.244.251.0/24"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(confDir, "*mk8s-critest*"))
		for _, f := range files {
			_ = os.Remove(f)
		}
		_ = exec("ip", "link", "del", "mk8scri0")
	})
	waitFor(t, "the runtime's NetworkReady", 15*time.Second, func() bool { return rt.NetworkStatus(ctx) == nil })
	uid := fmt.Sprintf("uid-%d", time.Now().UnixNano())
	hostPort := int32(30000 + time.Now().UnixNano()%2000)
	sb, err := rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: uid, PodNamespace: "default", PodName: "net", Hostname: "net",
		PortMappings: []runtime.PortMapping{{HostPort: hostPort, ContainerPort: 8080, Protocol: "TCP"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sb.PodIP, "10.244.251.") || sb.HostNetwork || sb.NetNSPath() == "" {
		t.Fatalf("sandbox = %+v, want an IP in 10.244.251.0/24 and a namespace", sb)
	}
	if _, err := os.Stat(sb.NetNSPath()); err != nil {
		t.Fatal(err)
	}
	cs, err := rt.ListPodContainers(ctx, uid)
	if err != nil || len(cs) != 1 || cs[0].PodIP != sb.PodIP {
		t.Fatalf("ListPodContainers = %+v %v, want the sandbox with IP %s", cs, err, sb.PodIP)
	}
	// The hostPort: the runtime hands it to the conflist's portmap plugin.
	id, err := rt.CreateContainer(ctx, runtime.ContainerConfig{PodUID: uid, PodNamespace: "default", PodName: "net", Name: "web",
		Hostname: "net", Image: testimage.Ref, ImageRef: testimage.Ref, SandboxID: sb.ID, Command: []string{"sh", "-c", "echo served > /tmp/index.html; httpd -f -p 8080 -h /tmp"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	nodeIP := hostIP(t)
	var body string
	waitFor(t, fmt.Sprintf("the pod's web server on hostPort %s:%d", nodeIP, hostPort), 20*time.Second, func() bool {
		body = httpGet(fmt.Sprintf("http://%s:%d/index.html", nodeIP, hostPort))
		return body == "served\n"
	})
	// The container's HOSTNAME is the pod's, not the node's (the runtime
	// reads it from the sandbox config CreateContainer hands it); the exec
	// streams, having no deadline.
	var out bytes.Buffer
	if code, err := rt.Exec(ctx, id, []string{"sh", "-c", "echo $HOSTNAME"}, false, nil, &out, io.Discard, nil); err != nil || code != 0 {
		t.Fatalf("exec echo $HOSTNAME: %d %v", code, err)
	}
	if got := strings.TrimSpace(out.String()); got != "net" {
		t.Errorf("HOSTNAME in the container = %q, want the pod's hostname net", got)
	}
	// A container that exits between two relists is reported too (kube's
	// PLEG reports ContainerDied for one it never saw running).
	var mu sync.Mutex
	exited := map[string]bool{}
	rt.SetOnExit(func(_, cid string) { mu.Lock(); exited[cid] = true; mu.Unlock() })
	quick, err := rt.CreateContainer(ctx, runtime.ContainerConfig{PodUID: uid, PodNamespace: "default", PodName: "net", Name: "quick",
		Image: testimage.Ref, ImageRef: testimage.Ref, SandboxID: sb.ID, Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, quick); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "OnExit for a container that exited at once", 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return exited[quick]
	})
	if err := rt.RemoveContainer(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
}
