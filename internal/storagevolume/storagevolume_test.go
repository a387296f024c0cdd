package storagevolume

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
)

func pv(name, class, size string, phase api.PersistentVolumePhase, modes ...api.PersistentVolumeAccessMode) *api.PersistentVolume {
	return &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.PersistentVolumeSpec{
			Capacity:         api.ResourceList{api.ResourceStorage: resource.MustParse(size)},
			AccessModes:      modes,
			StorageClassName: class,
		},
		Status: api.PersistentVolumeStatus{Phase: phase},
	}
}

func pinned(v *api.PersistentVolume, node string) *api.PersistentVolume {
	v.Spec.NodeAffinity = &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
		MatchExpressions: []api.NodeSelectorRequirement{{Key: api.LabelHostname, Operator: api.NodeSelectorOpIn, Values: []string{node}}},
	}}}}
	return v
}

func claim(class, size string, modes ...api.PersistentVolumeAccessMode) *api.PersistentVolumeClaim {
	return &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "data", UID: "uid-data"},
		Spec: api.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: &class,
			Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

func node(name string) *api.Node {
	return &api.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{api.LabelHostname: name}}}
}

func TestFindMatchingVolume(t *testing.T) {
	t.Parallel()
	rwo := api.ReadWriteOnce
	prebound := pv("prebound", "other", "1Gi", api.VolumeAvailable, rwo)
	prebound.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "data"}
	otherClaim := pv("taken", "local", "1Gi", api.VolumeAvailable, rwo)
	otherClaim.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "other"}
	cases := []struct {
		name    string
		claim   *api.PersistentVolumeClaim
		volumes []*api.PersistentVolume
		node    *api.Node
		delay   bool
		want    string
	}{
		{"smallest fitting of the class", claim("local", "1Gi", rwo), []*api.PersistentVolume{
			pv("big", "local", "10Gi", api.VolumeAvailable, rwo), pv("small", "local", "2Gi", api.VolumeAvailable, rwo),
			pv("tiny", "local", "500Mi", api.VolumeAvailable, rwo), pv("wrong-class", "fast", "1Gi", api.VolumeAvailable, rwo),
		}, node("a"), true, "small"},
		{"not Available", claim("local", "1Gi", rwo), []*api.PersistentVolume{pv("released", "local", "1Gi", api.VolumeReleased, rwo)}, node("a"), true, ""},
		{"access modes", claim("local", "1Gi", api.ReadWriteMany), []*api.PersistentVolume{pv("rwo", "local", "1Gi", api.VolumeAvailable, rwo)}, node("a"), true, ""},
		{"node affinity", claim("local", "1Gi", rwo), []*api.PersistentVolume{
			pinned(pv("on-b", "local", "1Gi", api.VolumeAvailable, rwo), "b"), pinned(pv("on-a", "local", "5Gi", api.VolumeAvailable, rwo), "a"),
		}, node("a"), true, "on-a"},
		{"pre-bound wins over class", claim("local", "1Gi", rwo), []*api.PersistentVolume{pv("free", "local", "1Gi", api.VolumeAvailable, rwo), prebound}, node("a"), true, "prebound"},
		{"claimed by another", claim("local", "1Gi", rwo), []*api.PersistentVolume{otherClaim}, node("a"), true, ""},
		{"delay binding without node", claim("local", "1Gi", rwo), []*api.PersistentVolume{pv("free", "local", "1Gi", api.VolumeAvailable, rwo)}, nil, true, ""},
		{"immediate without node", claim("local", "1Gi", rwo), []*api.PersistentVolume{pv("free", "local", "1Gi", api.VolumeAvailable, rwo)}, nil, false, "free"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindMatchingVolume(tc.claim, tc.volumes, tc.node, nil, tc.delay)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want {
				t.Errorf("FindMatchingVolume = %q, want %q", name, tc.want)
			}
		})
	}
}

func TestBindVolumeToClaim(t *testing.T) {
	t.Parallel()
	v := pv("v", "local", "1Gi", api.VolumeAvailable)
	c := claim("local", "1Gi")
	got, dirty := BindVolumeToClaim(v, c)
	if !dirty || got.Spec.ClaimRef == nil || got.Spec.ClaimRef.UID != c.UID || got.Annotations[AnnBoundByController] != "yes" {
		t.Fatalf("BindVolumeToClaim = %+v (dirty %v), want claimRef with uid and bound-by-controller", got, dirty)
	}
	if v.Spec.ClaimRef != nil {
		t.Error("the input volume was modified")
	}
	if _, dirty := BindVolumeToClaim(got, c); dirty {
		t.Error("binding an already bound volume again reported a change")
	}
}

func TestIsDelayBindingMode(t *testing.T) {
	t.Parallel()
	wffc, imm := api.VolumeBindingWaitForFirstConsumer, api.VolumeBindingImmediate
	classes := map[string]*api.StorageClass{
		"wffc": {ObjectMeta: api.ObjectMeta{Name: "wffc"}, VolumeBindingMode: &wffc},
		"imm":  {ObjectMeta: api.ObjectMeta{Name: "imm"}, VolumeBindingMode: &imm},
	}
	get := func(n string) (*api.StorageClass, error) {
		if c, ok := classes[n]; ok {
			return c, nil
		}
		return nil, apierrorsNotFound(n)
	}
	for class, want := range map[string]bool{"wffc": true, "imm": false, "missing": false, "": false} {
		got, err := IsDelayBindingMode(claim(class, "1Gi"), get)
		if err != nil || got != want {
			t.Errorf("class %q: IsDelayBindingMode = %v, %v; want %v", class, got, err, want)
		}
	}
}

func apierrorsNotFound(name string) error {
	return apierrors.NewNotFound(apierrors.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, name)
}
