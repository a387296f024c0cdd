package controller

import (
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/informer"
)

// ControllerUIDIndex indexes objects by the uid of their controller owner;
// orphans are indexed under OrphanIndexKey(namespace).
const ControllerUIDIndex = "controllerUID"

// OrphanIndexKey is the ControllerUIDIndex value of the namespace's objects
// without a controller.
func OrphanIndexKey(namespace string) string { return "orphan/" + namespace }

// AddControllerUIDIndex adds ControllerUIDIndex to inf (a no-op when a
// controller sharing the informer added it already).
func AddControllerUIDIndex[T any, PT interface {
	*T
	api.Object
}](inf *informer.Informer[T]) error {
	return AddIndex(inf, ControllerUIDIndex, func(obj *T) []string {
		meta := PT(obj).GetObjectMeta()
		if ref := api.GetControllerOf(meta); ref != nil {
			return []string{string(ref.UID)}
		}
		return []string{OrphanIndexKey(meta.Namespace)}
	})
}

// AddIndex adds the index name to a shared informer, a no-op when another
// controller sharing the informer added it already.
func AddIndex[T any](inf *informer.Informer[T], name string, index cache.IndexFunc[T]) error {
	err := inf.AddIndexers(cache.Indexers[T]{name: index})
	if err != nil && strings.Contains(err.Error(), "indexer conflict") {
		return nil
	}
	return err
}

// OwnedOrOrphans returns the objects controlled by owner plus the orphans
// of its namespace: the candidates a RefManager claims from.
func OwnedOrOrphans[T any](inf *informer.Informer[T], owner *api.ObjectMeta) []*T {
	owned, _ := inf.Store().ByIndex(ControllerUIDIndex, string(owner.UID))
	orphans, _ := inf.Store().ByIndex(ControllerUIDIndex, OrphanIndexKey(owner.Namespace))
	return append(owned, orphans...)
}
