package volumerestrictions

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func podWith(name string, vols ...api.Volume) *api.Pod {
	p := schedtest.Pod("ns", name, "", "")
	p.UID = api.UID("uid-" + name)
	p.Spec.Volumes = vols
	return p
}

func claimVolume(claim string) api.Volume {
	return api.Volume{Name: claim, VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func gcePD(name string, readOnly bool) api.Volume {
	raw := `{"pdName":"` + name + `","readOnly":false}`
	if readOnly {
		raw = `{"pdName":"` + name + `","readOnly":true}`
	}
	return api.Volume{Name: "pd", VolumeSource: api.VolumeSource{GCEPersistentDisk: []byte(raw)}}
}

func TestVolumeRestrictions(t *testing.T) {
	t.Parallel()
	claims := icache.NewStore[api.PersistentVolumeClaim](nil)
	for name, mode := range map[string]api.PersistentVolumeAccessMode{"rwop": api.ReadWriteOncePod, "rwo": api.ReadWriteOnce} {
		claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name}, Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{mode}}})
	}
	lister := icache.NewLister(claims, apierrors.GroupResource{Resource: "persistentvolumeclaims"})
	busy := schedtest.NodeInfo(schedtest.Node("busy", "4", "8Gi", 110), podWith("user", claimVolume("rwop"), claimVolume("rwo"), gcePD("disk-1", true)))
	free := schedtest.NodeInfo(schedtest.Node("free", "4", "8Gi", 110))
	h := schedtest.Handle{Lister: schedtest.Lister{busy, free}}
	cases := []struct {
		name       string
		pod        *api.Pod
		busy, free string
	}{
		{"no volumes", podWith("p"), "", ""},
		{"missing claim", podWith("p", claimVolume("nope")), `persistentvolumeclaim "nope" not found`, `persistentvolumeclaim "nope" not found`},
		{"ReadWriteOncePod claim in use elsewhere", podWith("p", claimVolume("rwop")), ErrReasonReadWriteOncePodConflict, ErrReasonReadWriteOncePodConflict},
		{"ReadWriteOnce claim shared", podWith("p", claimVolume("rwo")), "", ""},
		{"same GCE disk read-write", podWith("p", gcePD("disk-1", false)), ErrReasonDiskConflict, ""},
		{"same GCE disk read-only twice", podWith("p", gcePD("disk-1", true)), "", ""},
		{"another GCE disk", podWith("p", gcePD("disk-2", false)), "", ""},
	}
	pl := New(lister, h)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []struct {
				ni   *framework.NodeInfo
				want string
			}{{busy, tc.busy}, {free, tc.free}} {
				if got := schedtest.Filter(pl, tc.pod, n.ni).Message(); got != n.want {
					t.Errorf("%s: %q, want %q", n.ni.Node().Name, got, n.want)
				}
			}
		})
	}
}
