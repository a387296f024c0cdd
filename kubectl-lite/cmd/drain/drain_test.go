package drain

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	yes := true
	owned := func(kind string) []api.OwnerReference {
		return []api.OwnerReference{{Kind: kind, Name: "x", Controller: &yes}}
	}
	emptyDir := []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}}
	tests := []struct {
		name string
		pod  api.Pod
		opts Options
		want verdict
	}{
		{"replicaset pod", api.Pod{ObjectMeta: api.ObjectMeta{OwnerReferences: owned("ReplicaSet")}}, Options{}, verdict{}},
		{"daemonset refused", api.Pod{ObjectMeta: api.ObjectMeta{OwnerReferences: owned("DaemonSet")}}, Options{},
			verdict{fail: "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"}},
		{"daemonset ignored", api.Pod{ObjectMeta: api.ObjectMeta{OwnerReferences: owned("DaemonSet")}}, Options{IgnoreDaemonSets: true},
			verdict{skip: true, warnings: []string{"ignoring DaemonSet-managed Pods"}}},
		{"mirror skipped", api.Pod{ObjectMeta: api.ObjectMeta{Annotations: map[string]string{api.MirrorPodAnnotationKey: "x"}}}, Options{}, verdict{skip: true}},
		{"bare refused", api.Pod{}, Options{}, verdict{fail: "cannot delete Pods that declare no controller (use --force to override)"}},
		{"bare forced", api.Pod{}, Options{Force: true}, verdict{warnings: []string{"deleting Pods that declare no controller"}}},
		{"bare but finished", api.Pod{Status: api.PodStatus{Phase: api.PodSucceeded}}, Options{}, verdict{}},
		{"emptyDir refused first", api.Pod{Spec: api.PodSpec{Volumes: emptyDir}}, Options{},
			verdict{fail: "cannot delete Pods with local storage (use --delete-emptydir-data to override)"}},
		{"emptyDir allowed, then bare refused", api.Pod{Spec: api.PodSpec{Volumes: emptyDir}}, Options{DeleteEmptyDirData: true},
			verdict{fail: "cannot delete Pods that declare no controller (use --force to override)"}},
		{"emptyDir and bare allowed", api.Pod{Spec: api.PodSpec{Volumes: emptyDir}}, Options{DeleteEmptyDirData: true, Force: true},
			verdict{warnings: []string{"deleting Pods with local storage", "deleting Pods that declare no controller"}}},
	}
	for _, tt := range tests {
		got := check(&tt.pod, tt.opts)
		if got.skip != tt.want.skip || got.fail != tt.want.fail || len(got.warnings) != len(tt.want.warnings) {
			t.Errorf("%s: check = %+v, want %+v", tt.name, got, tt.want)
			continue
		}
		for i := range got.warnings {
			if got.warnings[i] != tt.want.warnings[i] {
				t.Errorf("%s: warnings %v, want %v", tt.name, got.warnings, tt.want.warnings)
			}
		}
	}
}
