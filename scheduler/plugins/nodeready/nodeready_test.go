package nodeready_test

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeready"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestFilter(t *testing.T) {
	noConditions := schedtest.Node("n", "1", "1Gi", 10)
	noConditions.Status.Conditions = nil
	unknown := schedtest.Node("n", "1", "1Gi", 10)
	unknown.Status.Conditions[0].Status = api.ConditionUnknown
	tolerating := schedtest.Pod("ns", "ds", "", "")
	tolerating.Spec.Tolerations = []api.Toleration{{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists}}
	cases := []struct {
		name string
		node *api.Node
		pod  *api.Pod
		want string
	}{
		{"ready", schedtest.Node("n", "1", "1Gi", 10), schedtest.Pod("ns", "p", "", ""), ""},
		{"not ready", schedtest.NotReady(schedtest.Node("n", "1", "1Gi", 10)), schedtest.Pod("ns", "p", "", ""), nodeready.ErrReasonNotReady},
		{"unknown", unknown, schedtest.Pod("ns", "p", "", ""), nodeready.ErrReasonNotReady},
		{"never reported", noConditions, schedtest.Pod("ns", "p", "", ""), nodeready.ErrReasonNotReady},
		{"not ready, pod tolerates not-ready", schedtest.NotReady(schedtest.Node("n", "1", "1Gi", 10)), tolerating, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if s := schedtest.Filter(nodeready.Plugin{}, tc.pod, schedtest.NodeInfo(tc.node)); s.Message() != tc.want {
				t.Errorf("got %q, want %q", s.Message(), tc.want)
			}
		})
	}
}
