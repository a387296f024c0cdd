package validation

import (
	"sort"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/resource"
)

// matches reports whether got is want, where a "..." in want stands for
// any text.
func matches(got, want string) bool {
	before, after, glob := strings.Cut(want, "...")
	if !glob {
		return got == want
	}
	return len(got) >= len(before)+len(after) && strings.HasPrefix(got, before) && strings.HasSuffix(got, after)
}

// checkErrs compares errors with the wanted renderings ("path: Type: value:
// detail"). A "..." in a wanted string matches any text. Both sides
// must have the same number of entries, so an unexpected extra error fails.
func checkErrs(t *testing.T, name string, got field.ErrorList, want []string) {
	t.Helper()
	var gotS []string
	for _, e := range got {
		gotS = append(gotS, e.Error())
	}
	sort.Strings(gotS)
	remaining := append([]string(nil), gotS...)
	var missing []string
	for _, w := range want {
		found := -1
		for i, g := range remaining {
			if matches(g, w) {
				found = i
				break
			}
		}
		if found < 0 {
			missing = append(missing, w)
			continue
		}
		remaining = append(remaining[:found], remaining[found+1:]...)
	}
	if len(missing) > 0 || len(remaining) > 0 {
		t.Errorf("%s:\n  missing: %q\n  unexpected: %q", name, missing, remaining)
	}
}

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func validPod() *api.Pod {
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{
			Containers: []api.Container{{
				Name: "nginx", Image: "nginx:1.25",
				Ports:          []api.ContainerPort{{Name: "http", ContainerPort: 80}},
				Resources:      api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: q("100m")}, Limits: api.ResourceList{api.ResourceCPU: q("1")}},
				VolumeMounts:   []api.VolumeMount{{Name: "data", MountPath: "/data"}},
				ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Port: api.FromString("http")}}},
				Env:            []api.EnvVar{{Name: "MODE", Value: "prod"}},
			}},
			Volumes: []api.Volume{{Name: "data"}},
		},
	}
	defaults.Default(p)
	return p
}

func validTemplate() api.PodTemplateSpec {
	p := validPod()
	return api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: p.Spec}
}

func validDeployment() *api.Deployment {
	d := &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.DeploymentSpec{
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: validTemplate(),
		},
	}
	d.Spec.Template.Spec.EnableServiceLinks = nil
	defaults.Default(d)
	return d
}

func validReplicaSet() *api.ReplicaSet {
	rs := &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "web-abc", Namespace: "default"},
		Spec: api.ReplicaSetSpec{
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: validTemplate(),
		},
	}
	defaults.Default(rs)
	return rs
}

func validJob() *api.Job {
	j := &api.Job{
		ObjectMeta: api.ObjectMeta{Name: "pi", Namespace: "default", UID: "uid-1"},
		Spec:       api.JobSpec{Template: validTemplate()},
	}
	j.Spec.Template.Spec.RestartPolicy = api.RestartPolicyNever
	defaults.DefaultCreate(j)
	defaults.GenerateJobSelector(j)
	return j
}

func validService() *api.Service {
	s := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromString("http")}},
		},
	}
	defaults.Default(s)
	return s
}

func validNode() *api.Node {
	n := &api.Node{
		ObjectMeta: api.ObjectMeta{Name: "node-1"},
		Spec:       api.NodeSpec{PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24"}},
		Status: api.NodeStatus{Capacity: api.ResourceList{api.ResourceCPU: q("4"), api.ResourceMemory: q("8Gi"), api.ResourcePods: q("110")},
			Addresses: []api.NodeAddress{{Type: api.NodeInternalIP, Address: "10.0.0.1"}}},
	}
	defaults.Default(n)
	return n
}
