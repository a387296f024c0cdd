package pods

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/kubelet/eviction"
)

// A pod whose emptyDir outgrows its sizeLimit is evicted as kube's
// eviction manager does: a Warning Evicted event, its containers killed,
// the pod Failed with reason Evicted and kube's message (and no
// DisruptionTarget condition, which kube sets only for node-pressure
// evictions), never started again. A pod under its limit keeps running.
func TestFakeEmptyDirSizeLimitEviction(t *testing.T) {
	n := newFakeNode(t, nil)
	limit := resource.MustParse("1Mi")
	for _, name := range []string{"hog", "tidy"} {
		p := fakePod(name, api.Container{Name: "main", VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}})
		p.Spec.Volumes = []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{SizeLimit: &limit}}}}
		if err := n.api.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	hog := n.waitPod("hog", "Running", isRunning)
	tidy := n.waitPod("tidy", "Running", isRunning)
	if err := os.WriteFile(filepath.Join(n.mgr.EmptyDirPath(hog, "scratch"), "big"), make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(n.mgr.EmptyDirPath(tidy, "scratch"), "small"), make([]byte, 100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := eviction.New(n.mgr, n.rec, eviction.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evicted := ev.Synchronize(ctx)
	if len(evicted) != 1 || evicted[0].Name != "hog" {
		t.Fatalf("evicted %v, want hog", evicted)
	}
	msg := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	if !n.hasEvent("Warning Evicted " + msg) {
		t.Errorf("events %q: no Evicted event", n.rec.Events())
	}
	p := n.waitPod("hog", "Failed, Evicted", func(p *api.Pod) bool {
		return p.Status.Phase == api.PodFailed && p.Status.Reason == "Evicted"
	})
	if p.Status.Message != msg {
		t.Errorf("message %q, want %q", p.Status.Message, msg)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == api.DisruptionTarget {
			t.Errorf("condition %+v: kube sets no DisruptionTarget for a local storage eviction", c)
		}
	}
	n.wait("hog's container stopped", func() bool { return n.rt.Running("hog", "main") == nil })
	// Never again: not restarted, not measured again.
	time.Sleep(500 * time.Millisecond)
	if n.rt.Running("hog", "main") != nil {
		t.Fatal("the evicted pod's container runs again")
	}
	if again := ev.Synchronize(ctx); len(again) != 0 {
		t.Errorf("evicted again: %v", again)
	}
	if p := n.pod("tidy"); !isRunning(p) {
		t.Errorf("tidy: %s", p.Status.Phase)
	}
}
