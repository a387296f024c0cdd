package nodeaffinity_test

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeaffinity"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func req(key string, op api.NodeSelectorOperator, vals ...string) api.NodeSelectorRequirement {
	return api.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func withRequired(p *api.Pod, terms ...api.NodeSelectorTerm) *api.Pod {
	p.Spec.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{NodeSelectorTerms: terms}}}
	return p
}

func TestFilter(t *testing.T) {
	node := schedtest.WithLabels(schedtest.Node("n1", "1", "1Gi", 10), "zone", "a", "gen", "5", "disk", "ssd")
	term := func(rs ...api.NodeSelectorRequirement) api.NodeSelectorTerm {
		return api.NodeSelectorTerm{MatchExpressions: rs}
	}
	pod := func() *api.Pod { return schedtest.Pod("ns", "p", "", "") }
	selector := func(kv map[string]string) *api.Pod { p := pod(); p.Spec.NodeSelector = kv; return p }
	cases := []struct {
		name string
		pod  *api.Pod
		fit  bool
	}{
		{"nothing required", pod(), true},
		{"nodeSelector matches", selector(map[string]string{"zone": "a"}), true},
		{"nodeSelector value differs", selector(map[string]string{"zone": "b"}), false},
		{"nodeSelector key missing", selector(map[string]string{"gpu": "true"}), false},
		{"In", withRequired(pod(), term(req("zone", "In", "a", "b"))), true},
		{"In misses", withRequired(pod(), term(req("zone", "In", "b"))), false},
		{"NotIn", withRequired(pod(), term(req("zone", "NotIn", "b"))), true},
		{"NotIn on absent key matches", withRequired(pod(), term(req("gpu", "NotIn", "x"))), true},
		{"NotIn misses", withRequired(pod(), term(req("zone", "NotIn", "a"))), false},
		{"Exists", withRequired(pod(), term(req("disk", "Exists"))), true},
		{"Exists misses", withRequired(pod(), term(req("gpu", "Exists"))), false},
		{"DoesNotExist", withRequired(pod(), term(req("gpu", "DoesNotExist"))), true},
		{"DoesNotExist misses", withRequired(pod(), term(req("disk", "DoesNotExist"))), false},
		{"Gt", withRequired(pod(), term(req("gen", "Gt", "4"))), true},
		{"Gt misses", withRequired(pod(), term(req("gen", "Gt", "5"))), false},
		{"Lt", withRequired(pod(), term(req("gen", "Lt", "6"))), true},
		{"Lt on non-number", withRequired(pod(), term(req("zone", "Lt", "6"))), false},
		{"expressions are ANDed", withRequired(pod(), term(req("zone", "In", "a"), req("disk", "In", "hdd"))), false},
		{"terms are ORed", withRequired(pod(), term(req("zone", "In", "b")), term(req("disk", "In", "ssd"))), true},
		{"empty term matches nothing", withRequired(pod(), api.NodeSelectorTerm{}), false},
		{"matchFields metadata.name", withRequired(pod(), api.NodeSelectorTerm{MatchFields: []api.NodeSelectorRequirement{req("metadata.name", "In", "n1")}}), true},
		{"matchFields other name", withRequired(pod(), api.NodeSelectorTerm{MatchFields: []api.NodeSelectorRequirement{req("metadata.name", "In", "n2")}}), false},
		{"selector and affinity both needed", withRequired(selector(map[string]string{"zone": "b"}), term(req("disk", "Exists"))), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := schedtest.Filter(nodeaffinity.Plugin{}, tc.pod, schedtest.NodeInfo(node))
			if s.IsSuccess() != tc.fit {
				t.Errorf("fit = %v (%q), want %v", s.IsSuccess(), s.Message(), tc.fit)
			}
			if !tc.fit && s.Message() != nodeaffinity.ErrReasonPod {
				t.Errorf("reason = %q", s.Message())
			}
		})
	}
}

func TestScore(t *testing.T) {
	a := schedtest.NodeInfo(schedtest.WithLabels(schedtest.Node("a", "1", "1Gi", 10), "zone", "a", "disk", "ssd"))
	b := schedtest.NodeInfo(schedtest.WithLabels(schedtest.Node("b", "1", "1Gi", 10), "zone", "b"))
	c := schedtest.NodeInfo(schedtest.Node("c", "1", "1Gi", 10))
	p := schedtest.Pod("ns", "p", "", "")
	p.Spec.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []api.PreferredSchedulingTerm{
		{Weight: 30, Preference: api.NodeSelectorTerm{MatchExpressions: []api.NodeSelectorRequirement{req("zone", "Exists")}}},
		{Weight: 10, Preference: api.NodeSelectorTerm{MatchExpressions: []api.NodeSelectorRequirement{req("disk", "In", "ssd")}}},
	}}}
	got := schedtest.Score(nodeaffinity.Plugin{}, p, a, b, c)
	want := map[string]int64{"a": 100, "b": 75, "c": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("score[%s] = %d, want %d", k, got[k], v)
		}
	}
	if got := schedtest.Score(nodeaffinity.Plugin{}, schedtest.Pod("ns", "q", "", ""), a, b); got != nil {
		t.Errorf("pod without preferences was scored: %v", got)
	}
}
