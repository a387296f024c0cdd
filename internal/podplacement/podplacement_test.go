package podplacement

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestToleratesTaint(t *testing.T) {
	taint := api.Taint{Key: "zone", Value: "5", Effect: api.TaintEffectNoSchedule}
	cases := []struct {
		name string
		tol  api.Toleration
		want bool
	}{
		{"equal value", api.Toleration{Key: "zone", Value: "5", Effect: api.TaintEffectNoSchedule}, true},
		{"empty operator is Equal", api.Toleration{Key: "zone", Value: "6"}, false},
		{"other effect", api.Toleration{Key: "zone", Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute}, false},
		{"empty effect matches all", api.Toleration{Key: "zone", Operator: api.TolerationOpExists}, true},
		{"empty key with Exists matches every key", api.Toleration{Operator: api.TolerationOpExists}, true},
		{"other key", api.Toleration{Key: "rack", Operator: api.TolerationOpExists}, false},
		{"Lt above the value", api.Toleration{Key: "zone", Operator: api.TolerationOpLt, Value: "7"}, true},
		{"Lt at the value", api.Toleration{Key: "zone", Operator: api.TolerationOpLt, Value: "5"}, false},
		{"Gt below the value", api.Toleration{Key: "zone", Operator: api.TolerationOpGt, Value: "4"}, true},
		{"Gt not a number", api.Toleration{Key: "zone", Operator: api.TolerationOpGt, Value: "x"}, false},
	}
	for _, c := range cases {
		if got := ToleratesTaint(&c.tol, &taint); got != c.want {
			t.Errorf("%s: ToleratesTaint = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFindUntoleratedTaint(t *testing.T) {
	taints := []api.Taint{
		{Key: "soft", Effect: api.TaintEffectPreferNoSchedule},
		{Key: "a", Effect: api.TaintEffectNoSchedule},
		{Key: "b", Effect: api.TaintEffectNoExecute},
	}
	tols := []api.Toleration{{Key: "a", Operator: api.TolerationOpExists}}
	got, ok := FindUntoleratedTaint(taints, tols, api.TaintEffectNoSchedule, api.TaintEffectNoExecute)
	if !ok || got.Key != "b" {
		t.Fatalf("FindUntoleratedTaint = %v, %v; want taint b", got, ok)
	}
	if _, ok := FindUntoleratedTaint(taints, tols, api.TaintEffectNoSchedule); ok {
		t.Fatal("the only NoSchedule taint is tolerated, yet one was reported")
	}
}

func TestMatches(t *testing.T) {
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1", Labels: map[string]string{"disk": "ssd", "cpus": "8"}}}
	req := func(terms ...api.NodeSelectorTerm) *api.Affinity {
		return &api.Affinity{NodeAffinity: &api.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{NodeSelectorTerms: terms}}}
	}
	expr := func(key string, op api.NodeSelectorOperator, values ...string) api.NodeSelectorTerm {
		return api.NodeSelectorTerm{MatchExpressions: []api.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	cases := []struct {
		name string
		spec api.PodSpec
		want bool
	}{
		{"no constraints", api.PodSpec{}, true},
		{"nodeSelector matches", api.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}, true},
		{"nodeSelector misses", api.PodSpec{NodeSelector: map[string]string{"disk": "hdd"}}, false},
		{"In", api.PodSpec{Affinity: req(expr("disk", api.NodeSelectorOpIn, "ssd", "nvme"))}, true},
		{"NotIn of an absent label", api.PodSpec{Affinity: req(expr("gpu", api.NodeSelectorOpNotIn, "a100"))}, true},
		{"Gt", api.PodSpec{Affinity: req(expr("cpus", api.NodeSelectorOpGt, "4"))}, true},
		{"Lt", api.PodSpec{Affinity: req(expr("cpus", api.NodeSelectorOpLt, "4"))}, false},
		{"terms are ORed", api.PodSpec{Affinity: req(expr("gpu", api.NodeSelectorOpExists), expr("disk", api.NodeSelectorOpExists))}, true},
		{"an empty term matches nothing", api.PodSpec{Affinity: req(api.NodeSelectorTerm{})}, false},
		{"metadata.name field", api.PodSpec{Affinity: req(api.NodeSelectorTerm{MatchFields: []api.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: api.NodeSelectorOpIn, Values: []string{"n1"}}}})}, true},
		{"another field", api.PodSpec{Affinity: req(api.NodeSelectorTerm{MatchFields: []api.NodeSelectorRequirement{
			{Key: "metadata.uid", Operator: api.NodeSelectorOpExists}}})}, false},
		{"selector and affinity both apply", api.PodSpec{NodeSelector: map[string]string{"disk": "hdd"},
			Affinity: req(expr("disk", api.NodeSelectorOpExists))}, false},
	}
	for _, c := range cases {
		pod := &api.Pod{Spec: c.spec}
		if got := Matches(pod, node); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
	}
}
