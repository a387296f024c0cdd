package pods

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "y"}
	for in, want := range map[string]string{
		"plain":       "plain",
		"$(A)-$(B)":   "x-y",
		"$$(A)":       "$(A)",
		"$(MISSING)":  "$(MISSING)",
		"$(A":         "$(A",
		"cost $5":     "cost $5",
		"$(A)$(A)end": "xxend",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name   string
		res    api.ResourceRequirements
		quota  int64
		period uint64
		shares uint64
		memory int64
	}{
		{"none", api.ResourceRequirements{}, 0, 0, 2, 0},
		{"limits only", api.ResourceRequirements{Limits: api.ResourceList{api.ResourceCPU: q("500m"), api.ResourceMemory: q("64Mi")}}, 50000, 100000, 512, 64 << 20},
		{"requests", api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: q("2")}}, 0, 0, 2048, 0},
		{"tiny", api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: q("1m")}, Limits: api.ResourceList{api.ResourceCPU: q("1m")}}, 1000, 100000, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cgroupResources(tt.res)
			if r.CPUQuota != tt.quota || r.CPUPeriod != tt.period || r.CPUShares != tt.shares || r.MemoryLimit != tt.memory {
				t.Errorf("got %+v", r)
			}
		})
	}
}

func TestShouldRestartAndQOS(t *testing.T) {
	for _, tt := range []struct {
		p    api.RestartPolicy
		code int32
		want bool
	}{
		{api.RestartPolicyAlways, 0, true}, {"", 1, true}, {api.RestartPolicyOnFailure, 0, false},
		{api.RestartPolicyOnFailure, 2, true}, {api.RestartPolicyNever, 1, false},
	} {
		if got := shouldRestart(tt.p, tt.code); got != tt.want {
			t.Errorf("shouldRestart(%s, %d) = %v", tt.p, tt.code, got)
		}
	}
	q := resource.MustParse
	g := api.ResourceList{api.ResourceCPU: q("1"), api.ResourceMemory: q("1Gi")}
	for want, spec := range map[api.PodQOSClass]api.PodSpec{
		api.PodQOSBestEffort: {Containers: []api.Container{{}}},
		api.PodQOSGuaranteed: {Containers: []api.Container{{Resources: api.ResourceRequirements{Limits: g, Requests: g}}}},
		api.PodQOSBurstable:  {Containers: []api.Container{{Resources: api.ResourceRequirements{Requests: g}}}},
	} {
		if got := api.ComputePodQOS(&api.Pod{Spec: spec}); got != want {
			t.Errorf("qos %s, want %s", got, want)
		}
	}
}

// TestAPIDataVolumesMountReadOnly: configMap, secret, downwardAPI and
// projected volumes are read-only in the container whatever the mount
// says (CVE-2017-1002102); other volumes keep the mount's setting.
func TestAPIDataVolumesMountReadOnly(t *testing.T) {
	t.Parallel()
	m := &Manager{opts: Options{RootDir: t.TempDir()}}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{UID: "u"}, Spec: api.PodSpec{Volumes: []api.Volume{
		{Name: "cm", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{}}},
		{Name: "sec", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{}}},
		{Name: "down", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{}}},
		{Name: "proj", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{}}},
		{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
	}}}
	c := &api.Container{Name: "c", VolumeMounts: []api.VolumeMount{
		{Name: "cm", MountPath: "/cm"}, {Name: "sec", MountPath: "/sec"}, {Name: "down", MountPath: "/down"},
		{Name: "proj", MountPath: "/proj"}, {Name: "scratch", MountPath: "/scratch"},
	}}
	vols := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = "/host/" + v.Name
	}
	mounts, err := m.mounts(pod, c, vols, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mt := range mounts {
		if !strings.HasPrefix(mt.HostPath, "/host/") {
			continue // /etc/hosts and resolv.conf
		}
		if want := mt.ContainerPath != "/scratch"; mt.ReadOnly != want {
			t.Errorf("%s read-only %v, want %v", mt.ContainerPath, mt.ReadOnly, want)
		}
	}
}

// TestSubPathOf: subPath and subPathExpr are checked as kube's makeMounts
// checks them; subPathExpr expands from the container's environment and
// an unset or empty variable is an error, never the whole volume.
func TestSubPathOf(t *testing.T) {
	t.Parallel()
	env := []string{"POD_NAME=web-0", "NS=default", "EMPTY=", "UP=..", "ROOT=/etc"}
	for _, tc := range []struct {
		vm      api.VolumeMount
		want    string
		wantErr string
	}{
		{api.VolumeMount{}, "", ""},
		{api.VolumeMount{SubPath: "a/b"}, "a/b", ""},
		{api.VolumeMount{SubPath: "$(POD_NAME)"}, "$(POD_NAME)", ""}, // subPath is literal
		{api.VolumeMount{SubPath: "/etc"}, "", "error SubPath `/etc` must not be an absolute path"},
		{api.VolumeMount{SubPath: "a/../../b"}, "", "unable to provision SubPath `a/../../b`: must not contain '..'"},
		{api.VolumeMount{SubPath: "a..b/c.."}, "a..b/c..", ""},
		{api.VolumeMount{SubPathExpr: "$(NS)/$(POD_NAME)"}, "default/web-0", ""},
		{api.VolumeMount{SubPathExpr: "$$(POD_NAME)"}, "$(POD_NAME)", ""},
		{api.VolumeMount{SubPathExpr: "$(NOPE)/$(EMPTY)/$(NOPE)"}, "", "missing value for EMPTY, NOPE"},
		{api.VolumeMount{SubPathExpr: "$(UP)/x"}, "", "unable to provision SubPath `../x`: must not contain '..'"},
		{api.VolumeMount{SubPathExpr: "$(ROOT)"}, "", "error SubPath `/etc` must not be an absolute path"},
	} {
		got, err := subPathOf(tc.vm, env)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%+v: %q, %v; want error %q", tc.vm, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.vm, got, err, tc.want)
		}
	}
}
