package scheduling_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/scheduler/schedtest"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

func testLogger() *slog.Logger {
	if os.Getenv("MINIK8S_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type env struct {
	t     *testing.T
	c     *client.Client
	ctx   context.Context
	sched *scheduling.Scheduler
}

// start runs a real apiserver and a scheduler (with a real event
// broadcaster) against it; opts adjust the scheduler's Config.
func start(t *testing.T, opts ...func(*scheduling.Config)) *env {
	t.Helper()
	srv := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	b := events.NewBroadcaster(c, events.Options{Component: "default-scheduler", Host: "test", Logger: testLogger()})
	cfg := scheduling.Config{Client: c, Recorder: b.Recorder(), Logger: testLogger(), PodInitialBackoff: 100 * time.Millisecond, PodMaxBackoff: time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := scheduling.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go b.Run(ctx)
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &env{t: t, c: c, ctx: ctx, sched: s}
}

func (e *env) createNodes(nodes ...*api.Node) {
	e.t.Helper()
	for _, n := range nodes {
		if _, err := client.Resource[api.Node](e.c).Create(e.ctx, n); err != nil {
			e.t.Fatalf("create node %s: %v", n.Name, err)
		}
	}
}

func (e *env) createPod(p *api.Pod) {
	e.t.Helper()
	p.UID = ""
	if _, err := client.Resource[api.Pod](e.c).Namespace(p.Namespace).Create(e.ctx, p); err != nil {
		e.t.Fatalf("create pod %s: %v", p.Name, err)
	}
}

// eventually polls cond until it holds or the deadline passes.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("timed out waiting for %s; last state: %s", what, last)
}

func (e *env) pod(name string) *api.Pod {
	p, err := client.Resource[api.Pod](e.c).Namespace("default").Get(e.ctx, name)
	if err != nil {
		e.t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

func (e *env) waitBound(name, node string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("pod %s bound to %s", name, node), func() (bool, string) {
		p := e.pod(name)
		return p.Spec.NodeName != "", "nodeName=" + p.Spec.NodeName
	})
	if got := e.pod(name).Spec.NodeName; got != node {
		e.t.Errorf("pod %s bound to %q, want %q", name, got, node)
	}
}

func (e *env) hasEvent(pod, reason, message string) (bool, string) {
	l, err := client.Resource[api.Event](e.c).Namespace("default").List(e.ctx, client.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	var seen []string
	for _, ev := range l.Items {
		if ev.InvolvedObject.Name != pod || ev.Reason != reason {
			continue
		}
		if ev.Message == message && ev.Source.Component == "default-scheduler" {
			return true, ""
		}
		seen = append(seen, ev.Message)
	}
	return false, fmt.Sprintf("%s events of %s: %q", reason, pod, seen)
}

func TestPodsLandOnTheOnlyFeasibleNode(t *testing.T) {
	e := start(t)
	cordoned := schedtest.Node("cordoned", "8", "16Gi", 110)
	cordoned.Spec.Unschedulable = true
	e.createNodes(
		schedtest.Node("small", "1", "2Gi", 110),
		schedtest.WithTaints(schedtest.WithLabels(schedtest.Node("gpu", "8", "16Gi", 110), "accel", "gpu"),
			api.Taint{Key: "dedicated", Value: "gpu", Effect: api.TaintEffectNoSchedule}),
		schedtest.WithLabels(schedtest.Node("big", "8", "16Gi", 110), "disk", "ssd"),
		schedtest.NotReady(schedtest.Node("down", "8", "16Gi", 110)),
		cordoned,
	)
	cases := []struct {
		name string
		pod  *api.Pod
		want string
	}{
		{"needs 2 cpu", schedtest.Pod("default", "cpu2", "2", "1Gi"), "big"},
		{"selects ssd", func() *api.Pod {
			p := schedtest.Pod("default", "ssd", "", "")
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			return p
		}(), "big"},
		{"tolerates and selects gpu", func() *api.Pod {
			p := schedtest.Pod("default", "gpu", "100m", "")
			p.Spec.NodeSelector = map[string]string{"accel": "gpu"}
			p.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Operator: api.TolerationOpEqual, Value: "gpu", Effect: api.TaintEffectNoSchedule}}
			return p
		}(), "gpu"},
		{"required affinity NotIn", func() *api.Pod {
			p := schedtest.Pod("default", "notsmall", "", "")
			p.Spec.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{
				NodeSelectorTerms: []api.NodeSelectorTerm{{MatchExpressions: []api.NodeSelectorRequirement{{Key: api.LabelHostname, Operator: api.NodeSelectorOpNotIn, Values: []string{"small"}}}}},
			}}}
			return p
		}(), "big"},
	}
	for _, tc := range cases {
		e.createPod(tc.pod)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.waitBound(tc.pod.Name, tc.want)
			e.eventually("Scheduled event", func() (bool, string) {
				return e.hasEvent(tc.pod.Name, "Scheduled", fmt.Sprintf("Successfully assigned default/%s to %s", tc.pod.Name, tc.want))
			})
			p := e.pod(tc.pod.Name)
			found := false
			for _, c := range p.Status.Conditions {
				found = found || (c.Type == api.PodScheduled && c.Status == api.ConditionTrue)
			}
			if !found {
				t.Errorf("pod %s has no PodScheduled=True condition: %+v", tc.pod.Name, p.Status.Conditions)
			}
		})
	}
}

