package controller

import "github.com/minik8s/minik8s/internal/informer"

// Cached is the first step of a level-based sync: the object of key (the
// namespace/name key Key makes, or the name of a cluster-scoped object) as
// inf's cache holds it now, nil when the cache has none. Nil means the
// object is gone (or the key is malformed), so the sync has nothing to do;
// the object is shared with the cache, so the sync copies it before it
// changes anything.
func Cached[T any](inf *informer.Informer[T], key string) *T {
	obj, _ := inf.Store().GetByKey(key)
	return obj
}
