package crd

import (
	"context"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// Strategy is the registry strategy of CustomResourceDefinitions.
type Strategy struct {
	registry.BaseStrategy
	now func() time.Time
}

// NewStrategy returns the CRD kind's strategy.
func NewStrategy() *Strategy {
	return &Strategy{BaseStrategy: registry.BaseStrategy{Conditional: true}, now: time.Now}
}

var (
	_ registry.Strategy         = (*Strategy)(nil)
	_ registry.StatusStrategy   = (*Strategy)(nil)
	_ registry.DeletionPreparer = (*Strategy)(nil)
)

// DefaultCreate applies the v1 defaults (scope, conversion strategy,
// schema defaults) and gives the schemas their canonical form.
func (s *Strategy) DefaultCreate(obj api.Object) { setDefaults(obj.(*api.CustomResourceDefinition)) }

// DefaultUpdate is DefaultCreate.
func (s *Strategy) DefaultUpdate(obj, old api.Object) {
	setDefaults(obj.(*api.CustomResourceDefinition))
}

func setDefaults(crd *api.CustomResourceDefinition) {
	v1, err := toV1(crd)
	if err != nil {
		return // validation reports what cannot be read
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	keep := *crd
	if err := fromV1(v1, crd); err != nil {
		*crd = keep
	}
}

// PrepareForCreate clears the status and records the storage version.
func (s *Strategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	crd := obj.(*api.CustomResourceDefinition)
	crd.Status = api.CustomResourceDefinitionStatus{}
	addStoredVersion(crd)
}

// PrepareForUpdate keeps the status (the store does) and records a new
// storage version.
func (s *Strategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	crd := obj.(*api.CustomResourceDefinition)
	crd.Status = old.(*api.CustomResourceDefinition).Status
	addStoredVersion(crd)
}

func addStoredVersion(crd *api.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			if !slices.Contains(crd.Status.StoredVersions, v.Name) {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			}
			break
		}
	}
}

// Validate is kube's CRD validation.
func (s *Strategy) Validate(ctx context.Context, obj api.Object) field.ErrorList {
	in, err := toInternal(obj.(*api.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValue, err.Error())}
	}
	return fieldErrors(validation.ValidateCustomResourceDefinition(ctx, in))
}

// ValidateUpdate is kube's CRD update validation.
func (s *Strategy) ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	in, err := toInternal(obj.(*api.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValue, err.Error())}
	}
	was, err := toInternal(old.(*api.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	return fieldErrors(validation.ValidateCustomResourceDefinitionUpdate(ctx, in, was))
}

// PrepareForStatusUpdate implements registry.StatusStrategy.
func (s *Strategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {}

// ValidateStatusUpdate is kube's validation of a CRD's status write.
func (s *Strategy) ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	in, err := toInternal(obj.(*api.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("status"), field.OmitValue, err.Error())}
	}
	was, err := toInternal(old.(*api.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("status"), err)}
	}
	return fieldErrors(validation.ValidateUpdateCustomResourceDefinitionStatus(ctx, in, was))
}

// PrepareForDelete adds the finalizer under which the CRD's objects are
// deleted first, and says so in a Terminating condition, as
// kube-apiserver's CRD registry does.
func (s *Strategy) PrepareForDelete(obj api.Object) {
	crd := obj.(*api.CustomResourceDefinition)
	if !slices.Contains(crd.Finalizers, api.CRDCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, api.CRDCleanupFinalizer)
	}
	setCondition(crd, api.CustomResourceDefinitionCondition{Type: api.CRDTerminating, Status: api.ConditionTrue,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"}, s.now())
}

// setCondition sets a condition, keeping its transition time when its
// status does not change.
func setCondition(crd *api.CustomResourceDefinition, c api.CustomResourceDefinitionCondition, now time.Time) {
	c.LastTransitionTime = api.NewTime(now)
	for i, old := range crd.Status.Conditions {
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		crd.Status.Conditions[i] = c
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}

// condition returns the CRD's condition of type t, if any.
func condition(crd *api.CustomResourceDefinition, t string) (api.CustomResourceDefinitionCondition, bool) {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return api.CustomResourceDefinitionCondition{}, false
}
