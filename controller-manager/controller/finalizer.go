package controller

import (
	"context"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// NeedsFinalizer reports whether a protection controller must add
// finalizer to the object: it is not being deleted and lacks it (kube's
// protectionutil.NeedToAddFinalizer).
func NeedsFinalizer(meta *api.ObjectMeta, finalizer string) bool {
	return meta.DeletionTimestamp == nil && !slices.Contains(meta.Finalizers, finalizer)
}

// IsDeletionCandidate reports whether the object is being deleted and
// still held by finalizer (kube's protectionutil.IsDeletionCandidate).
func IsDeletionCandidate(meta *api.ObjectMeta, finalizer string) bool {
	return meta.DeletionTimestamp != nil && slices.Contains(meta.Finalizers, finalizer)
}

// SetFinalizer adds finalizer to obj (present) or removes it, with an
// update of a copy through rc (the object's namespace already chosen). It
// is a no-op when obj already has it so, and an object gone meanwhile is
// no error: the protection controllers' add and remove.
func SetFinalizer[T any, PT interface {
	*T
	api.Object
}](ctx context.Context, rc *client.ResourceClient[T, PT], obj *T, finalizer string, present bool) error {
	has := slices.Contains(PT(obj).GetObjectMeta().Finalizers, finalizer)
	if has == present {
		return nil
	}
	clone := api.DeepCopy(obj)
	meta := PT(clone).GetObjectMeta()
	if present {
		meta.Finalizers = append(meta.Finalizers, finalizer)
	} else {
		meta.Finalizers = slices.DeleteFunc(meta.Finalizers, func(f string) bool { return f == finalizer })
	}
	if _, err := rc.Update(ctx, clone); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
