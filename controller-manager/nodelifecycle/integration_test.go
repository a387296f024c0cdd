package nodelifecycle_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

func ptr[T any](v T) *T { return &v }

func boundPod(name, node string, tolerationSeconds *int64) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "nl", Name: name},
		Spec: api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	if tolerationSeconds != nil {
		p.Spec.Tolerations = []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: tolerationSeconds}}
	}
	return p
}

// A node that stops heartbeating becomes Ready=Unknown with the unreachable
// taint, its pods become not ready, the pod tolerating the taint for 1 s is
// evicted while the one with admission's default 300 s stays; the taint goes
// when the node is back. A healthy node is never touched.
func TestNodeStopsHeartbeating(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"nodelifecycle"}, func(o *app.Options) {
		o.Controller.NodeMonitorGracePeriod = 3 * time.Second
		o.Controller.NodeMonitorPeriod = 200 * time.Millisecond
		o.Controller.NodeEvictionRate = 100
	})
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace("nl")
	n1 := cl.StartNode("n1", 300*time.Millisecond)
	cl.StartNode("n2", 300*time.Millisecond)
	pods := client.Resource[api.Pod](cl.Client).Namespace("nl")
	nodes := client.Resource[api.Node](cl.Client)
	for _, p := range []*api.Pod{boundPod("short", "n1", ptr(int64(1))), boundPod("default", "n1", nil), boundPod("elsewhere", "n2", ptr(int64(1)))} {
		if _, err := pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		cl.SetPodStatus("nl", p.Name, api.PodRunning, "", true)
	}
	// Admission gave "default" the 300 s tolerations.
	if p, err := pods.Get(ctx, "default"); err != nil || len(p.Spec.Tolerations) != 2 {
		t.Fatalf("default tolerations = %+v, %v", p, err)
	}

	// Healthy for longer than the grace period: nothing happens.
	time.Sleep(4 * time.Second)
	for _, name := range []string{"n1", "n2"} {
		n, err := nodes.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Spec.Taints) != 0 || readyStatus(n) != api.ConditionTrue {
			t.Fatalf("healthy node %s: taints %+v ready %s", name, n.Spec.Taints, readyStatus(n))
		}
	}

	n1.Pause()
	cl.Eventually(30*time.Second, "n1 Ready=Unknown with the unreachable taint", func() (bool, error) {
		n, err := nodes.Get(ctx, "n1")
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == api.NodeReady && (c.Status != api.ConditionUnknown || c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status.") {
				return false, nil
			}
		}
		i := slices.IndexFunc(n.Spec.Taints, func(t api.Taint) bool {
			return t.Key == api.TaintNodeUnreachable && t.Effect == api.TaintEffectNoExecute && t.TimeAdded != nil
		})
		return i >= 0, nil
	})
	cl.Eventually(30*time.Second, "pod short evicted", func() (bool, error) {
		p, err := pods.Get(ctx, "short")
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && p.DeletionTimestamp != nil, err
	})
	cl.Eventually(10*time.Second, "pod default marked not ready", func() (bool, error) {
		p, err := pods.Get(ctx, "default")
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == api.PodReady {
				return c.Status == api.ConditionFalse, nil
			}
		}
		return false, nil
	})
	cl.Eventually(10*time.Second, "NodeNotReady and TaintManagerEviction events", func() (bool, error) {
		evs, err := client.Resource[api.Event](cl.Client).List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		var notReady, eviction bool
		for _, e := range evs.Items {
			notReady = notReady || (e.Reason == "NodeNotReady" && e.InvolvedObject.Name == "n1" && e.Source.Component == "node-controller")
			eviction = eviction || (e.Reason == "TaintManagerEviction" && e.InvolvedObject.Name == "short" && e.Message == "Marking for deletion Pod nl/short")
		}
		return notReady && eviction, nil
	})
	if p, err := pods.Get(ctx, "default"); err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("pod default (300 s toleration) was evicted: %+v, %v", p, err)
	}
	if p, err := pods.Get(ctx, "elsewhere"); err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("pod on the healthy node was evicted: %+v, %v", p, err)
	}
	if n, _ := nodes.Get(ctx, "n2"); len(n.Spec.Taints) != 0 {
		t.Fatalf("healthy n2 got taints %+v", n.Spec.Taints)
	}

	n1.Resume()
	cl.Eventually(30*time.Second, "n1 untainted after it came back", func() (bool, error) {
		n, err := nodes.Get(ctx, "n1")
		if err != nil {
			return false, err
		}
		return len(n.Spec.Taints) == 0 && readyStatus(n) == api.ConditionTrue, nil
	})
}