func TestUnschedulablePodIsScheduledWhenANodeFits(t *testing.T) {
	e := start(t)
	cp := api.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: api.TaintEffectNoSchedule}
	e.createNodes(
		schedtest.Node("worker", "1", "4Gi", 110),
		schedtest.WithTaints(schedtest.Node("cp1", "8", "16Gi", 110), cp),
		schedtest.WithTaints(schedtest.Node("cp2", "8", "16Gi", 110), cp),
	)
	e.createPod(schedtest.Pod("default", "big", "2", "1Gi"))
	// kube's message, with its preemption's verdict appended.
	want := "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
	e.eventually("PodScheduled=False", func() (bool, string) {
		p := e.pod("big")
		for _, c := range p.Status.Conditions {
			if c.Type == api.PodScheduled {
				return c.Status == api.ConditionFalse && c.Reason == "Unschedulable" && c.Message == want, fmt.Sprintf("%+v", c)
			}
		}
		return false, "no PodScheduled condition"
	})
	e.eventually("FailedScheduling event", func() (bool, string) { return e.hasEvent("big", "FailedScheduling", want) })
	if p := e.pod("big"); p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %s although no node fits", p.Spec.NodeName)
	}
	e.createNodes(schedtest.Node("large", "4", "8Gi", 110))
	e.waitBound("big", "large")
	e.eventually("Scheduled event", func() (bool, string) {
		return e.hasEvent("big", "Scheduled", "Successfully assigned default/big to large")
	})
}

func TestResourcesAndAntiAffinityAreRespected(t *testing.T) {
	e := start(t)
	e.createNodes(
		schedtest.Node("a", "2", "4Gi", 110),
		schedtest.Node("b", "2", "4Gi", 110),
		schedtest.Node("c", "2", "4Gi", 3),
	)
	// Anti-affine replicas: one per node, the fourth has nowhere to go.
	anti := func(name string) *api.Pod {
		p := schedtest.Pod("default", name, "100m", "")
		p.Labels = map[string]string{"app": "web"}
		p.Spec.Affinity = &api.Affinity{PodAntiAffinity: &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{{
			LabelSelector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: api.LabelHostname,
		}}}}
		return p
	}
	for i := range 4 {
		e.createPod(anti(fmt.Sprintf("web-%d", i)))
	}
	e.eventually("three replicas on three nodes", func() (bool, string) {
		nodes := map[string]bool{}
		for i := range 4 {
			if n := e.pod(fmt.Sprintf("web-%d", i)).Spec.NodeName; n != "" {
				nodes[n] = true
			}
		}
		return len(nodes) == 3, fmt.Sprint(nodes)
	})
	var pending string
	for i := range 4 {
		if p := e.pod(fmt.Sprintf("web-%d", i)); p.Spec.NodeName == "" {
			pending = p.Name
		}
	}
	if pending == "" {
		t.Fatal("all four anti-affine replicas were bound onto three nodes")
	}
	e.eventually("anti-affinity FailedScheduling", func() (bool, string) {
		return e.hasEvent(pending, "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
	})

	// Resources: each node has 1.9 cpu left after its replica, room for
	// one 1-cpu pod; the fourth stays pending.
	for i := range 4 {
		e.createPod(schedtest.Pod("default", fmt.Sprintf("cpu-%d", i), "1", ""))
	}
	e.eventually("three 1-cpu pods placed", func() (bool, string) {
		n := 0
		for i := range 4 {
			if e.pod(fmt.Sprintf("cpu-%d", i)).Spec.NodeName != "" {
				n++
			}
		}
		return n == 3, fmt.Sprintf("%d bound", n)
	})
	perNode := map[string]int{}
	for i := range 4 {
		if n := e.pod(fmt.Sprintf("cpu-%d", i)).Spec.NodeName; n != "" {
			perNode[n]++
		}
	}
	for n, c := range perNode {
		if c > 1 {
			t.Errorf("node %s got %d 1-cpu pods with 1.9 cpu free", n, c)
		}
	}
}
