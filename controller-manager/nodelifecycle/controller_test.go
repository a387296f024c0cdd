package nodelifecycle

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func TestTolerationTime(t *testing.T) {
	unreachable := []api.Taint{UnreachableTaint}
	tests := []struct {
		name        string
		tolerations []api.Toleration
		taints      []api.Taint
		want        time.Duration
		forever, ok bool
	}{
		{name: "no toleration", taints: unreachable},
		{name: "other key", tolerations: []api.Toleration{{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists}}, taints: unreachable},
		{name: "forever", tolerations: []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists}}, taints: unreachable, forever: true, ok: true},
		{name: "seconds", tolerations: []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}}, taints: unreachable, want: 300 * time.Second, ok: true},
		{name: "smallest wins", tolerations: []api.Toleration{
			{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, TolerationSeconds: ptr(int64(300))},
			{Operator: api.TolerationOpExists, TolerationSeconds: ptr(int64(2))}}, taints: unreachable, want: 2 * time.Second, ok: true},
		{name: "negative is zero", tolerations: []api.Toleration{{Operator: api.TolerationOpExists, TolerationSeconds: ptr(int64(-5))}}, taints: unreachable, ok: true},
		{name: "wrong effect", tolerations: []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule}}, taints: unreachable},
		{name: "equal value", tolerations: []api.Toleration{{Key: "k", Value: "v"}}, taints: []api.Taint{{Key: "k", Value: "v", Effect: api.TaintEffectNoExecute}}, forever: true, ok: true},
		{name: "one of two taints untolerated", tolerations: []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists}},
			taints: []api.Taint{UnreachableTaint, {Key: "x", Effect: api.TaintEffectNoExecute}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, forever, ok := tolerationTime(tt.tolerations, tt.taints)
			if ok != tt.ok || (ok && (forever != tt.forever || (!forever && d != tt.want))) {
				t.Fatalf("tolerationTime = %v, %v, %v; want %v, %v, %v", d, forever, ok, tt.want, tt.forever, tt.ok)
			}
		})
	}
}

type fixture struct {
	c   *Controller
	srv *clienttest.Server
	rec *events.FakeRecorder
	ev  *events.FakeRecorder
	now time.Time
}

func newFixture(t testing.TB, objs ...api.Object) *fixture {
	t.Helper()
	srv := clienttest.NewServer(t, objs...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	fx := &fixture{srv: srv, rec: &events.FakeRecorder{}, ev: &events.FakeRecorder{}, now: t0}
	c, err := NewController(srv.Client(), informer.Shared[api.Node](f, "", client.ListOptions{}),
		informer.Shared[api.Lease](f, api.NamespaceNodeLease, client.ListOptions{}),
		informer.Shared[api.Pod](f, "", client.ListOptions{}),
		fx.rec, fx.ev, slog.New(slog.DiscardHandler), Config{GracePeriod: 40 * time.Second, MonitorPeriod: 5 * time.Second, EvictionRate: 100,
			SecondaryEvictionRate: 0.01, UnhealthyZoneThreshold: 0.55, LargeClusterSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return fx.now }
	fx.c = c
	f.Start(ctx)
	if !f.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	srv.ClearActions()
	return fx
}

func (fx *fixture) writes() []string {
	var out []string
	for _, a := range fx.srv.Actions() {
		if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
			out = append(out, a.String())
		}
	}
	return out
}

// waitCache waits until the node informer has caught up with the server.
func (fx *fixture) waitCache(t *testing.T, name string) {
	t.Helper()
	var n api.Node
	fx.srv.Object(client.Resource[api.Node](fx.srv.Client()).Info(), "", name, &n)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if c, err := fx.c.nodes.Lister().Get(name); err == nil && c.ResourceVersion == n.ResourceVersion {
			return
		}
	}
	t.Fatalf("node cache did not catch up")
}

