package pods_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/cri"
	"github.com/minik8s/minik8s/kubelet/runtime/cri/critest"
)

// TestNodeRebootRestartsPodsCRI is TestNodeRebootRestartsPods on the CRI
// driver: the kubelet is stopped, every task of the node's pods dies as in
// a machine restart (the runtime keeps its metadata: the containers stay,
// exited, and the sandboxes NotReady), and the kubelet comes back. Each
// pod runs again in a new sandbox with restartCount + 1 and the lost
// container as its lastState, as kube's kubelet reports it from the
// runtime's previous container; the old sandbox goes once that status is
// written, the lastState staying.
func TestNodeRebootRestartsPodsCRI(t *testing.T) {
	nd := newNode(t, withCRI)
	nd.create(nd.pod("net", api.Container{Name: "main", Command: sh("sleep 600")}))
	host := nd.pod("host", api.Container{Name: "main", Command: sh("sleep 600")})
	host.Spec.HostNetwork = true
	nd.create(host)
	for _, name := range []string{"net", "host"} {
		nd.waitPod(name, 60*time.Second, "Running", running)
	}

	nd.kill()
	nd.rebootCRI()
	nd.start()

	for _, name := range []string{"net", "host"} {
		p := nd.waitPod(name, 60*time.Second, "Running again with restartCount 1 and a lastState", func(p *api.Pod) bool {
			return running(p) && status(p, "main").RestartCount == 1 && status(p, "main").LastTerminationState.Terminated != nil
		})
		if name == "net" && p.Status.PodIP == "" {
			t.Errorf("net: no pod IP after the reboot")
		}
		waitOneLiveSandbox(t, nd.runtime(), name, p.UID)
		// The old sandbox gone, the status still has the lost container
		// as the last state and the count.
		time.Sleep(2 * time.Second)
		p = nd.waitPod(name, 10*time.Second, "still restartCount 1 with a lastState", func(p *api.Pod) bool {
			return running(p) && status(p, "main").RestartCount == 1 && status(p, "main").LastTerminationState.Terminated != nil
		})
		if last := status(p, "main").LastTerminationState.Terminated; last.ExitCode == 0 {
			t.Errorf("%s: lastState %+v, want a lost container's non-zero exit", name, last)
		}
	}
}

// rebootCRI does to the node's CRI pods what a machine restart does while
// the runtime keeps its metadata: every task of the node's sandboxes and
// containers killed with the kubelet away, and the kubelet's per-pod
// files (tmpfs on a node) gone.
func (nd *node) rebootCRI() {
	nd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt, err := cri.New(ctx, cri.Config{Endpoint: nd.criEndpoint, Owner: nd.ns})
	if err != nil {
		nd.t.Fatal(err)
	}
	defer rt.Close()
	cs, err := rt.ListPodContainers(ctx, "")
	if err != nil {
		nd.t.Fatal(err)
	}
	cli, err := containerd.New(critest.Socket)
	if err != nil {
		nd.t.Fatal(err)
	}
	defer cli.Close()
	kctx := namespaces.WithNamespace(ctx, critest.Namespace)
	for _, c := range cs {
		ct, err := cli.LoadContainer(kctx, c.ID)
		if err != nil {
			continue
		}
		task, err := ct.Task(kctx, nil)
		if err != nil {
			continue
		}
		if err := task.Kill(kctx, syscall.SIGKILL, containerd.WithKillAll); err != nil && !strings.Contains(err.Error(), "not found") {
			nd.t.Fatalf("kill task of %s: %v", c.ID, err)
		}
	}
	// Wait for the runtime to see every exit.
	for {
		cs, err := rt.ListPodContainers(ctx, "")
		if err != nil {
			nd.t.Fatal(err)
		}
		alive := 0
		for _, c := range cs {
			if c.State == runtime.StateRunning {
				alive++
			}
		}
		if alive == 0 {
			break
		}
		if ctx.Err() != nil {
			nd.t.Fatalf("%d sandboxes or containers still running after the kill", alive)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := os.RemoveAll(filepath.Join(nd.opts.RootDir, "pods")); err != nil {
		nd.t.Fatal(err)
	}
}
