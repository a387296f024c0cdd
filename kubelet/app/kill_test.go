package app_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/kubelet/app"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// childEnv makes the test binary run as the kubelet (what kubelet/main.go
// does) so a test can SIGKILL a real kubelet process.
const childEnv = "MINIK8S_KUBELET_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(app.NewCommand().Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestKubeletKill9Restart SIGKILLs a kubelet process and starts a new one
// with the same flags: the running containers are re-adopted (same IDs,
// same restart counts, same processes, output still logged) and the
// containers of a pod deleted meanwhile are removed.
func TestKubeletKill9Restart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/run/containerd/containerd.sock"); err != nil {
		t.Skip("needs containerd at /run/containerd/containerd.sock")
	}
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)
	n := 150 + os.Getpid()%50
	dir := t.TempDir()
	o := app.DefaultOptions()
	o.Node.HostnameOverride = fmt.Sprintf("killnode-%d", n)
	o.ContainerdNamespace = fmt.Sprintf("minik8s-killtest-%d", os.Getpid())
	o.RootDir, o.PodLogsDir = filepath.Join(dir, "root"), filepath.Join(dir, "logs")
	o.CgroupRoot = "/" + o.ContainerdNamespace
	o.CNIConfDir, o.CNIBridge = filepath.Join(dir, "net.d"), fmt.Sprintf("mk8skill%d", n)
	// The test holds both ports: each kubelet process serves the same
	// sockets, and no other process can take them between a SIGKILL and
	// the restart.
	serverLn, healthzLn := daemontest.Listen(t), daemontest.Listen(t)
	o.Server.Port, o.HealthzPort = serverLn.Addr().(*net.TCPAddr).Port, healthzLn.Addr().(*net.TCPAddr).Port
	cidr := fmt.Sprintf("10.244.%d.0/24", n)
	args := []string{
		"--kubeconfig", s.Options.WriteKubeconfig,
		"--hostname-override", o.Node.HostnameOverride, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(o.Server.Port), "--healthz-port", strconv.Itoa(o.HealthzPort),
		"--containerd-address", "/run/containerd/containerd.sock", "--containerd-namespace", o.ContainerdNamespace,
		"--root-dir", o.RootDir, "--pod-logs-dir", o.PodLogsDir, "--cgroup-root", o.CgroupRoot,
		"--cni-conf-dir", o.CNIConfDir, "--cni-bridge", o.CNIBridge, "--cluster-dns", "10.96.0.10",
		"--restart-backoff-initial", "1s", "--restart-backoff-max", "4s", "--sync-frequency", "2s",
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rt, err := containerd.New(ctx, containerd.Config{Namespace: o.ContainerdNamespace, StateDir: filepath.Join(dir, "import"), CgroupParent: o.CgroupRoot})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := testimage.Import(namespaces.WithNamespace(ctx, o.ContainerdNamespace), rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}

	var kubelet *exec.Cmd
	logf, err := os.Create(filepath.Join(dir, "kubelet.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	start := func() {
		t.Helper()
		kubelet = exec.Command(os.Args[0], args...)
		kubelet.Env = append(os.Environ(), childEnv+"=1")
		daemontest.Inherit(t, kubelet, serverLn, healthzLn)
		kubelet.Stdout, kubelet.Stderr = logf, logf
		if err := kubelet.Start(); err != nil {
			t.Fatal(err)
		}
	}
	kill9 := func() {
		t.Helper()
		if kubelet == nil {
			return
		}
		if err := kubelet.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := kubelet.Wait()
		kubelet = nil
		if ws, ok := err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kubelet did not die of SIGKILL: %v", err)
		}
	}
	t.Cleanup(func() {
		if kubelet != nil {
			_ = kubelet.Process.Signal(syscall.SIGTERM)
			_ = kubelet.Wait()
		}
		cleanup(t, o, cidr)
		testimage.RemoveCgroupTree(o.ContainerdNamespace)
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("kubelet log:\n%s", lastLines(string(b), 60))
		}
	})
	start()

	nodes := client.Resource[api.Node](c)
	for {
		nd, err := nodes.Get(ctx, o.Node.HostnameOverride)
		if err == nil {
			nd.Spec.PodCIDR, nd.Spec.PodCIDRs = cidr, []string{cidr}
			if _, err = nodes.Update(ctx, nd); err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("node: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	podsc := client.Resource[api.Pod](c).Namespace("default")
	one := int64(1)
	pod := func(name string, vols []api.Volume, cs ...api.Container) *api.Pod {
		for i := range cs {
			cs[i].Image, cs[i].ImagePullPolicy = testimage.Ref, api.PullIfNotPresent
		}
		p, err := podsc.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.PodSpec{NodeName: o.Node.HostnameOverride, TerminationGracePeriodSeconds: &one, Containers: cs, Volumes: vols}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// "main" fails once (restartCount 1), then runs; "side" logs every second.
	keep := pod("keep", []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}},
		api.Container{Name: "main", Command: []string{"sh", "-c", "if [ -f /data/once ]; then sleep 600; else touch /data/once; exit 1; fi"},
			VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: "/data"}}},
		api.Container{Name: "side", Command: []string{"sh", "-c", "while true; do echo tick; sleep 1; done"}})
	gone := pod("gone", nil, api.Container{Name: "main", Command: []string{"sleep", "600"}})
	waitPod := func(name, what string, cond func(*api.Pod) bool) *api.Pod {
		t.Helper()
		var last *api.Pod
		for {
			p, err := podsc.Get(ctx, name)
			if err == nil {
				last = p
				if cond(p) {
					return p
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("pod %s: no %s; last: %+v", name, what, last)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	running := func(p *api.Pod) bool {
		if p.Status.Phase != api.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running == nil {
				return false
			}
		}
		return true
	}
	counts := func(p *api.Pod) map[string]string {
		out := map[string]string{}
		for _, cs := range p.Status.ContainerStatuses {
			out[cs.Name] = fmt.Sprintf("%s restarts=%d", cs.ContainerID, cs.RestartCount)
		}
		return out
	}
	before := waitPod("keep", "Running after one restart", func(p *api.Pod) bool {
		return running(p) && counts(p)["main"] != "" && strings.HasSuffix(counts(p)["main"], "restarts=1")
	})
	waitPod("gone", "Running", running)
	// The tasks' processes, to show none was restarted behind the status.
	tasks := func(uid string) map[string]uint32 {
		cs, err := rt.ListPodContainers(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint32{}
		nctx := namespaces.WithNamespace(ctx, o.ContainerdNamespace)
		for _, c := range cs {
			if c.State != runtime.StateRunning || c.Kind == runtime.KindSandbox {
				continue
			}
			ct, err := rt.Client().LoadContainer(nctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			task, err := ct.Task(nctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[c.ID] = task.Pid()
		}
		return out
	}
	tasksBefore := tasks(string(keep.UID))
	if len(tasksBefore) != 2 {
		t.Fatalf("running containers of keep: %v", tasksBefore)
	}

	kill9()
	zero := int64(0)
	if err := podsc.Delete(ctx, "gone", &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// Containers keep running with no kubelet.
	time.Sleep(2 * time.Second)
	if got := tasks(string(keep.UID)); !mapsEqual(got, tasksBefore) {
		t.Fatalf("containers changed while the kubelet was down: %v -> %v", tasksBefore, got)
	}
	logPath := pods.LogPath(o.PodLogsDir, keep, "side", 0)
	ticks := func() int { b, _ := os.ReadFile(logPath); return strings.Count(string(b), "stdout F tick\n") }
	n0 := ticks()
	start()

	// The new kubelet is up and removes the deleted pod's containers.
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", o.HealthzPort))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), "ok") {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("restarted kubelet not healthy: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		cs, err := rt.ListPodContainers(ctx, string(gone.UID))
		if err == nil && len(cs) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("containers of the deleted pod left: %v %v", cs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Several resyncs of the new kubelet (--sync-frequency 2s).
	time.Sleep(5 * time.Second)
	after := waitPod("keep", "Running", running)
	if !mapsEqual(counts(before), counts(after)) {
		t.Fatalf("container IDs / restart counts changed: %v -> %v", counts(before), counts(after))
	}
	if got := tasks(string(keep.UID)); !mapsEqual(got, tasksBefore) {
		t.Fatalf("containers changed after the kubelet restart: %v -> %v", tasksBefore, got)
	}
	// Output still reaches the log file through the re-attached streams.
	for ticks() < n0+3 {
		if ctx.Err() != nil {
			t.Fatalf("log not growing after the restart: %d ticks, was %d", ticks(), n0)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
