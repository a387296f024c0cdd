package containerd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
	"github.com/vishvananda/netlink"
)

func TestSandboxContainerLogsAndExec(t *testing.T) {
	if _, err := os.Stat("/run/containerd/containerd.sock"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and containerd at /run/containerd/containerd.sock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	ns := fmt.Sprintf("minik8s-rt-%d", time.Now().UnixNano())
	rt, err := containerd.New(ctx, containerd.Config{Namespace: ns, SandboxImage: testimage.Ref, StateDir: dir, CgroupParent: "/" + ns})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	defer func() {
		cs, _ := rt.ListPodContainers(context.Background(), "")
		for _, c := range cs {
			_ = rt.RemoveContainer(context.Background(), c.ID)
		}
		_ = testimage.DeleteNamespace(context.Background(), rt.Client(), ns)
		rt.RemovePodCgroups("u1")
		testimage.RemoveCgroupTree("/" + ns)
		if l, err := netlink.LinkByName("mk8srt0"); err == nil {
			_ = netlink.LinkDel(l)
		}
	}()
	if err := testimage.Import(namespaces.WithNamespace(ctx, ns), rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}
	sb, err := rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: "u1", PodNamespace: "default", PodName: "p1", Hostname: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	nm, err := network.New(network.Config{ConfDir: filepath.Join(dir, "net.d"), StateDir: filepath.Join(dir, "cni"), NetworkName: "mk8s-rt", BridgeName: "mk8srt0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.Configure("10.244.250.0/24"); err != nil {
		t.Fatal(err)
	}
	pod := network.Pod{Namespace: "default", Name: "p1", UID: "u1", SandboxID: sb.ID, NetNS: runtime.NetNSPath(sb.PID)}
	ip, err := nm.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	defer nm.TearDown(context.Background(), pod)
	t.Logf("pod ip %s", ip)
	logPath := filepath.Join(dir, "logs", "0.log")
	id, err := rt.CreateContainer(ctx, runtime.ContainerConfig{PodUID: "u1", PodNamespace: "default", PodName: "p1", Name: "c",
		Image: testimage.Ref, ImageRef: testimage.Ref, Command: []string{"sh", "-c", "echo hello; hostname; echo err >&2; sleep 30"},
		SandboxPID: sb.PID, LogPath: logPath, Resources: runtime.Resources{MemoryLimit: 64 << 20, CPUQuota: 50000, CPUPeriod: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	code, err := rt.Exec(ctx, id, []string{"sh", "-c", "ip addr show eth0; echo x; exit 3"}, false, nil, &out, &out, nil)
	if err != nil || code != 3 || !strings.Contains(out.String(), ip) {
		t.Fatalf("exec: code %d err %v out %q", code, err, out.String())
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), "stdout F hello\n") && strings.Contains(string(b), "stderr F err\n") && strings.Contains(string(b), "stdout F p1\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log file: %q", b)
		}
	}
	if err := rt.StopContainer(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		cs, err := rt.ListPodContainers(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		var st runtime.Container
		for _, c := range cs {
			if c.ID == id {
				st = c
			}
		}
		if st.State == runtime.StateExited {
			t.Logf("exit %d reason %s", st.ExitCode, st.Reason)
			if st.ExitCode != 137 {
				t.Fatalf("exit code %d, want 137", st.ExitCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %+v", st)
		}
	}
}
