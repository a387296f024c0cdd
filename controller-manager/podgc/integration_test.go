package podgc_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/podgc"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// TestIntegrationCollect runs the collector (short period and quarantine)
// against a real apiserver: a running pod bound to a node that is gone is
// marked Failed with DisruptionTarget DeletionByPodGC and force-deleted;
// a terminating pod on a NotReady node tainted out-of-service is
// force-deleted; of three terminated pods over a threshold of two, the
// oldest goes; pods on a present node, and a pod whose node shows up within
// the quarantine, stay.
func TestIntegrationCollect(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	srv := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes := client.Resource[api.Node](c)
	pods := client.Resource[api.Pod](c).Namespace("default")

	mkNode := func(name string, ready bool, taints ...api.Taint) {
		t.Helper()
		n, err := nodes.Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NodeSpec{Taints: taints}})
		if err != nil {
			t.Fatal(err)
		}
		st := api.ConditionFalse
		if ready {
			st = api.ConditionTrue
		}
		n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionStatus(st)}}
		if _, err := nodes.UpdateStatus(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	mkPod := func(name, node string, phase api.PodPhase) *api.Pod {
		t.Helper()
		p, err := pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c", Image: "busybox"}}}})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = phase
		if p, err = pods.UpdateStatus(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mkNode("present", true)
	mkNode("down", false, api.Taint{Key: api.TaintNodeOutOfService, Value: "nodeshutdown", Effect: api.TaintEffectNoExecute})
	mkPod("on-present", "present", api.PodRunning)
	orphan := mkPod("orphan", "gone", api.PodRunning)
	mkPod("late", "late-node", api.PodRunning)
	stuck := mkPod("stuck", "down", api.PodRunning)
	grace := int64(300)
	if err := pods.Delete(ctx, "stuck", &api.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"done-a", "done-b", "done-c"} {
		mkPod(n, "present", api.PodSucceeded)
	}

	w, err := pods.Watch(ctx, client.ListOptions{FieldSelector: "metadata.name=orphan", ResourceVersion: orphan.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	f := informer.NewFactory(c, informer.FactoryOptions{Logger: apiservertest.Logger()})
	gc := podgc.NewController(c, informer.Shared[api.Pod](f, "", client.ListOptions{}), informer.Shared[api.Node](f, "", client.ListOptions{}),
		apiservertest.Logger(), 2, 100*time.Millisecond, 2*time.Second)
	f.Start(ctx)
	go func() { _ = gc.Run(ctx, 1) }()
	// The late node registers within the quarantine.
	time.Sleep(500 * time.Millisecond)
	mkNode("late-node", true)

	// The orphan's last status, then its deletion.
	var failed *api.Pod
	for ev := range w.ResultChan() {
		if ev.Type == "MODIFIED" && ev.Object.Status.Phase == api.PodFailed {
			failed = ev.Object
		}
		if ev.Type == "DELETED" {
			break
		}
	}
	if failed == nil {
		t.Fatal("the orphan was deleted without being marked Failed first")
	}
	if !slices.ContainsFunc(failed.Status.Conditions, func(c api.PodCondition) bool {
		return c.Type == api.DisruptionTarget && c.Status == api.ConditionTrue && c.Reason == "DeletionByPodGC" && c.Message == "PodGC: node no longer exists"
	}) {
		t.Errorf("the orphan's conditions %+v, want DisruptionTarget DeletionByPodGC", failed.Status.Conditions)
	}

	want := []string{"done-b", "done-c", "late", "on-present"}
	var names []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := pods.List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		if slices.Equal(names, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods %v, want %v (stuck was %s on the out-of-service node)", names, want, stuck.UID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Nothing more goes in later passes.
	time.Sleep(time.Second)
	l, err := pods.List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != len(want) {
		t.Errorf("%d pods left after more passes, want %v", len(l.Items), want)
	}
}
