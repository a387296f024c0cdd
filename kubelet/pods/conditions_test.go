package pods

import (
	"context"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// TestForeignConditionsSurvive: a condition the kubelet does not own —
// the DisruptionTarget a scheduler's preemption adds before deleting the
// pod — stays in the statuses the kubelet writes afterwards, as kube's
// mergePodStatus keeps it (the conformance spec "validates pod disruption
// condition is added to the preempted pod" reads it from the terminating
// pod, whose containers the kubelet is stopping meanwhile).
func TestForeignConditionsSurvive(t *testing.T) {
	pod := fakePod("victim", api.Container{Name: "main"})
	pod.Spec.RestartPolicy = api.RestartPolicyNever
	n := newFakeNode(t, nil, pod)
	n.waitPod("victim", "Running", isRunning)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pods := client.Resource[api.Pod](n.api.Client()).Namespace("default")
	cur, err := pods.Get(ctx, "victim")
	if err != nil {
		t.Fatal(err)
	}
	disruption := api.PodCondition{Type: api.DisruptionTarget, Status: api.ConditionTrue, Reason: api.PodReasonPreemptionByScheduler,
		Message: "default-scheduler: preempting to accommodate a higher priority pod", LastTransitionTime: api.Now()}
	cur.Status.Conditions = append(cur.Status.Conditions, disruption)
	if _, err := pods.UpdateStatus(ctx, cur); err != nil {
		t.Fatal(err)
	}
	// The kubelet has news to write: the container ends.
	n.rt.Exit(n.rt.Running("victim", "main").ID, 1, "Error")
	p := n.waitPod("victim", "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	found := false
	for _, c := range p.Status.Conditions {
		if c.Type == api.DisruptionTarget {
			found = c.Reason == disruption.Reason && c.Message == disruption.Message && c.Status == api.ConditionTrue
		}
	}
	if !found {
		t.Errorf("conditions of the failed pod %+v: the DisruptionTarget condition was lost", p.Status.Conditions)
	}
}