// A kubelet reporting Ready=False gets the not-ready taint instead.
// (Two nodes: with all nodes down the controller enters master disruption
// mode and taints nothing, see TestAllNodesDown.)
func TestNodeReportsNotReady(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"nodelifecycle"}, func(o *app.Options) {
		o.Controller.NodeMonitorGracePeriod = 3 * time.Second
		o.Controller.NodeMonitorPeriod = 200 * time.Millisecond
	})
	ctx := cl.Context(time.Minute)
	cl.StartNode("n1", 300*time.Millisecond)
	cl.StartNode("n2", 300*time.Millisecond) // with every node down nothing is tainted
	nodes := client.Resource[api.Node](cl.Client)
	n, err := nodes.Get(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions[0].Status = api.ConditionFalse
	n.Status.Conditions[0].Reason = "KubeletNotReady"
	n.Status.Conditions[0].LastHeartbeatTime = api.Now()
	if _, err := nodes.UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "not-ready taint", func() (bool, error) {
		n, err := nodes.Get(ctx, "n1")
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(n.Spec.Taints, func(t api.Taint) bool { return t.Key == api.TaintNodeNotReady && t.Effect == api.TaintEffectNoExecute }) &&
			!slices.ContainsFunc(n.Spec.Taints, func(t api.Taint) bool { return t.Key == api.TaintNodeUnreachable }), nil
	})
}

func readyStatus(n *api.Node) api.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status
		}
	}
	return ""
}

// With every node silent the controller assumes its own network is at
// fault ("master disruption mode"): nodes become Unknown but get no
// NoExecute taint and lose no pods. The two nodes' last heartbeats differ
// by up to a heartbeat period, so a monitor pass may see n1 silent while n2
// is still healthy and taint n1, as kube would, until the next pass sees
// both down and lifts it: the pod tolerates the taint for 3 s (longer than
// that window) and is checked after those 3 s, so an eviction that was not
// cancelled shows.
func TestAllNodesDown(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"nodelifecycle"}, func(o *app.Options) {
		o.Controller.NodeMonitorGracePeriod = 3 * time.Second
		o.Controller.NodeMonitorPeriod = 200 * time.Millisecond
		o.Controller.NodeEvictionRate = 100
	})
	ctx := cl.Context(time.Minute)
	cl.Namespace("nl")
	nodes := client.Resource[api.Node](cl.Client)
	n1 := cl.StartNode("n1", 300*time.Millisecond)
	n2 := cl.StartNode("n2", 300*time.Millisecond)
	if _, err := client.Resource[api.Pod](cl.Client).Namespace("nl").Create(ctx, boundPod("p", "n1", ptr(int64(3)))); err != nil {
		t.Fatal(err)
	}
	n1.Pause()
	n2.Pause()
	cl.Eventually(30*time.Second, "both nodes Unknown", func() (bool, error) {
		for _, name := range []string{"n1", "n2"} {
			n, err := nodes.Get(ctx, name)
			if err != nil || readyStatus(n) != api.ConditionUnknown {
				return false, err
			}
		}
		return true, nil
	})
	time.Sleep(4 * time.Second)
	for _, name := range []string{"n1", "n2"} {
		n, err := nodes.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Effect == api.TaintEffectNoExecute {
				t.Fatalf("node %s got %s:NoExecute in master disruption mode", name, taint.Key)
			}
		}
	}
	if p, err := client.Resource[api.Pod](cl.Client).Namespace("nl").Get(ctx, "p"); err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("pod evicted in master disruption mode: %+v, %v", p, err)
	}
}

