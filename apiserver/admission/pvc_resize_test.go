package admission

import (
	"context"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
)

func TestPersistentVolumeClaimResize(t *testing.T) {
	yes, no := true, false
	p := &PersistentVolumeClaimResize{Classes: classList{
		{ObjectMeta: api.ObjectMeta{Name: "grows"}, AllowVolumeExpansion: &yes},
		{ObjectMeta: api.ObjectMeta{Name: "fixed"}, AllowVolumeExpansion: &no},
		{ObjectMeta: api.ObjectMeta{Name: "unset"}},
	}}
	claim := func(class *string, size string, phase api.PersistentVolumeClaimPhase) *api.PersistentVolumeClaim {
		return &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "data", Namespace: "default"},
			Spec: api.PersistentVolumeClaimSpec{StorageClassName: class,
				Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse(size)}}},
			Status: api.PersistentVolumeClaimStatus{Phase: phase}}
	}
	str := func(s string) *string { return &s }
	pvcs := api.ResourceInfo{Version: "v1", Resource: "persistentvolumeclaims"}
	const notBound = "Only bound persistent volume claims can be expanded"
	const noResize = "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
	for _, tt := range []struct {
		name     string
		sub      string
		old, new *api.PersistentVolumeClaim
		want     string
	}{
		{"grow, class allows", "", claim(str("grows"), "1Gi", api.ClaimBound), claim(str("grows"), "2Gi", api.ClaimBound), ""},
		{"same size", "", claim(str("fixed"), "1Gi", api.ClaimBound), claim(str("fixed"), "1Gi", api.ClaimBound), ""},
		{"shrink is validation's", "", claim(str("fixed"), "2Gi", api.ClaimBound), claim(str("fixed"), "1Gi", api.ClaimBound), ""},
		{"status write", "status", claim(str("fixed"), "1Gi", api.ClaimBound), claim(str("fixed"), "2Gi", api.ClaimBound), ""},
		{"pending", "", claim(str("grows"), "1Gi", api.ClaimPending), claim(str("grows"), "2Gi", api.ClaimPending), notBound},
		{"class forbids", "", claim(str("fixed"), "1Gi", api.ClaimBound), claim(str("fixed"), "2Gi", api.ClaimBound), noResize},
		{"class unset", "", claim(str("unset"), "1Gi", api.ClaimBound), claim(str("unset"), "2Gi", api.ClaimBound), noResize},
		{"no class", "", claim(str(""), "1Gi", api.ClaimBound), claim(str(""), "2Gi", api.ClaimBound), noResize},
		{"missing class", "", claim(str("gone"), "1Gi", api.ClaimBound), claim(str("gone"), "2Gi", api.ClaimBound), noResize},
		{"class changed", "", claim(str("fixed"), "1Gi", api.ClaimBound), claim(str("grows"), "2Gi", api.ClaimBound), noResize},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Validate(context.Background(), &Attributes{Operation: Update, Resource: pvcs, Subresource: tt.sub,
				Namespace: "default", Name: "data", Object: tt.new, OldObject: tt.old})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (!apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), ": "+tt.want)):
				t.Fatalf("got %v, want a Forbidden ending %q", err, tt.want)
			}
		})
	}
}
