package admission

import (
	"context"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// StorageClassLister lists the StorageClasses for DefaultStorageClass.
type StorageClassLister interface {
	ListStorageClasses(ctx context.Context) ([]*api.StorageClass, error)
}

// DefaultStorageClass is Kubernetes' DefaultStorageClass admission plugin:
// a claim created without a class (no spec.storageClassName and no beta
// annotation) gets the default class, the newest class annotated
// storageclass.kubernetes.io/is-default-class=true. No default class
// leaves the claim alone; the PV controller assigns one retroactively
// when a default appears.
type DefaultStorageClass struct {
	Classes StorageClassLister
}

var _ Mutator = (*DefaultStorageClass)(nil)

// Name implements Plugin.
func (*DefaultStorageClass) Name() string { return "DefaultStorageClass" }

// Handles implements Plugin: creates only.
func (*DefaultStorageClass) Handles(op Operation) bool { return op == Create }

// Admit implements Mutator.
func (d *DefaultStorageClass) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "persistentvolumeclaims" || a.Subresource != "" {
		return nil
	}
	claim, ok := a.Object.(*api.PersistentVolumeClaim)
	if !ok || storagevolume.ClaimHasClass(claim) {
		return nil
	}
	classes, err := d.Classes.ListStorageClasses(ctx)
	if err != nil {
		return NewForbidden(a, err)
	}
	if def := storagevolume.DefaultClass(classes); def != nil {
		name := def.Name
		claim.Spec.StorageClassName = &name
	}
	return nil
}

// StorageObjectInUseProtection is Kubernetes' admission plugin of the same
// name: every PersistentVolumeClaim, PersistentVolume and
// VolumeAttributesClass is created with its protection finalizer
// (kubernetes.io/pvc-protection, pv-protection, vac-protection), which the
// protection controllers remove once nothing uses the object, so that a
// claim in use by a pod or a bound volume outlives its deletion until then.
type StorageObjectInUseProtection struct{}

var _ Mutator = (*StorageObjectInUseProtection)(nil)

// Name implements Plugin.
func (*StorageObjectInUseProtection) Name() string { return "StorageObjectInUseProtection" }

// Handles implements Plugin: creates only.
func (*StorageObjectInUseProtection) Handles(op Operation) bool { return op == Create }

// Admit implements Mutator.
func (*StorageObjectInUseProtection) Admit(_ context.Context, a *Attributes) error {
	if a.Subresource != "" || a.Object == nil {
		return nil
	}
	var finalizer string
	switch {
	case a.Resource.Group == "" && a.Resource.Resource == "persistentvolumeclaims":
		finalizer = api.PVCProtectionFinalizer
	case a.Resource.Group == "" && a.Resource.Resource == "persistentvolumes":
		finalizer = api.PVProtectionFinalizer
	case a.Resource.Group == "storage.k8s.io" && a.Resource.Resource == "volumeattributesclasses":
		finalizer = api.VACProtectionFinalizer
	default:
		return nil
	}
	meta := a.Object.GetObjectMeta()
	if !slices.Contains(meta.Finalizers, finalizer) {
		meta.Finalizers = append(meta.Finalizers, finalizer)
	}
	return nil
}
