package controller

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/cache"
)

// ResolveControllerRef returns the object of kind (apiVersion, kind) that
// ref names in the lister's namespace, when ref is of that kind and the
// object is still the one referenced (same UID); nil otherwise, as kube's
// controllers' resolveControllerRef.
func ResolveControllerRef[T any, PT interface {
	*T
	api.Object
}](l cache.NamespaceLister[T], ref *api.OwnerReference, apiVersion, kind string) *T {
	if ref == nil || ref.Kind != kind || ref.APIVersion != apiVersion {
		return nil
	}
	obj, err := l.Get(ref.Name)
	if err != nil || PT(obj).GetObjectMeta().UID != ref.UID {
		return nil
	}
	return obj
}