// A node that stops heartbeating loses its pods to the other nodes: the
// node lifecycle controller taints it unreachable and evicts its pods once
// their toleration runs out, the ReplicaSet controller replaces them, and
// the real scheduler places the replacements on the healthy node only.
func TestNodeLossMovesPodsElsewhere(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"nodelifecycle", "replicaset"}, func(o *app.Options) {
		o.Controller.NodeMonitorGracePeriod = 3 * time.Second
		o.Controller.NodeMonitorPeriod = 200 * time.Millisecond
		o.Controller.NodeEvictionRate = 100
	})
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace("nl")
	nodes := client.Resource[api.Node](cl.Client)
	pods := client.Resource[api.Pod](cl.Client).Namespace("nl")
	n1 := cl.StartNode("n1", 300*time.Millisecond)
	cl.StartNode("n2", 300*time.Millisecond)
	// Room for pods, and n2 cordoned so the first replicas all land on n1.
	for _, name := range []string{"n1", "n2"} {
		cl.Eventually(10*time.Second, "node "+name+" given allocatable", func() (bool, error) {
			n, err := nodes.Get(ctx, name)
			if err != nil {
				return false, err
			}
			n.Status.Allocatable = api.ResourceList{api.ResourceCPU: resource.MustParse("4"), api.ResourceMemory: resource.MustParse("8Gi"), api.ResourcePods: resource.MustParse("110")}
			n.Status.Capacity = n.Status.Allocatable
			_, err = nodes.UpdateStatus(ctx, n)
			return err == nil, err
		})
	}
	setUnschedulable := func(name string, v bool) {
		cl.Eventually(10*time.Second, "cordon "+name, func() (bool, error) {
			n, err := nodes.Get(ctx, name)
			if err != nil {
				return false, err
			}
			n.Spec.Unschedulable = v
			_, err = nodes.Update(ctx, n)
			return err == nil, err
		})
	}
	setUnschedulable("n2", true)

	schedCtx, stopSched := context.WithCancel(ctx)
	s, err := scheduling.New(scheduling.Config{Client: cl.Client, Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	schedDone := make(chan struct{})
	go func() { defer close(schedDone); _ = s.Run(schedCtx) }()
	t.Cleanup(func() { stopSched(); <-schedDone })

	lbl := map[string]string{"app": "web"}
	three := int32(3)
	rs := &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: "nl", Name: "web"}, Spec: api.ReplicaSetSpec{
		Replicas: &three, Selector: &api.LabelSelector{MatchLabels: lbl},
		Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl}, Spec: api.PodSpec{
			Containers:  []api.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: ptr(int64(1))}},
		}},
	}}
	if _, err := client.Resource[api.ReplicaSet](cl.Client).Namespace("nl").Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	// placement returns the live (not terminating) pods per node.
	placement := func() (map[string][]string, error) {
		l, err := pods.List(ctx, client.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return nil, err
		}
		out := map[string][]string{}
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Name)
			}
		}
		return out, nil
	}
	var first []string
	cl.Eventually(30*time.Second, "three replicas on n1", func() (bool, error) {
		pl, err := placement()
		first = pl["n1"]
		return err == nil && len(pl) == 1 && len(first) == 3, fmt.Errorf("placement %v (%v)", pl, err)
	})
	for _, name := range first {
		cl.SetPodStatus("nl", name, api.PodRunning, "", true)
	}
	setUnschedulable("n2", false)

	n1.Pause()
	cl.Eventually(60*time.Second, "the replicas replaced on n2", func() (bool, error) {
		pl, err := placement()
		return err == nil && len(pl) == 1 && len(pl["n2"]) == 3, fmt.Errorf("placement %v (%v)", pl, err)
	})
	for _, name := range first {
		p, err := pods.Get(ctx, name)
		if err == nil && p.DeletionTimestamp == nil {
			t.Errorf("pod %s on the lost node was not evicted", name)
		}
	}
	n, err := nodes.Get(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if readyStatus(n) != api.ConditionUnknown || !slices.ContainsFunc(n.Spec.Taints, func(tt api.Taint) bool {
		return tt.Key == api.TaintNodeUnreachable && tt.Effect == api.TaintEffectNoExecute
	}) {
		t.Errorf("n1: Ready=%s taints %+v, want Unknown and the unreachable NoExecute taint", readyStatus(n), n.Spec.Taints)
	}
}
