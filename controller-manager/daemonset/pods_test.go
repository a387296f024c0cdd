package daemonset

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestNodeShouldRunDaemonPod(t *testing.T) {
	t.Parallel()
	node := func(labels map[string]string, taints ...api.Taint) *api.Node {
		return &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1", Labels: labels}, Spec: api.NodeSpec{Taints: taints}}
	}
	ds := func(mutate func(*api.PodSpec)) *api.DaemonSet {
		d := &api.DaemonSet{Spec: api.DaemonSetSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "i"}}}}}}
		if mutate != nil {
			mutate(&d.Spec.Template.Spec)
		}
		return d
	}
	tests := []struct {
		name                    string
		ds                      *api.DaemonSet
		node                    *api.Node
		shouldRun, shouldContin bool
	}{
		{"plain", ds(nil), node(nil), true, true},
		{"selector matches", ds(func(s *api.PodSpec) { s.NodeSelector = map[string]string{"a": "b"} }), node(map[string]string{"a": "b"}), true, true},
		{"selector misses", ds(func(s *api.PodSpec) { s.NodeSelector = map[string]string{"a": "b"} }), node(nil), false, false},
		{"affinity misses", ds(func(s *api.PodSpec) {
			s.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{
				NodeSelectorTerms: []api.NodeSelectorTerm{{MatchExpressions: []api.NodeSelectorRequirement{{Key: "zone", Operator: api.NodeSelectorOpIn, Values: []string{"x"}}}}}}}}
		}), node(map[string]string{"zone": "y"}), false, false},
		{"affinity matches", ds(func(s *api.PodSpec) {
			s.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{
				NodeSelectorTerms: []api.NodeSelectorTerm{{MatchExpressions: []api.NodeSelectorRequirement{{Key: "zone", Operator: api.NodeSelectorOpIn, Values: []string{"x"}}}}}}}}
		}), node(map[string]string{"zone": "x"}), true, true},
		{"NoSchedule taint keeps running pods", ds(nil), node(nil, api.Taint{Key: "k", Effect: api.TaintEffectNoSchedule}), false, true},
		{"NoExecute taint evicts", ds(nil), node(nil, api.Taint{Key: "k", Effect: api.TaintEffectNoExecute}), false, false},
		{"tolerated", ds(func(s *api.PodSpec) { s.Tolerations = []api.Toleration{{Key: "k", Operator: api.TolerationOpExists}} }),
			node(nil, api.Taint{Key: "k", Effect: api.TaintEffectNoExecute}), true, true},
		{"not-ready tolerated automatically", ds(nil), node(nil, api.Taint{Key: api.TaintNodeNotReady, Effect: api.TaintEffectNoExecute}), true, true},
		{"unschedulable tolerated automatically", ds(nil), node(nil, api.Taint{Key: api.TaintNodeUnschedulable, Effect: api.TaintEffectNoSchedule}), true, true},
		{"network-unavailable only with hostNetwork", ds(nil), node(nil, api.Taint{Key: api.TaintNodeNetworkUnavailable, Effect: api.TaintEffectNoSchedule}), false, true},
		{"network-unavailable with hostNetwork", ds(func(s *api.PodSpec) { s.HostNetwork = true }),
			node(nil, api.Taint{Key: api.TaintNodeNetworkUnavailable, Effect: api.TaintEffectNoSchedule}), true, true},
	}
	for _, tt := range tests {
		run, cont := nodeShouldRunDaemonPod(tt.ds, tt.node)
		if run != tt.shouldRun || cont != tt.shouldContin {
			t.Errorf("%s: shouldRun %v shouldContinueRunning %v, want %v %v", tt.name, run, cont, tt.shouldRun, tt.shouldContin)
		}
	}
}

func TestPodTemplatePinsNode(t *testing.T) {
	t.Parallel()
	ds := &api.DaemonSet{Spec: api.DaemonSetSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{
		Affinity: &api.Affinity{NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{
			NodeSelectorTerms: []api.NodeSelectorTerm{{MatchExpressions: []api.NodeSelectorRequirement{{Key: "zone", Operator: api.NodeSelectorOpIn, Values: []string{"x"}}}}}}}}}}}}
	tmpl := podTemplate(ds, "h1", "n1")
	terms := tmpl.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || len(terms[0].MatchFields) != 1 ||
		terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != "n1" {
		t.Fatalf("terms %+v", terms)
	}
	if tmpl.Labels["controller-revision-hash"] != "h1" || len(tmpl.Spec.Tolerations) != 6 {
		t.Fatalf("labels %v tolerations %+v", tmpl.Labels, tmpl.Spec.Tolerations)
	}
	if targetNode(&api.Pod{Spec: tmpl.Spec}) != "n1" {
		t.Fatalf("targetNode does not read the pin")
	}
	// The DaemonSet's own template is untouched.
	if len(ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields) != 0 {
		t.Fatalf("template mutated")
	}
}
