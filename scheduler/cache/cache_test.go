package cache

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func requestedCPU(t *testing.T, c *Cache, node string) int64 {
	t.Helper()
	s := NewSnapshot()
	c.UpdateSnapshot(s)
	ni, ok := s.Get(node)
	if !ok {
		t.Fatalf("node %s not in snapshot", node)
	}
	return ni.Requested.MilliCPU
}

func TestAssumeConfirmForget(t *testing.T) {
	cases := []struct {
		name    string
		steps   func(c *Cache, p *api.Pod)
		wantCPU map[string]int64
		wantN   int
	}{
		{"assumed counts at once", func(c *Cache, p *api.Pod) { _ = c.AssumePod(p) }, map[string]int64{"a": 500, "b": 0}, 1},
		{"forget undoes", func(c *Cache, p *api.Pod) { _ = c.AssumePod(p); _ = c.ForgetPod(p) }, map[string]int64{"a": 0}, 0},
		{"confirmed by the informer", func(c *Cache, p *api.Pod) {
			_ = c.AssumePod(p)
			c.FinishBinding(p)
			_ = c.AddPod(p)
		}, map[string]int64{"a": 500}, 1},
		{"confirmed on another node moves", func(c *Cache, p *api.Pod) {
			_ = c.AssumePod(p)
			moved := *p
			moved.Spec.NodeName = "b"
			_ = c.AddPod(&moved)
		}, map[string]int64{"a": 0, "b": 500}, 1},
		{"removed", func(c *Cache, p *api.Pod) { _ = c.AddPod(p); _ = c.RemovePod(p) }, map[string]int64{"a": 0}, 0},
		{"updated", func(c *Cache, p *api.Pod) {
			_ = c.AddPod(p)
			bigger := schedtest.OnNode(schedtest.Pod("ns", "p", "1", ""), "a")
			_ = c.UpdatePod(p, bigger)
		}, map[string]int64{"a": 1000}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New(time.Minute, nil)
			c.AddNode(schedtest.Node("a", "4", "8Gi", 110))
			c.AddNode(schedtest.Node("b", "4", "8Gi", 110))
			tc.steps(c, schedtest.OnNode(schedtest.Pod("ns", "p", "500m", ""), "a"))
			for node, want := range tc.wantCPU {
				if got := requestedCPU(t, c, node); got != want {
					t.Errorf("node %s requested cpu %d, want %d", node, got, want)
				}
			}
			if c.PodCount() != tc.wantN {
				t.Errorf("pods = %d, want %d", c.PodCount(), tc.wantN)
			}
		})
	}
}

func TestAssumeErrors(t *testing.T) {
	c := New(time.Minute, nil)
	p := schedtest.OnNode(schedtest.Pod("ns", "p", "", ""), "a")
	if err := c.AssumePod(schedtest.Pod("ns", "q", "", "")); err == nil {
		t.Error("assumed a pod without a node")
	}
	if err := c.AssumePod(p); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(p); err == nil {
		t.Error("assumed twice")
	}
	if !c.IsAssumed(p) {
		t.Error("not assumed")
	}
	_ = c.AddPod(p)
	if c.IsAssumed(p) {
		t.Error("still assumed after the informer confirmed it")
	}
	if err := c.ForgetPod(p); err == nil {
		t.Error("forgot a confirmed pod")
	}
}

func TestAssumedPodExpires(t *testing.T) {
	c := New(30*time.Second, nil)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	c.AddNode(schedtest.Node("a", "4", "8Gi", 110))
	bound := schedtest.OnNode(schedtest.Pod("ns", "bound", "1", ""), "a")
	inflight := schedtest.OnNode(schedtest.Pod("ns", "inflight", "1", ""), "a")
	_ = c.AssumePod(bound)
	_ = c.AssumePod(inflight)
	c.FinishBinding(bound)
	now = now.Add(29 * time.Second)
	c.CleanupExpiredAssumedPods()
	if got := requestedCPU(t, c, "a"); got != 2000 {
		t.Fatalf("expired early: cpu %d", got)
	}
	now = now.Add(2 * time.Second)
	c.CleanupExpiredAssumedPods()
	if got := requestedCPU(t, c, "a"); got != 1000 {
		t.Errorf("after TTL: cpu %d, want 1000 (the in-flight binding never expires)", got)
	}
	if c.IsAssumed(bound) || !c.IsAssumed(inflight) {
		t.Error("wrong pod expired")
	}
}

func TestSnapshotIsIncrementalAndStable(t *testing.T) {
	c := New(time.Minute, nil)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(schedtest.Node(n, "4", "8Gi", 110))
	}
	s := NewSnapshot()
	c.UpdateSnapshot(s)
	if len(s.List()) != 3 || s.List()[0].Node().Name != "a" || s.List()[2].Node().Name != "c" {
		t.Fatalf("list = %d nodes", len(s.List()))
	}
	before := s.List()[1]
	_ = c.AssumePod(schedtest.OnNode(schedtest.Pod("ns", "p", "1", ""), "b"))
	c.UpdateSnapshot(s)
	if s.List()[1] != before || before.Requested.MilliCPU != 1000 {
		t.Errorf("the list entry was not updated in place: %d", before.Requested.MilliCPU)
	}
	anti := schedtest.OnNode(schedtest.Pod("ns", "anti", "", ""), "c")
	anti.Spec.Affinity = &api.Affinity{PodAntiAffinity: &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{{TopologyKey: api.LabelHostname, LabelSelector: &api.LabelSelector{}}}}}
	_ = c.AddPod(anti)
	c.UpdateSnapshot(s)
	if l := s.HavePodsWithRequiredAntiAffinity(); len(l) != 1 || l[0].Node().Name != "c" {
		t.Errorf("anti-affinity nodes = %v", l)
	}
	c.RemoveNode(schedtest.Node("a", "4", "8Gi", 110))
	c.UpdateSnapshot(s)
	if len(s.List()) != 2 || s.List()[0].Node().Name != "b" {
		t.Errorf("after removing a: %d nodes", len(s.List()))
	}
	if _, ok := s.Get("a"); ok {
		t.Error("removed empty node still in the snapshot")
	}
	// A node removed while pods remain keeps its pods but leaves the list.
	c.RemoveNode(schedtest.Node("b", "4", "8Gi", 110))
	c.UpdateSnapshot(s)
	if len(s.List()) != 1 || c.PodCount() != 2 {
		t.Errorf("list %d, pods %d", len(s.List()), c.PodCount())
	}
}
