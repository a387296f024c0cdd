package admission

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

type classList []*api.StorageClass

func (l classList) ListStorageClasses(context.Context) ([]*api.StorageClass, error) { return l, nil }

// TestDefaultStorageClass: a claim without a class gets the newest default
// class; a claim naming a class (even "", or through the beta annotation)
// keeps it; no default class leaves the claim alone; other resources and
// subresources are not touched.
func TestDefaultStorageClass(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	classes := classList{
		{ObjectMeta: api.ObjectMeta{Name: "old", CreationTimestamp: api.Time{Time: t0}, Annotations: map[string]string{api.IsDefaultStorageClassAnnotation: "true"}}},
		{ObjectMeta: api.ObjectMeta{Name: "new", CreationTimestamp: api.Time{Time: t0.Add(time.Minute)}, Annotations: map[string]string{api.IsDefaultStorageClassAnnotation: "true"}}},
		{ObjectMeta: api.ObjectMeta{Name: "newest", CreationTimestamp: api.Time{Time: t0.Add(time.Hour)}}},
	}
	empty, gold := "", "gold"
	pvcs := api.ResourceInfo{Version: "v1", Resource: "persistentvolumeclaims"}
	tests := []struct {
		name    string
		classes classList
		res     api.ResourceInfo
		sub     string
		class   *string
		ann     map[string]string
		want    *string
	}{
		{"defaulted to the newest default", classes, pvcs, "", nil, nil, &[]string{"new"}[0]},
		{"explicit class kept", classes, pvcs, "", &gold, nil, &gold},
		{"explicit empty class kept", classes, pvcs, "", &empty, nil, &empty},
		{"beta annotation counts", classes, pvcs, "", nil, map[string]string{"volume.beta.kubernetes.io/storage-class": "x"}, nil},
		{"no default class", classes[2:], pvcs, "", nil, nil, nil},
		{"status subresource", classes, pvcs, "status", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claim := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "c", Annotations: tt.ann}, Spec: api.PersistentVolumeClaimSpec{StorageClassName: tt.class}}
			p := &DefaultStorageClass{Classes: tt.classes}
			if !p.Handles(Create) || p.Handles(Update) {
				t.Fatal("DefaultStorageClass handles creates only")
			}
			if err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: tt.res, Subresource: tt.sub, Object: claim}); err != nil {
				t.Fatal(err)
			}
			got := claim.Spec.StorageClassName
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("class %v, want %v", deref(got), deref(tt.want))
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestStorageObjectInUseProtection: the protection finalizer of each kind,
// once, after those the object has.
func TestStorageObjectInUseProtection(t *testing.T) {
	tests := []struct {
		res  api.ResourceInfo
		sub  string
		obj  api.Object
		have []string
		want []string
	}{
		{api.ResourceInfo{Resource: "persistentvolumeclaims"}, "", &api.PersistentVolumeClaim{}, []string{"x/y"}, []string{"x/y", api.PVCProtectionFinalizer}},
		{api.ResourceInfo{Resource: "persistentvolumeclaims"}, "", &api.PersistentVolumeClaim{}, []string{api.PVCProtectionFinalizer}, []string{api.PVCProtectionFinalizer}},
		{api.ResourceInfo{Resource: "persistentvolumes"}, "", &api.PersistentVolume{}, nil, []string{api.PVProtectionFinalizer}},
		{api.ResourceInfo{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}, "", &api.VolumeAttributesClass{}, nil, []string{api.VACProtectionFinalizer}},
		{api.ResourceInfo{Resource: "persistentvolumes"}, "status", &api.PersistentVolume{}, nil, nil},
		{api.ResourceInfo{Resource: "pods"}, "", &api.Pod{}, nil, nil},
	}
	p := &StorageObjectInUseProtection{}
	for _, tt := range tests {
		tt.obj.GetObjectMeta().Finalizers = tt.have
		if err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: tt.res, Subresource: tt.sub, Object: tt.obj}); err != nil {
			t.Fatal(err)
		}
		if got := tt.obj.GetObjectMeta().Finalizers; !slices.Equal(got, tt.want) {
			t.Errorf("%s/%s: finalizers %v, want %v", tt.res.Resource, tt.sub, got, tt.want)
		}
	}
}
