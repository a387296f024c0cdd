package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
)

// NewControllerRef returns the reference a controller puts on what it
// creates or adopts: controller=true and blockOwnerDeletion=true, so
// foreground deletion of the owner waits for it.
func NewControllerRef(owner *api.ObjectMeta, apiVersion, kind string) api.OwnerReference {
	t := true
	return api.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: owner.Name, UID: owner.UID,
		Controller: &t, BlockOwnerDeletion: &t}
}

// RefManager adopts and releases the dependents (of type T) of one owner,
// as kube's BaseControllerRefManager: an object controlled by the owner
// that no longer matches the selector is released; an orphan that matches
// is adopted; objects controlled by others are left alone. Adoption and
// release are strategic merge patches on metadata.ownerReferences that also
// carry the dependent's uid, so they fail on a re-created object.
type RefManager[T any, PT interface {
	*T
	api.Object
}] struct {
	client   *client.Client
	owner    *api.ObjectMeta
	ref      api.OwnerReference
	selector labels.Selector
	canAdopt func(ctx context.Context) error
	// finalizers are added on adoption and removed on release (kube's
	// PodControllerRefManager finalizers: the Job's tracking finalizer).
	finalizers []string

	once     sync.Once
	adoptErr error
}

// NewRefManager returns a manager for owner (of apiVersion/kind), claiming
// objects that match selector. canAdopt runs once, before the first
// adoption: it should re-read the owner from the apiserver and fail if it is
// being deleted or was replaced (see RecheckDeletion).
func NewRefManager[T any, PT interface {
	*T
	api.Object
}](c *client.Client, owner *api.ObjectMeta, apiVersion, kind string, selector labels.Selector, canAdopt func(ctx context.Context) error) *RefManager[T, PT] {
	return &RefManager[T, PT]{client: c, owner: owner, ref: NewControllerRef(owner, apiVersion, kind), selector: selector, canAdopt: canAdopt}
}

// WithFinalizers makes adoption add finalizers to the object and release
// remove them, in the same patches, as kube's Job controller claims pods.
func (m *RefManager[T, PT]) WithFinalizers(finalizers ...string) *RefManager[T, PT] {
	m.finalizers = finalizers
	return m
}

// RecheckDeletion returns a canAdopt function that GETs the owner (bypassing
// the cache) and fails if its uid changed or it is being deleted.
func RecheckDeletion(get func(ctx context.Context) (*api.ObjectMeta, error), uid api.UID) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return err
		}
		if fresh.UID != uid {
			return fmt.Errorf("original %s/%s is gone: got uid %s, wanted %s", fresh.Namespace, fresh.Name, fresh.UID, uid)
		}
		if fresh.DeletionTimestamp != nil {
			return fmt.Errorf("%s/%s has just been deleted at %v", fresh.Namespace, fresh.Name, fresh.DeletionTimestamp.Time)
		}
		return nil
	}
}

// RecheckDeletionOf is RecheckDeletion for an owner of kind T: the fresh
// copy is read with c from the owner's namespace and name.
func RecheckDeletionOf[T any, PT interface {
	*T
	api.Object
}](c *client.Client, owner *api.ObjectMeta) func(ctx context.Context) error {
	return RecheckDeletion(func(ctx context.Context) (*api.ObjectMeta, error) {
		fresh, err := client.Resource[T, PT](c).Namespace(owner.Namespace).Get(ctx, owner.Name)
		if err != nil {
			return nil, err
		}
		return PT(fresh).GetObjectMeta(), nil
	}, owner.UID)
}

// Claim returns the objects of objs the owner controls after adopting and
// releasing; errors of individual objects are joined.
func (m *RefManager[T, PT]) Claim(ctx context.Context, objs []*T) ([]*T, error) {
	var claimed []*T
	var errs []error
	for _, obj := range objs {
		ok, err := m.claim(ctx, PT(obj).GetObjectMeta())
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			claimed = append(claimed, obj)
		}
	}
	return claimed, errors.Join(errs...)
}

func (m *RefManager[T, PT]) claim(ctx context.Context, meta *api.ObjectMeta) (bool, error) {
	match := m.selector.Matches(labels.Set(meta.Labels))
	if ref := api.GetControllerOf(meta); ref != nil {
		if ref.UID != m.owner.UID {
			return false, nil
		}
		if match {
			return true, nil
		}
		if m.owner.DeletionTimestamp != nil {
			return false, nil
		}
		if err := m.release(ctx, meta); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return false, nil
	}
	if m.owner.DeletionTimestamp != nil || !match || meta.DeletionTimestamp != nil || meta.Namespace != m.owner.Namespace {
		return false, nil
	}
	if err := m.adopt(ctx, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (m *RefManager[T, PT]) adopt(ctx context.Context, meta *api.ObjectMeta) error {
	m.once.Do(func() {
		if m.canAdopt != nil {
			m.adoptErr = m.canAdopt(ctx)
		}
	})
	if m.adoptErr != nil {
		return fmt.Errorf("can't adopt %s/%s: %w", meta.Namespace, meta.Name, m.adoptErr)
	}
	md := map[string]any{"ownerReferences": []api.OwnerReference{m.ref}, "uid": meta.UID}
	if len(m.finalizers) > 0 {
		md["finalizers"] = m.finalizers
	}
	patch, _ := json.Marshal(map[string]any{"metadata": md})
	return m.patch(ctx, meta, patch)
}

func (m *RefManager[T, PT]) release(ctx context.Context, meta *api.ObjectMeta) error {
	md := map[string]any{"ownerReferences": []map[string]any{{"$patch": "delete", "uid": m.owner.UID}}, "uid": meta.UID}
	if len(m.finalizers) > 0 {
		md["$deleteFromPrimitiveList/finalizers"] = m.finalizers
	}
	patch, _ := json.Marshal(map[string]any{"metadata": md})
	err := m.patch(ctx, meta, patch)
	if apierrors.IsInvalid(err) {
		// The object changed uid (re-created): nothing of ours to release.
		return nil
	}
	return err
}

func (m *RefManager[T, PT]) patch(ctx context.Context, meta *api.ObjectMeta, data []byte) error {
	_, err := client.Resource[T, PT](m.client).Namespace(meta.Namespace).Patch(ctx, meta.Name, client.StrategicMergePatchType, data)
	return err
}
