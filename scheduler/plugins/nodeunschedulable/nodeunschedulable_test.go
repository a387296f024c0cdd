package nodeunschedulable_test

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeunschedulable"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestFilter(t *testing.T) {
	cordoned := schedtest.Node("n", "1", "1Gi", 10)
	cordoned.Spec.Unschedulable = true
	tolerating := schedtest.Pod("ns", "p", "", "")
	tolerating.Spec.Tolerations = []api.Toleration{{Key: api.TaintNodeUnschedulable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule}}
	cases := []struct {
		name string
		node *api.Node
		pod  *api.Pod
		want string
	}{
		{"schedulable", schedtest.Node("n", "1", "1Gi", 10), schedtest.Pod("ns", "p", "", ""), ""},
		{"cordoned", cordoned, schedtest.Pod("ns", "p", "", ""), "node(s) were unschedulable"},
		{"cordoned but tolerated", cordoned, tolerating, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := schedtest.Filter(nodeunschedulable.Plugin{}, tc.pod, schedtest.NodeInfo(tc.node))
			if s.Message() != tc.want {
				t.Errorf("got %q, want %q", s.Message(), tc.want)
			}
		})
	}
}
