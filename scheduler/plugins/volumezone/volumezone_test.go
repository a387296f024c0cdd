package volumezone

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestVolumeZone(t *testing.T) {
	t.Parallel()
	claims := icache.NewStore[api.PersistentVolumeClaim](nil)
	volumes := icache.NewStore[api.PersistentVolume](nil)
	classes := icache.NewStore[api.StorageClass](nil)
	wffc := api.VolumeBindingWaitForFirstConsumer
	classes.Add(&api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "local"}, VolumeBindingMode: &wffc})
	bound := func(claim, pv string) {
		claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: claim}, Spec: api.PersistentVolumeClaimSpec{VolumeName: pv}})
	}
	bound("in-z1", "pv-z1")
	bound("in-z1-or-z2", "pv-z12")
	bound("beta-region", "pv-r1")
	bound("ghost", "nope")
	local := "local"
	claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "unbound"}, Spec: api.PersistentVolumeClaimSpec{StorageClassName: &local}})
	volumes.Add(&api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv-z1", Labels: map[string]string{api.LabelTopologyZone: "z1"}}})
	volumes.Add(&api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv-z12", Labels: map[string]string{api.LabelTopologyZone: "z1__z2"}}})
	volumes.Add(&api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv-r1", Labels: map[string]string{labelBetaRegion: "r1"}}})
	pl := New(Listers{
		Claims:  icache.NewLister(claims, apierrors.GroupResource{Resource: "persistentvolumeclaims"}),
		Volumes: icache.NewLister(volumes, apierrors.GroupResource{Resource: "persistentvolumes"}),
		Classes: icache.NewLister(classes, apierrors.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}),
	})
	z1 := schedtest.WithLabels(schedtest.Node("z1", "1", "1Gi", 10), api.LabelTopologyZone, "z1", api.LabelTopologyRegion, "r1")
	z2 := schedtest.WithLabels(schedtest.Node("z2", "1", "1Gi", 10), api.LabelTopologyZone, "z2", api.LabelTopologyRegion, "r2")
	plain := schedtest.Node("plain", "1", "1Gi", 10)
	cases := []struct {
		claim         string
		z1, z2, plain string
	}{
		{"in-z1", "", ErrReasonConflict, ""},
		{"in-z1-or-z2", "", "", ""},
		{"beta-region", "", ErrReasonConflict, ""},
		{"unbound", "", "", ""},
		{"ghost", `persistentvolume "nope" not found`, `persistentvolume "nope" not found`, `persistentvolume "nope" not found`},
		{"missing", `persistentvolumeclaim "missing" not found`, `persistentvolumeclaim "missing" not found`, `persistentvolumeclaim "missing" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.claim, func(t *testing.T) {
			pod := schedtest.Pod("ns", "p", "", "")
			pod.Spec.Volumes = []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: tc.claim}}}}
			for node, want := range map[*api.Node]string{z1: tc.z1, z2: tc.z2, plain: tc.plain} {
				if got := schedtest.Filter(pl, pod, schedtest.NodeInfo(node)).Message(); got != want {
					t.Errorf("%s: %q, want %q", node.Name, got, want)
				}
			}
		})
	}
}
