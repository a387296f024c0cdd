package pods_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/staticpods"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestStaticPodOnContainerd runs a static pod from a manifest directory on
// containerd: its mirror pod is Running with the container's status; a
// restarted kubelet re-adopts its container (no restart); an edited
// manifest replaces the pod; a removed one stops it and deletes the
// mirror pod.
func TestStaticPodOnContainerd(t *testing.T) {
	dir := t.TempDir()
	manifest := func(version string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: static-web}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: ` + testimage.Ref + `
    imagePullPolicy: IfNotPresent
    env: [{name: VERSION, value: "` + version + `"}]
    command: ["sh", "-c", "trap 'exit 0' TERM; echo version $VERSION; while true; do sleep 1; done"]
`
	}
	write := func(content string) {
		tmp := filepath.Join(dir, ".static-web.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "static-web.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	write(manifest("1"))
	var stopSource context.CancelFunc
	nd := newNode(t, func(nd *node) {
		nd.beforeRun = func(mgr *pods.Manager) {
			if stopSource != nil {
				stopSource()
			}
			src := staticpods.New(staticpods.Options{Path: dir, NodeName: nd.name})
			mgr.SetStaticPods(src.List())
			ctx, cancel := context.WithCancel(context.Background())
			stopSource = cancel
			go src.Run(ctx, mgr.SetStaticPods)
		}
	})
	t.Cleanup(func() { stopSource() })
	mirrorName := "static-web-" + nd.name
	running := func(p *api.Pod) bool {
		return p.Status.Phase == api.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	}
	start := time.Now()
	p := nd.waitPod(mirrorName, time.Minute, "mirror pod Running", running)
	t.Logf("mirror pod Running %.1fs after the kubelet started", time.Since(start).Seconds())
	if p.Annotations[staticpods.ConfigMirrorAnnotationKey] == "" || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Node" {
		t.Errorf("mirror pod annotations %v owners %+v", p.Annotations, p.OwnerReferences)
	}
	first := p.Status.ContainerStatuses[0].ContainerID

	// A kubelet restart re-adopts the container.
	nd.kill()
	nd.start()
	time.Sleep(3 * time.Second)
	p = nd.waitPod(mirrorName, time.Minute, "mirror pod Running after a kubelet restart", running)
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != first || cs.RestartCount != 0 {
		t.Errorf("after a kubelet restart: container %s restarts %d, want %s and 0", cs.ContainerID, cs.RestartCount, first)
	}

	// Edited: a new pod (new hash) with the new spec.
	hash := p.Annotations[staticpods.ConfigMirrorAnnotationKey]
	write(manifest("2"))
	start = time.Now()
	p = nd.waitPod(mirrorName, time.Minute, "edited pod Running", func(p *api.Pod) bool {
		return p.Annotations[staticpods.ConfigMirrorAnnotationKey] != hash && running(p)
	})
	t.Logf("edited static pod Running %.1fs after the write", time.Since(start).Seconds())
	if p.Status.ContainerStatuses[0].ContainerID == first {
		t.Error("the edited pod kept its container")
	}
	logs, _ := os.ReadFile(filepath.Join(nd.logsDir, "default_"+mirrorName+"_"+p.Annotations[staticpods.ConfigMirrorAnnotationKey], "web", "0.log"))
	if !strings.Contains(string(logs), "version 2") {
		t.Errorf("log of the edited pod: %q", logs)
	}

	// Removed: stopped, the mirror pod deleted.
	if err := os.Remove(filepath.Join(dir, "static-web.yaml")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := nd.pods().Get(ctx, mirrorName)
		cancel()
		if err != nil && strings.Contains(err.Error(), "not found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mirror pod still there a minute after the manifest went: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		cs, err := nd.rt.ListPodContainers(ctx, p.Annotations[staticpods.ConfigMirrorAnnotationKey])
		if err == nil && len(cs) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("containers of the removed static pod left: %d (%v)", len(cs), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
