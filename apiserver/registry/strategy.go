package registry

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/validation"
)

// Strategy is what differs between kinds in create, update and delete.
// Kinds embed BaseStrategy and override what they need.
type Strategy interface {
	// DefaultCreate fills in defaults of a new object, as Kubernetes does
	// when it decodes a create (and what its registries set only on create).
	DefaultCreate(obj api.Object)
	// DefaultUpdate fills in defaults of a replacement of old, keeping what
	// the server allocated and the client left out.
	DefaultUpdate(obj, old api.Object)
	// PrepareForCreate clears or sets fields a client may not choose on create.
	PrepareForCreate(ctx context.Context, obj api.Object)
	// PrepareForUpdate carries over from old what a client may not change.
	PrepareForUpdate(ctx context.Context, obj, old api.Object)
	Validate(ctx context.Context, obj api.Object) field.ErrorList
	ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList
	// AllowCreateOnUpdate says whether PUT of a missing object creates it.
	AllowCreateOnUpdate() bool
	// AllowUnconditionalUpdate says whether PUT without resourceVersion is allowed.
	AllowUnconditionalUpdate() bool
	// Fields returns the object's selectable fields besides metadata.name and
	// metadata.namespace, which every kind has.
	Fields(obj api.Object) map[string]string
}

// StatusStrategy is implemented by kinds whose /status subresource needs
// more than "take the new status, keep everything else".
type StatusStrategy interface {
	PrepareForStatusUpdate(ctx context.Context, obj, old api.Object)
	ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList
}

// StatusSubresources is implemented by kinds with a status-like
// subresource of their own besides /status (a CSR's /approval): an update
// through it keeps everything of the stored object but the status, labels
// and annotations, as /status does, under the rules StatusSubresource
// returns for it (false for any other subresource).
type StatusSubresources interface {
	StatusSubresource(sub string) (StatusStrategy, bool)
}

// GracefulStrategy is implemented by kinds with graceful deletion (pods).
// GracePeriod returns the period to wait before the object is removed, and
// false when the object must be deleted at once.
type GracefulStrategy interface {
	GracePeriod(obj api.Object, opts *api.DeleteOptions) (int64, bool)
}

// BaseStrategy is the behaviour most kinds share.
type BaseStrategy struct {
	// CreateOnUpdate and Unconditional answer AllowCreateOnUpdate and
	// AllowUnconditionalUpdate.
	CreateOnUpdate bool
	Conditional    bool
}

var _ Strategy = BaseStrategy{}

// DefaultCreate implements Strategy with the api/defaults rules.
func (BaseStrategy) DefaultCreate(obj api.Object) { defaults.DefaultCreate(obj) }

// DefaultUpdate implements Strategy with the api/defaults rules.
func (BaseStrategy) DefaultUpdate(obj, old api.Object) { defaults.DefaultUpdate(obj, old) }

// PrepareForCreate implements Strategy: the status of a new object is the
// server's to set, so it starts empty for kinds with a status subresource.
func (BaseStrategy) PrepareForCreate(ctx context.Context, obj api.Object) { resetStatus(obj) }

// PrepareForUpdate implements Strategy; the generic rules live in Store.
func (BaseStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {}

// Validate implements Strategy with the api/validation rules.
func (BaseStrategy) Validate(ctx context.Context, obj api.Object) field.ErrorList {
	return validation.Validate(obj)
}

// ValidateUpdate implements Strategy with the api/validation rules.
func (BaseStrategy) ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return validation.ValidateUpdate(obj, old)
}

// AllowCreateOnUpdate implements Strategy.
func (s BaseStrategy) AllowCreateOnUpdate() bool { return s.CreateOnUpdate }

// AllowUnconditionalUpdate implements Strategy.
func (s BaseStrategy) AllowUnconditionalUpdate() bool { return !s.Conditional }

// Fields implements Strategy: no fields beyond metadata.
func (BaseStrategy) Fields(obj api.Object) map[string]string { return nil }

// UnknownFieldFinder is implemented by kinds whose schema is known only
// at run time (custom resources): UnknownFields returns the paths
// ("spec.foo", "metadata.bar") of the fields of obj, an object as a
// request sent it, that the kind does not know, in kube-apiserver's order,
// for fieldValidation. Other kinds' fields are those of Kubernetes' own
// types (package fieldvalidation).
type UnknownFieldFinder interface {
	UnknownFields(obj map[string]any) []string
}

// ReadNormalizer is implemented by kinds whose schema can change under
// stored objects (custom resources): NormalizeRead prunes and defaults an
// object read from storage as the schema now says, as kube-apiserver does
// when it decodes from etcd, and reports whether it changed anything.
type ReadNormalizer interface {
	NormalizeRead(obj api.Object) bool
}

// DeletionPreparer is implemented by kinds that change an object when its
// deletion starts (a CustomResourceDefinition gets the finalizer that
// deletes its objects first, and a Terminating condition); a finalizer it
// adds makes the deletion wait for it.
type DeletionPreparer interface {
	PrepareForDelete(obj api.Object)
}

// DeletedObjectReturner is implemented by kinds whose DELETE answers with the
// deleted object rather than a Status (pods, like Kubernetes).
type DeletedObjectReturner interface {
	ReturnDeletedObject() bool
}

var _ StatusStrategy = BaseStrategy{}

// PrepareForStatusUpdate implements StatusStrategy; the generic rules live in Store.
func (BaseStrategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {}

// ValidateStatusUpdate implements StatusStrategy with the api/validation rules.
func (BaseStrategy) ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return validation.ValidateStatusUpdate(obj, old)
}

// ValueTransformer encrypts stored values and decrypts them back; the
// authenticated data is the value's etcd key.
type ValueTransformer interface {
	TransformToStorage(plain, authenticatedData []byte) ([]byte, error)
	TransformFromStorage(stored, authenticatedData []byte) ([]byte, error)
}
