package nodename_test

import (
	"testing"

	"github.com/minik8s/minik8s/scheduler/plugins/nodename"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestFilter(t *testing.T) {
	cases := []struct {
		name, podNode, want string
	}{
		{"no node name", "", ""},
		{"same node", "n", ""},
		{"other node", "m", nodename.ErrReason},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := schedtest.Pod("ns", "p", "", "")
			p.Spec.NodeName = tc.podNode
			if s := schedtest.Filter(nodename.Plugin{}, p, schedtest.NodeInfo(schedtest.Node("n", "1", "1Gi", 10))); s.Message() != tc.want {
				t.Errorf("got %q, want %q", s.Message(), tc.want)
			}
		})
	}
}
