package tainttoleration_test

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/tainttoleration"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestFilter(t *testing.T) {
	taint := func(k, v string, e api.TaintEffect) api.Taint { return api.Taint{Key: k, Value: v, Effect: e} }
	cases := []struct {
		name   string
		taints []api.Taint
		tols   []api.Toleration
		want   string
	}{
		{"no taints", nil, nil, ""},
		{"NoSchedule untolerated", []api.Taint{taint("dedicated", "gpu", "NoSchedule")}, nil, "node(s) had untolerated taint {dedicated: gpu}"},
		{"NoExecute untolerated", []api.Taint{taint("node-role.kubernetes.io/control-plane", "", "NoExecute")}, nil, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"},
		{"PreferNoSchedule does not filter", []api.Taint{taint("soft", "x", "PreferNoSchedule")}, nil, ""},
		{"Equal matches", []api.Taint{taint("dedicated", "gpu", "NoSchedule")}, []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "gpu", Effect: "NoSchedule"}}, ""},
		{"empty operator is Equal", []api.Taint{taint("dedicated", "gpu", "NoSchedule")}, []api.Toleration{{Key: "dedicated", Value: "gpu"}}, ""},
		{"Equal with another value", []api.Taint{taint("dedicated", "gpu", "NoSchedule")}, []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "cpu"}}, "node(s) had untolerated taint {dedicated: gpu}"},
		{"Exists on key", []api.Taint{taint("dedicated", "gpu", "NoSchedule")}, []api.Toleration{{Key: "dedicated", Operator: "Exists"}}, ""},
		{"Exists with empty key tolerates all", []api.Taint{taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute")}, []api.Toleration{{Operator: "Exists"}}, ""},
		{"effect mismatch", []api.Taint{taint("dedicated", "gpu", "NoExecute")}, []api.Toleration{{Key: "dedicated", Operator: "Exists", Effect: "NoSchedule"}}, "node(s) had untolerated taint {dedicated: gpu}"},
		{"second taint untolerated", []api.Taint{taint("a", "1", "NoSchedule"), taint("b", "2", "NoSchedule")}, []api.Toleration{{Key: "a", Operator: "Exists"}}, "node(s) had untolerated taint {b: 2}"},
		{"Gt", []api.Taint{taint("level", "5", "NoSchedule")}, []api.Toleration{{Key: "level", Operator: "Gt", Value: "3"}}, ""},
		{"Lt fails", []api.Taint{taint("level", "5", "NoSchedule")}, []api.Toleration{{Key: "level", Operator: "Lt", Value: "3"}}, "node(s) had untolerated taint {level: 5}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := schedtest.WithTaints(schedtest.Node("n", "1", "1Gi", 10), tc.taints...)
			p := schedtest.Pod("ns", "p", "", "")
			p.Spec.Tolerations = tc.tols
			s := schedtest.Filter(tainttoleration.Plugin{}, p, schedtest.NodeInfo(n))
			if s.Message() != tc.want {
				t.Errorf("got %q, want %q", s.Message(), tc.want)
			}
			if tc.want != "" && s.Code != framework.UnschedulableAndUnresolvable {
				t.Errorf("code = %v, want UnschedulableAndUnresolvable", s.Code)
			}
		})
	}
}

func TestScore(t *testing.T) {
	soft := func(k string) api.Taint { return api.Taint{Key: k, Effect: api.TaintEffectPreferNoSchedule} }
	none := schedtest.NodeInfo(schedtest.Node("none", "1", "1Gi", 10))
	one := schedtest.NodeInfo(schedtest.WithTaints(schedtest.Node("one", "1", "1Gi", 10), soft("a")))
	two := schedtest.NodeInfo(schedtest.WithTaints(schedtest.Node("two", "1", "1Gi", 10), soft("a"), soft("b")))
	cases := []struct {
		name string
		tols []api.Toleration
		want map[string]int64
	}{
		{"fewer taints score higher", nil, map[string]int64{"none": 100, "one": 50, "two": 0}},
		{"tolerated taints do not count", []api.Toleration{{Key: "a", Operator: "Exists", Effect: "PreferNoSchedule"}}, map[string]int64{"none": 100, "one": 100, "two": 0}},
		{"NoSchedule tolerations do not count", []api.Toleration{{Key: "a", Operator: "Exists", Effect: "NoSchedule"}}, map[string]int64{"none": 100, "one": 50, "two": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := schedtest.Pod("ns", "p", "", "")
			p.Spec.Tolerations = tc.tols
			got := schedtest.Score(tainttoleration.Plugin{}, p, none, one, two)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("score[%s] = %d, want %d (all %v)", k, got[k], v, got)
				}
			}
		})
	}
}
