package app

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission"
)

// volumeGetter implements admission.VolumeGetter on the watch caches (etcd
// for what they have not seen yet), for NodeRestriction's check of the
// token audiences a kubelet asks for. It looks its stores up at request
// time: admission is built before them.
type volumeGetter struct{ a *APIServer }

var _ admission.VolumeGetter = volumeGetter{}

func (g volumeGetter) GetPersistentVolumeClaim(ctx context.Context, namespace, name string) (*api.PersistentVolumeClaim, bool, error) {
	return lookup[api.PersistentVolumeClaim](ctx, g.a.Store("", "persistentvolumeclaims"), namespace, name, false)
}

func (g volumeGetter) GetPersistentVolume(ctx context.Context, name string) (*api.PersistentVolume, bool, error) {
	return lookup[api.PersistentVolume](ctx, g.a.Store("", "persistentvolumes"), "", name, false)
}

func (g volumeGetter) GetCSIDriver(ctx context.Context, name string) (*api.CSIDriver, bool, error) {
	return lookup[api.CSIDriver](ctx, g.a.Store("storage.k8s.io", "csidrivers"), "", name, false)
}
