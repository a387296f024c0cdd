package app

import (
	"context"
	"errors"

	"github.com/minik8s/minik8s/apiserver/cacher"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// runtimeClasses is the RuntimeClass admission plugin's view of the
// RuntimeClasses: the watch cache, and etcd for a class the cache has not
// seen yet (as kube's plugin reads its lister, then the apiserver). store
// is set once the stores exist.
type runtimeClasses struct{ store *registry.Store }

var _ admission.RuntimeClassGetter = (*runtimeClasses)(nil)

func (r *runtimeClasses) GetRuntimeClass(ctx context.Context, name string) (*api.RuntimeClass, bool, error) {
	if r.store == nil {
		return nil, false, errors.New("the RuntimeClasses are not served yet")
	}
	return lookup[api.RuntimeClass](ctx, r.store, "", name, false)
}

// storageClasses is the DefaultStorageClass plugin's view of the
// StorageClasses: the watch cache, as kube's plugin reads its informer.
type storageClasses struct{ store *registry.Store }

var _ admission.StorageClassLister = (*storageClasses)(nil)

func (s *storageClasses) ListStorageClasses(context.Context) ([]*api.StorageClass, error) {
	if s.store == nil {
		return nil, errors.New("the StorageClasses are not served yet")
	}
	return cachedValues[api.StorageClass](s.store, cacher.Predicate{}), nil
}

// ingressClasses is the DefaultIngressClass plugin's view of the
// IngressClasses: the watch cache, as kube's plugin reads its informer.
type ingressClasses struct{ store *registry.Store }

var _ admission.IngressClassLister = (*ingressClasses)(nil)

func (s *ingressClasses) ListIngressClasses(context.Context) ([]*api.IngressClass, error) {
	if s.store == nil {
		return nil, errors.New("the IngressClasses are not served yet")
	}
	return cachedValues[api.IngressClass](s.store, cacher.Predicate{}), nil
}
