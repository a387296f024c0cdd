package admission

import (
	"context"
	"errors"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// PersistentVolumeClaimResize is Kubernetes' admission plugin of that
// name: a claim's storage request may grow only once the claim is Bound,
// and only when its class (the same before and after) allows volume
// expansion. Shrinking, and the other spec fields, are validation's.
type PersistentVolumeClaimResize struct {
	Classes StorageClassLister
}

var _ Validator = (*PersistentVolumeClaimResize)(nil)

// Name implements Plugin.
func (*PersistentVolumeClaimResize) Name() string { return "PersistentVolumeClaimResize" }

// Handles implements Plugin: updates only.
func (*PersistentVolumeClaimResize) Handles(op Operation) bool { return op == Update }

// Validate implements Validator.
func (r *PersistentVolumeClaimResize) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "persistentvolumeclaims" || a.Subresource != "" {
		return nil
	}
	claim, ok := a.Object.(*api.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	old, ok := a.OldObject.(*api.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	newSize := claim.Spec.Resources.Requests[api.ResourceStorage]
	if newSize.Cmp(old.Spec.Resources.Requests[api.ResourceStorage]) <= 0 {
		return nil
	}
	if old.Status.Phase != api.ClaimBound {
		return NewForbidden(a, errors.New("Only bound persistent volume claims can be expanded"))
	}
	if !r.allowResize(ctx, claim, old) {
		return NewForbidden(a, errors.New("only dynamically provisioned pvc can be resized and "+
			"the storageclass that provisions the pvc must support resize"))
	}
	return nil
}

// allowResize: both versions name the same class, which exists and sets
// allowVolumeExpansion. A class that cannot be read refuses, as kube's
// lister miss does.
func (r *PersistentVolumeClaimResize) allowResize(ctx context.Context, claim, old *api.PersistentVolumeClaim) bool {
	name := storagevolume.ClaimClass(claim)
	if name == "" || name != storagevolume.ClaimClass(old) {
		return false
	}
	classes, err := r.Classes.ListStorageClasses(ctx)
	if err != nil {
		return false
	}
	for _, c := range classes {
		if c.Name == name {
			return c.AllowVolumeExpansion != nil && *c.AllowVolumeExpansion
		}
	}
	return false
}