func readyNode(name string, status api.ConditionStatus, heartbeat time.Time, taints ...api.Taint) *api.Node {
	return &api.Node{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: api.NewTime(t0.Add(-time.Hour))},
		Spec: api.NodeSpec{Taints: taints},
		Status: api.NodeStatus{Conditions: []api.NodeCondition{
			{Type: api.NodeReady, Status: status, LastHeartbeatTime: api.NewTime(heartbeat)},
			{Type: api.NodeMemoryPressure, Status: api.ConditionFalse, LastHeartbeatTime: api.NewTime(heartbeat)},
		}}}
}

func lease(name string, renew time.Time) *api.Lease {
	return &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: api.NamespaceNodeLease, Name: name},
		Spec: api.LeaseSpec{HolderIdentity: ptr(name), RenewTime: &api.MicroTime{Time: renew}}}
}

func readyPod(name, node string) *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, UID: api.UID("uid-" + name)},
		Spec:   api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c", Image: "i"}}},
		Status: api.PodStatus{Phase: api.PodRunning, Conditions: []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}}}}
}

func TestMonitorNodeHealth(t *testing.T) {
	tests := []struct {
		name       string
		node       *api.Node
		advance    time.Duration
		wantWrites []string
		wantReady  api.ConditionStatus
		wantTaints []string
		wantEvents []string
		podReady   api.ConditionStatus
		alone      bool // no healthy node "b" beside it
	}{
		{name: "healthy within grace", node: readyNode("a", api.ConditionTrue, t0), advance: 30 * time.Second,
			wantReady: api.ConditionTrue, podReady: api.ConditionTrue},
		{name: "silent past grace", node: readyNode("a", api.ConditionTrue, t0), advance: 41 * time.Second,
			wantWrites: []string{"update nodes a/status", "update pods default/p/status", "update nodes a"},
			wantReady:  api.ConditionUnknown, wantTaints: []string{api.TaintNodeUnreachable + ":NoExecute", api.TaintNodeUnreachable + ":NoSchedule"},
			wantEvents: []string{"Normal NodeNotReady Node a status is now: NodeNotReady"}, podReady: api.ConditionFalse},
		{name: "kubelet reports not ready", node: readyNode("a", api.ConditionFalse, t0), advance: time.Second,
			wantWrites: []string{"update nodes a"}, wantReady: api.ConditionFalse, wantTaints: []string{api.TaintNodeNotReady + ":NoExecute", api.TaintNodeNotReady + ":NoSchedule"}, podReady: api.ConditionTrue},
		{name: "recovered node loses its taints", node: readyNode("a", api.ConditionTrue, t0, UnreachableTaint, api.Taint{Key: "other", Effect: api.TaintEffectNoSchedule}),
			advance: time.Second, wantWrites: []string{"update nodes a"}, wantReady: api.ConditionTrue, wantTaints: []string{"other:NoSchedule"}, podReady: api.ConditionTrue},
		{name: "conditions and unschedulable give NoSchedule taints", node: func() *api.Node {
			n := readyNode("a", api.ConditionTrue, t0)
			n.Spec.Unschedulable = true
			n.Status.Conditions[1].Status = api.ConditionTrue // MemoryPressure
			return n
		}(), advance: time.Second, wantWrites: []string{"update nodes a"}, wantReady: api.ConditionTrue,
			wantTaints: []string{api.TaintNodeMemoryPressure + ":NoSchedule", api.TaintNodeUnschedulable + ":NoSchedule"}, podReady: api.ConditionTrue},
		{name: "the only node silent: master disruption, no NoExecute taint", node: readyNode("a", api.ConditionTrue, t0), advance: 41 * time.Second, alone: true,
			wantWrites: []string{"update nodes a/status", "update pods default/p/status", "update nodes a"},
			wantReady:  api.ConditionUnknown, wantTaints: []string{api.TaintNodeUnreachable + ":NoSchedule"},
			wantEvents: []string{"Normal NodeNotReady Node a status is now: NodeNotReady"}, podReady: api.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []api.Object{tt.node, lease("a", t0), readyPod("p", "a")}
			if !tt.alone {
				objs = append(objs, readyNode("b", api.ConditionTrue, t0), lease("b", t0))
			}
			fx := newFixture(t, objs...)
			ctx := context.Background()
			if err := fx.c.monitorNodeHealth(ctx); err != nil {
				t.Fatal(err)
			}
			fx.waitCache(t, "a")
			fx.now = fx.now.Add(tt.advance)
			fx.c.leases.Store().Update(lease("b", fx.now)) // b keeps beating
			if err := fx.c.monitorNodeHealth(ctx); err != nil {
				t.Fatal(err)
			}
			if got := fx.writes(); !slices.Equal(got, tt.wantWrites) {
				t.Fatalf("writes = %q, want %q", got, tt.wantWrites)
			}
			var n api.Node
			fx.srv.Object(client.Resource[api.Node](fx.srv.Client()).Info(), "", "a", &n)
			ready := nodeCondition(&n.Status, api.NodeReady)
			if ready.Status != tt.wantReady {
				t.Fatalf("Ready = %s, want %s", ready.Status, tt.wantReady)
			}
			if tt.wantReady == api.ConditionUnknown {
				if ready.Reason != "NodeStatusUnknown" || ready.Message != "Kubelet stopped posting node status." {
					t.Fatalf("Ready condition %+v", ready)
				}
				if mp := nodeCondition(&n.Status, api.NodeMemoryPressure); mp.Status != api.ConditionUnknown {
					t.Fatalf("MemoryPressure = %s, want Unknown", mp.Status)
				}
				if dp := nodeCondition(&n.Status, api.NodeDiskPressure); dp == nil || dp.Reason != "NodeStatusNeverUpdated" {
					t.Fatalf("DiskPressure = %+v, want NodeStatusNeverUpdated", dp)
				}
			}
			var keys []string
			for _, taint := range n.Spec.Taints {
				keys = append(keys, taint.Key+":"+string(taint.Effect))
				if (taint.Effect == api.TaintEffectNoExecute) != (taint.TimeAdded != nil) {
					t.Fatalf("taint %s:%s timeAdded %v", taint.Key, taint.Effect, taint.TimeAdded)
				}
			}
			if !slices.Equal(keys, tt.wantTaints) {
				t.Fatalf("taints = %q, want %q", keys, tt.wantTaints)
			}
			if !slices.Equal(fx.rec.Events(), tt.wantEvents) {
				t.Fatalf("events = %q, want %q", fx.rec.Events(), tt.wantEvents)
			}
			var p api.Pod
			fx.srv.Object(client.Resource[api.Pod](fx.srv.Client()).Info(), "default", "p", &p)
			if p.Status.Conditions[0].Status != tt.podReady {
				t.Fatalf("pod Ready = %s, want %s", p.Status.Conditions[0].Status, tt.podReady)
			}
		})
	}
}

