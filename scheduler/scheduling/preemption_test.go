package scheduling_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/scheduler/schedtest"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

const foo api.ResourceName = "scheduling.k8s.io/foo"

// fooPod asks n of the extended resource foo, with a priority class.
func fooPod(name, class string, n int) *api.Pod {
	p := schedtest.Pod("default", name, "", "")
	p.Spec.PriorityClassName = class
	p.Spec.Containers[0].Resources.Requests = api.ResourceList{foo: resource.MustParse(fmt.Sprint(n))}
	p.Spec.Containers[0].Resources.Limits = api.ResourceList{foo: resource.MustParse(fmt.Sprint(n))}
	return p
}

func (e *env) createPriorityClass(name string, value int32, policy api.PreemptionPolicy) {
	e.t.Helper()
	pc := &api.PriorityClass{ObjectMeta: api.ObjectMeta{Name: name}, Value: value}
	if policy != "" {
		pc.PreemptionPolicy = &policy
	}
	if _, err := client.Resource[api.PriorityClass](e.c).Create(e.ctx, pc); err != nil {
		e.t.Fatalf("create priority class %s: %v", name, err)
	}
}

// finishTermination plays the kubelet for a pod being deleted: it removes
// it for good once it has a deletionTimestamp.
func (e *env) finishTermination(name string) {
	e.t.Helper()
	zero := int64(0)
	err := client.Resource[api.Pod](e.c).Namespace("default").Delete(e.ctx, name, &api.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil {
		e.t.Fatalf("delete %s for good: %v", name, err)
	}
}

func (e *env) condition(p *api.Pod, t api.PodConditionType) *api.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestPreemption: a high-priority pod that fits nowhere preempts the
// low-priority pod holding the room, as kube-scheduler does: the victim
// gets DisruptionTarget and is deleted, the Preempted event is recorded,
// the preemptor is nominated to the node and bound there once the victim
// is gone, and a low-priority pod arriving meanwhile does not take the
// room. A pod with preemptionPolicy Never preempts nothing, and the
// preemption metrics count the attempts and victims.
func TestPreemption(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := start(t, func(c *scheduling.Config) { c.Registry = reg })
	n := schedtest.Node("n1", "4", "8Gi", 110)
	n.Status.Capacity[foo] = resource.MustParse("2")
	n.Status.Allocatable[foo] = resource.MustParse("2")
	e.createNodes(n)
	e.createPriorityClass("low", 1, "")
	e.createPriorityClass("medium", 100, "")
	e.createPriorityClass("high", 1000, "")
	e.createPriorityClass("high-never", 1000, api.PreemptNever)

	e.createPod(fooPod("victim", "low", 1))
	e.createPod(fooPod("keeper", "medium", 1))
	e.waitBound("victim", "n1")
	e.waitBound("keeper", "n1")

	e.createPod(fooPod("polite", "high-never", 1))
	e.eventually("polite pod refuses to preempt", func() (bool, string) {
		return e.hasEvent("polite", "FailedScheduling", "0/1 nodes are available: 1 Insufficient scheduling.k8s.io/foo. preemption: not eligible due to preemptionPolicy=Never.")
	})
	if p := e.pod("victim"); p.DeletionTimestamp != nil {
		t.Fatalf("a pod with preemptionPolicy Never preempted the victim")
	}
	if err := client.Resource[api.Pod](e.c).Namespace("default").Delete(e.ctx, "polite", nil); err != nil {
		t.Fatal(err)
	}

	e.createPod(fooPod("preemptor", "high", 1))
	e.eventually("victim terminating with DisruptionTarget", func() (bool, string) {
		p := e.pod("victim")
		c := e.condition(p, api.DisruptionTarget)
		return p.DeletionTimestamp != nil && c != nil, fmt.Sprintf("deletionTimestamp=%v condition=%+v", p.DeletionTimestamp, c)
	})
	v := e.pod("victim")
	c := e.condition(v, api.DisruptionTarget)
	if c.Status != api.ConditionTrue || c.Reason != "PreemptionByScheduler" || c.Message != "default-scheduler: preempting to accommodate a higher priority pod" {
		t.Errorf("DisruptionTarget condition %+v", c)
	}
	if k := e.pod("keeper"); k.DeletionTimestamp != nil {
		t.Errorf("the medium-priority pod was preempted too")
	}
	e.eventually("preemptor nominated to n1", func() (bool, string) {
		p := e.pod("preemptor")
		return p.Status.NominatedNodeName == "n1", "nominatedNodeName=" + p.Status.NominatedNodeName
	})
	pre := e.pod("preemptor")
	e.eventually("Preempted event", func() (bool, string) {
		return e.hasEvent("victim", "Preempted", fmt.Sprintf("Preempted by pod %s on node n1", pre.UID))
	})
	e.eventually("FailedScheduling of the preemptor", func() (bool, string) {
		return e.hasEvent("preemptor", "FailedScheduling", "0/1 nodes are available: 1 Insufficient scheduling.k8s.io/foo. preemption: found a potential placement for pod on node n1, preempting 1 victims")
	})

	// A low-priority pod arriving while the victim terminates must not take
	// the preemptor's room (nor preempt anything).
	e.createPod(fooPod("late", "low", 1))
	time.Sleep(500 * time.Millisecond)
	e.finishTermination("victim")
	e.waitBound("preemptor", "n1")
	time.Sleep(time.Second)
	if late := e.pod("late"); late.Spec.NodeName != "" {
		t.Errorf("the late low-priority pod was bound to %s", late.Spec.NodeName)
	}
	if k := e.pod("keeper"); k.DeletionTimestamp != nil {
		t.Errorf("the medium-priority pod was preempted for the late pod")
	}
	if p := e.pod("preemptor"); p.Status.NominatedNodeName != "" {
		t.Errorf("bound preemptor still nominated to %q", p.Status.NominatedNodeName)
	}

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var attempts float64
	var victims uint64
	for _, mf := range mfs {
		switch mf.GetName() {
		case "scheduler_preemption_attempts_total":
			attempts = mf.GetMetric()[0].GetCounter().GetValue()
		case "scheduler_preemption_victims":
			victims = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	// polite (at least once), preemptor (once or more), late (at least once).
	if attempts < 3 || victims != 1 {
		t.Errorf("scheduler_preemption_attempts_total=%v (want >= 3), scheduler_preemption_victims count=%d (want 1)", attempts, victims)
	}
}
