package selectorspread_test

import (
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/selectorspread"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func replica(i int, owner api.UID, node string) *api.Pod {
	return schedtest.OnNode(schedtest.OwnedBy(schedtest.Pod("ns", fmt.Sprintf("r%d-%s", i, owner), "", ""), "ReplicaSet", "rs", owner), node)
}

func TestScore(t *testing.T) {
	cases := []struct {
		name   string
		zones  map[string]string
		counts map[string]int // replicas of rs-1 per node
		want   map[string]int64
	}{
		{"no siblings", nil, map[string]int{}, map[string]int64{"a": 100, "b": 100, "c": 100}},
		{"fewer siblings score higher", nil, map[string]int{"a": 2, "b": 1}, map[string]int64{"a": 0, "b": 50, "c": 100}},
		{"zones blend in", map[string]string{"a": "z1", "b": "z1", "c": "z2"}, map[string]int{"a": 1},
			// a: node 0, zone 0 => 0; b: node 100/3 + zone 0 => 33; c: 100/3 +
			// 200/3 truncates to 99 in float64, exactly as kube's int64(fScore).
			map[string]int64{"a": 0, "b": 33, "c": 99}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lister schedtest.Lister
			for _, name := range []string{"a", "b", "c"} {
				n := schedtest.Node(name, "4", "8Gi", 110)
				if z, ok := tc.zones[name]; ok {
					n.Labels[api.LabelTopologyZone] = z
				}
				var pods []*api.Pod
				for i := range tc.counts[name] {
					pods = append(pods, replica(i, "rs-1", name))
				}
				pods = append(pods, replica(9, "rs-other", name))
				lister = append(lister, schedtest.NodeInfo(n, pods...))
			}
			pl := selectorspread.New(schedtest.Handle{Lister: lister})
			p := schedtest.OwnedBy(schedtest.Pod("ns", "new", "", ""), "ReplicaSet", "rs", "rs-1")
			got := schedtest.Score(pl, p, []*framework.NodeInfo(lister)...)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("score[%s] = %d, want %d (all %v)", k, got[k], v, got)
				}
			}
		})
	}
	pl := selectorspread.New(schedtest.Handle{})
	if got := schedtest.Score(pl, schedtest.Pod("ns", "bare", "", ""), schedtest.NodeInfo(schedtest.Node("a", "1", "1Gi", 1))); got != nil {
		t.Errorf("pod without a controller was scored: %v", got)
	}
}
