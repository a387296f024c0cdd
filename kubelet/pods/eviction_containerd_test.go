package pods_test

import (
	"context"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/kubelet/eviction"
)

// A real container filling its emptyDir past the volume's sizeLimit is
// evicted by the eviction manager: kube's Evicted event, the pod Failed
// with reason Evicted and kube's message, its container killed.
func TestEmptyDirSizeLimitEviction(t *testing.T) {
	nd := newNode(t)
	limit := resource.MustParse("1Mi")
	p := nd.pod("hog", api.Container{Name: "main", Command: sh("dd if=/dev/zero of=/scratch/big bs=1M count=3 && sleep 3600"),
		VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}})
	p.Spec.Volumes = []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{SizeLimit: &limit}}}}
	nd.create(p)
	nd.waitPod("hog", 60*time.Second, "Running", running)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := eviction.New(nd.mgr, nd.bc.Recorder(), eviction.Options{Period: 200 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- ev.Run(ctx) }()
	defer func() { cancel(); <-done }()

	msg := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	got := nd.waitPod("hog", 60*time.Second, "Failed, Evicted", func(p *api.Pod) bool {
		return p.Status.Phase == api.PodFailed && p.Status.Reason == "Evicted"
	})
	if got.Status.Message != msg {
		t.Errorf("message %q, want %q", got.Status.Message, msg)
	}
	nd.waitEvent("hog", "Evicted: "+msg, 10*time.Second)
	nd.waitPod("hog", 30*time.Second, "container terminated", func(p *api.Pod) bool {
		return status(p, "main").State.Terminated != nil
	})
}
