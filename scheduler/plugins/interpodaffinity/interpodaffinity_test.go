package interpodaffinity_test

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/interpodaffinity"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func labeled(name string, kv ...string) *api.Pod {
	p := schedtest.Pod("ns", name, "", "")
	p.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	return p
}

func term(key, app string) api.PodAffinityTerm {
	return api.PodAffinityTerm{TopologyKey: key, LabelSelector: &api.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func anti(p *api.Pod, terms ...api.PodAffinityTerm) *api.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &api.Affinity{}
	}
	p.Spec.Affinity.PodAntiAffinity = &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	return p
}

func affine(p *api.Pod, terms ...api.PodAffinityTerm) *api.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &api.Affinity{}
	}
	p.Spec.Affinity.PodAffinity = &api.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	return p
}

func TestFilter(t *testing.T) {
	zoneNode := func(name, zone string) *api.Node {
		return schedtest.WithLabels(schedtest.Node(name, "4", "8Gi", 110), api.LabelTopologyZone, zone)
	}
	cases := []struct {
		name string
		// placed maps node name to its pods; nodes n1 (zone a), n2 (zone a), n3 (zone b).
		placed map[string][]*api.Pod
		pod    *api.Pod
		// want maps node name to the failure reason ("" for a fit).
		want map[string]string
	}{
		{"no terms anywhere", map[string][]*api.Pod{"n1": {labeled("w", "app", "web")}}, labeled("p", "app", "web"),
			map[string]string{"n1": "", "n2": "", "n3": ""}},
		{"anti-affinity on hostname", map[string][]*api.Pod{"n1": {labeled("w", "app", "web")}}, anti(labeled("p", "app", "web"), term(api.LabelHostname, "web")),
			map[string]string{"n1": interpodaffinity.ErrReasonAntiAffinityRulesNotMatch, "n2": "", "n3": ""}},
		{"anti-affinity on zone", map[string][]*api.Pod{"n1": {labeled("w", "app", "web")}}, anti(labeled("p", "app", "web"), term(api.LabelTopologyZone, "web")),
			map[string]string{"n1": interpodaffinity.ErrReasonAntiAffinityRulesNotMatch, "n2": interpodaffinity.ErrReasonAntiAffinityRulesNotMatch, "n3": ""}},
		{"anti-affinity other namespace does not count", map[string][]*api.Pod{"n1": {func() *api.Pod { p := labeled("w", "app", "web"); p.Namespace = "other"; return p }()}},
			anti(labeled("p", "app", "web"), term(api.LabelHostname, "web")), map[string]string{"n1": ""}},
		{"existing pod's anti-affinity", map[string][]*api.Pod{"n2": {anti(labeled("db", "app", "db"), term(api.LabelHostname, "web"))}}, labeled("p", "app", "web"),
			map[string]string{"n1": "", "n2": interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch, "n3": ""}},
		{"affinity to a zone", map[string][]*api.Pod{"n3": {labeled("c", "app", "cache")}}, affine(labeled("p", "app", "web"), term(api.LabelTopologyZone, "cache")),
			map[string]string{"n1": interpodaffinity.ErrReasonAffinityRulesNotMatch, "n3": ""}},
		{"affinity with no match anywhere, pod not self-matching", nil, affine(labeled("p", "app", "web"), term(api.LabelHostname, "cache")),
			map[string]string{"n1": interpodaffinity.ErrReasonAffinityRulesNotMatch}},
		{"first pod of a self-affine group", nil, affine(labeled("p", "app", "web"), term(api.LabelHostname, "web")),
			map[string]string{"n1": "", "n2": "", "n3": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			infos := map[string]*framework.NodeInfo{}
			var lister schedtest.Lister
			for _, nz := range [][2]string{{"n1", "a"}, {"n2", "a"}, {"n3", "b"}} {
				var pods []*api.Pod
				for _, p := range tc.placed[nz[0]] {
					pods = append(pods, schedtest.OnNode(p, nz[0]))
				}
				infos[nz[0]] = schedtest.NodeInfo(zoneNode(nz[0], nz[1]), pods...)
				lister = append(lister, infos[nz[0]])
			}
			pl := interpodaffinity.New(schedtest.Handle{Lister: lister})
			for node, want := range tc.want {
				if got := schedtest.Filter(pl, tc.pod, infos[node]).Message(); got != want {
					t.Errorf("node %s: got %q, want %q", node, got, want)
				}
			}
		})
	}
}

func TestScorePreferredAntiAffinity(t *testing.T) {
	n1 := schedtest.NodeInfo(schedtest.Node("n1", "4", "8Gi", 110), schedtest.OnNode(labeled("w", "app", "web"), "n1"))
	n2 := schedtest.NodeInfo(schedtest.Node("n2", "4", "8Gi", 110))
	pl := interpodaffinity.New(schedtest.Handle{Lister: schedtest.Lister{n1, n2}})
	p := labeled("p", "app", "web")
	p.Spec.Affinity = &api.Affinity{PodAntiAffinity: &api.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []api.WeightedPodAffinityTerm{
		{Weight: 50, PodAffinityTerm: term(api.LabelHostname, "web")},
	}}}
	got := schedtest.Score(pl, p, n1, n2)
	if got["n1"] != 0 || got["n2"] != 100 {
		t.Errorf("scores = %v, want n1 0, n2 100", got)
	}
}