func TestLeaseRenewalKeepsNodeHealthy(t *testing.T) {
	// The Ready heartbeat is old, but the Lease keeps being renewed.
	fx := newFixture(t, readyNode("a", api.ConditionTrue, t0), lease("a", t0))
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		if err := fx.c.monitorNodeHealth(ctx); err != nil {
			t.Fatal(err)
		}
		fx.now = t0.Add(time.Duration(i) * 30 * time.Second)
		l := lease("a", fx.now)
		fx.c.leases.Store().Update(l)
	}
	if got := fx.writes(); len(got) != 0 {
		t.Fatalf("writes = %q, want none", got)
	}
}

func TestEvictionCancelled(t *testing.T) {
	added := api.NewTime(t0)
	taint := UnreachableTaint
	taint.TimeAdded = &added
	p := readyPod("p", "a")
	p.Spec.Tolerations = []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, TolerationSeconds: ptr(int64(300))}}
	fx := newFixture(t, readyNode("a", api.ConditionUnknown, t0, taint), p)
	ctx := context.Background()
	if err := fx.c.syncPod(ctx, "default/p"); err != nil {
		t.Fatal(err)
	}
	// The node is back: its taint is gone before the toleration ran out.
	n := readyNode("a", api.ConditionTrue, t0)
	n.ResourceVersion = "999"
	fx.c.nodes.Store().Update(n)
	if err := fx.c.syncPod(ctx, "default/p"); err != nil {
		t.Fatal(err)
	}
	if got := fx.writes(); len(got) != 0 {
		t.Fatalf("writes = %q, want none", got)
	}
	if want := []string{"Normal TaintManagerEviction Cancelling deletion of Pod default/p"}; !slices.Equal(fx.ev.Events(), want) {
		t.Fatalf("events = %q, want %q", fx.ev.Events(), want)
	}
}

