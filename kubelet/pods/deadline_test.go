package pods

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

func TestActiveDeadlineLeft(t *testing.T) {
	now := time.Now()
	start := api.NewTime(now.Add(-10 * time.Second))
	ads := func(s int64) *api.Pod { return &api.Pod{Spec: api.PodSpec{ActiveDeadlineSeconds: &s}} }
	if _, has := activeDeadlineLeft(&api.Pod{}, &start, now); has {
		t.Error("a pod without activeDeadlineSeconds has a deadline")
	}
	if _, has := activeDeadlineLeft(ads(5), nil, now); has {
		t.Error("a pod not started has a deadline")
	}
	if left, _ := activeDeadlineLeft(ads(5), &start, now); left > -4*time.Second {
		t.Errorf("5 s after a start 10 s ago: %v left", left)
	}
	if left, _ := activeDeadlineLeft(ads(60), &start, now); left < 49*time.Second || left > 51*time.Second {
		t.Errorf("60 s after a start 10 s ago: %v left, want about 50 s", left)
	}
}

// TestFakeActiveDeadlineExceeded: a running pod whose
// activeDeadlineSeconds is lowered (the conformance spec "Pods should allow
// activeDeadlineSeconds to be updated") is stopped: its container killed,
// Failed with reason DeadlineExceeded and kube's message, a Normal event.
func TestFakeActiveDeadlineExceeded(t *testing.T) {
	pod := fakePod("deadline", api.Container{Name: "main"})
	long := int64(3600)
	pod.Spec.ActiveDeadlineSeconds = &long
	n := newFakeNode(t, nil, pod)
	n.waitPod("deadline", "Running", isRunning)
	cur := n.pod("deadline")
	short := int64(1)
	cur.Spec.ActiveDeadlineSeconds = &short
	if _, err := client.Resource[api.Pod](n.api.Client()).Namespace("default").Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	p := n.waitPod("deadline", "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	if p.Status.Reason != "DeadlineExceeded" || p.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if n.rt.Running("deadline", "main") != nil {
		t.Error("the container still runs after the deadline")
	}
	if !n.hasEvent("Normal DeadlineExceeded Pod was active on the node longer than the specified deadline") {
		t.Errorf("no DeadlineExceeded event in %q", n.rec.Events())
	}
}
