package pods_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/runtime"
	rtcontainerd "github.com/minik8s/minik8s/kubelet/runtime/containerd"
)

// TestNodeRebootRestartsPods: a node reboot (a compose node recreated, a
// VM restarted) loses every containerd task, the pods' network namespaces
// and everything on tmpfs, with no exit recorded. The kubelet that comes
// back restarts every pod in a new sandbox, the containers with
// restartCount + 1 and lastState Terminated/Unknown/255, host-network pods
// included, and leaves no sandbox of the old boot behind.
func TestNodeRebootRestartsPods(t *testing.T) {
	nd := newNode(t)
	nd.create(nd.pod("net", api.Container{Name: "main", Command: sh("sleep 600")}))
	host := nd.pod("host", api.Container{Name: "main", Command: sh("sleep 600")})
	host.Spec.HostNetwork = true
	nd.create(host)
	for _, name := range []string{"net", "host"} {
		nd.waitPod(name, 60*time.Second, "Running", running)
	}

	nd.kill()
	nd.reboot()
	nd.start()

	for _, name := range []string{"net", "host"} {
		p := nd.waitPod(name, 60*time.Second, "Running again with restartCount 1", func(p *api.Pod) bool {
			return running(p) && status(p, "main").RestartCount == 1
		})
		last := status(p, "main").LastTerminationState.Terminated
		if last == nil || last.Reason != "Unknown" || last.ExitCode != 255 {
			t.Errorf("%s: lastState %+v, want terminated Unknown 255", name, status(p, "main").LastTerminationState)
		}
		if name == "net" && p.Status.PodIP == "" {
			t.Errorf("net: no pod IP after the reboot")
		}
		waitOneLiveSandbox(t, nd.runtime(), name, p.UID)
	}
}

// reboot does to the node's containerd namespace what a machine restart
// does: every task gone without an exit recorded, the pods' network
// namespaces gone, tmpfs state (the runtime's state directory) and the
// per-pod files gone.
func (nd *node) reboot() {
	nd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = namespaces.WithNamespace(ctx, nd.ns)
	addr := nd.address
	if addr == "" {
		addr = socket
	}
	cli, err := containerd.New(addr)
	if err != nil {
		nd.t.Fatal(err)
	}
	defer cli.Close()
	cs, err := cli.Containers(ctx)
	if err != nil {
		nd.t.Fatal(err)
	}
	for _, c := range cs {
		if l, err := c.Labels(ctx); err == nil && l[rtcontainerd.LabelNetNS] != "" {
			name := filepath.Base(l[rtcontainerd.LabelNetNS])
			if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
				nd.t.Fatalf("ip netns del %s: %v: %s", name, err, out)
			}
		}
		task, err := c.Task(ctx, nil)
		if err != nil {
			continue
		}
		if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil && !strings.Contains(err.Error(), "not found") {
			nd.t.Fatalf("delete task of %s: %v", c.ID(), err)
		}
	}
	for _, dir := range []string{filepath.Join(nd.dir, "state"), filepath.Join(nd.opts.RootDir, "pods")} {
		if err := os.RemoveAll(dir); err != nil {
			nd.t.Fatal(err)
		}
	}
}

// TestStuckPodSaysWhy: a pod that cannot progress has an event saying why
// — FailedMount for a volume whose ConfigMap is missing (the pod stays
// ContainerCreating, then runs once the ConfigMap exists), NetworkNotReady
// on a node without a podCIDR.
func TestStuckPodSaysWhy(t *testing.T) {
	t.Run("FailedMount", func(t *testing.T) {
		nd := newNode(t)
		p := nd.pod("mount", api.Container{Name: "main", Command: sh("cat /config/k; sleep 600"),
			VolumeMounts: []api.VolumeMount{{Name: "config", MountPath: "/config"}}})
		p.Spec.Volumes = []api.Volume{{Name: "config", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{
			LocalObjectReference: api.LocalObjectReference{Name: "settings"}}}}}
		nd.create(p)
		nd.waitEvent("mount", `FailedMount: MountVolume.SetUp failed for volume "config" : configmap "settings" not found`, 30*time.Second)
		// The event comes first, the status write after it.
		nd.waitPod("mount", 10*time.Second, "Pending, its container ContainerCreating", func(p *api.Pod) bool {
			w := status(p, "main").State.Waiting
			return p.Status.Phase == api.PodPending && w != nil && w.Reason == "ContainerCreating"
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "settings", Namespace: "default"}, Data: map[string]string{"k": "v"}}
		if _, err := client.Resource[api.ConfigMap](nd.c).Namespace("default").Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		nd.waitPod("mount", 30*time.Second, "Running once the ConfigMap exists", running)
	})
	t.Run("NetworkNotReady", func(t *testing.T) {
		nd := newNode(t, func(nd *node) { nd.cidr = "" })
		nd.create(nd.pod("nonet", api.Container{Name: "main", Command: sh("sleep 600")}))
		nd.waitEvent("nonet", "NetworkNotReady: network is not ready: ", 30*time.Second)
		// The event comes first, the status write after it.
		nd.waitPod("nonet", 10*time.Second, "Pending with the network's reason as its message", func(p *api.Pod) bool {
			return p.Status.Phase == api.PodPending && strings.Contains(p.Status.Message, "network is not ready: ")
		})
	})
}

// waitOneLiveSandbox waits (30 s) until the pod has one sandbox, running:
// the new one, the dead one of before the reboot removed.
func waitOneLiveSandbox(t *testing.T, rt runtime.Runtime, name string, uid api.UID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		cs, err := rt.ListPodContainers(ctx, string(uid))
		if err != nil {
			t.Fatal(err)
		}
		sandboxes, dead := 0, 0
		for _, c := range cs {
			if c.Kind == runtime.KindSandbox {
				sandboxes++
				if c.State != runtime.StateRunning {
					dead++
				}
			}
		}
		if sandboxes == 1 && dead == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: %d sandboxes (%d not running) after the reboot, want the new one only", name, sandboxes, dead)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