func TestZoneState(t *testing.T) {
	tests := []struct {
		nodes, notReady int
		want            zoneState
	}{
		{3, 0, zoneNormal}, {3, 3, zoneFullDisruption}, {1, 1, zoneFullDisruption},
		{10, 2, zoneNormal}, {5, 3, zonePartialDisruption}, {10, 5, zoneNormal}, {10, 6, zonePartialDisruption},
	}
	for _, tt := range tests {
		z := zoneHealth{nodes: tt.nodes, notReady: tt.notReady}
		if got := z.state(0.55); got != tt.want {
			t.Errorf("%d of %d not ready: state %d, want %d", tt.notReady, tt.nodes, got, tt.want)
		}
	}
	c := &Controller{cfg: Config{EvictionRate: 0.1, SecondaryEvictionRate: 0.01, UnhealthyZoneThreshold: 0.55, LargeClusterSize: 50}, zoneLimiters: map[string]*rate.Limiter{}}
	if l := c.zoneLimiter("z", &zoneHealth{nodes: 10, notReady: 6}); l != nil {
		t.Errorf("small partially disrupted zone taints at %v", l.Limit())
	}
	if l := c.zoneLimiter("z", &zoneHealth{nodes: 100, notReady: 60}); l == nil || l.Limit() != 0.01 {
		t.Errorf("large partially disrupted zone limiter %v, want 0.01/s", l)
	}
	if l := c.zoneLimiter("z", &zoneHealth{nodes: 100, notReady: 1}); l == nil || l.Limit() != 0.1 {
		t.Errorf("healthy zone limiter %v, want 0.1/s", l)
	}
}

func TestSyncPodEviction(t *testing.T) {
	added := api.NewTime(t0.Add(-10 * time.Second))
	taint := UnreachableTaint
	taint.TimeAdded = &added
	tol := func(secs *int64) []api.Toleration {
		return []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: secs}}
	}
	tests := []struct {
		name        string
		taints      []api.Taint
		tolerations []api.Toleration
		wantWrites  []string
		wantEvents  []string
	}{
		{name: "untainted node", tolerations: nil},
		{name: "no toleration: evicted at once", taints: []api.Taint{taint},
			wantWrites: []string{"update pods default/p/status", "delete pods default/p"},
			wantEvents: []string{"Normal TaintManagerEviction Marking for deletion Pod default/p"}},
		{name: "toleration not yet run out", taints: []api.Taint{taint}, tolerations: tol(ptr(int64(300)))},
		{name: "toleration run out", taints: []api.Taint{taint}, tolerations: tol(ptr(int64(5))),
			wantWrites: []string{"update pods default/p/status", "delete pods default/p"},
			wantEvents: []string{"Normal TaintManagerEviction Marking for deletion Pod default/p"}},
		{name: "tolerated forever", taints: []api.Taint{taint}, tolerations: tol(nil)},
		{name: "NoSchedule taints do not evict", taints: []api.Taint{{Key: "x", Effect: api.TaintEffectNoSchedule}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := readyNode("a", api.ConditionUnknown, t0, tt.taints...)
			p := readyPod("p", "a")
			p.Spec.Tolerations = tt.tolerations
			fx := newFixture(t, n, p)
			if err := fx.c.syncPod(context.Background(), "default/p"); err != nil {
				t.Fatal(err)
			}
			if got := fx.writes(); !slices.Equal(got, tt.wantWrites) {
				t.Fatalf("writes = %q, want %q", got, tt.wantWrites)
			}
			if !slices.Equal(fx.ev.Events(), tt.wantEvents) {
				t.Fatalf("events = %q, want %q", fx.ev.Events(), tt.wantEvents)
			}
		})
	}
}
