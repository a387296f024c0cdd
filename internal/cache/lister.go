package cache

import (
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
)

// Lister reads a Store the way controllers do: by label selector, by
// namespace, by name with a NotFound error. The objects it returns are shared
// with the store: copy before modifying (see the package documentation).
type Lister[T any] struct {
	store *Store[T]
	gr    apierrors.GroupResource
}

// NewLister returns a lister over s; gr names the resource in NotFound
// errors ("pods", "deployments.apps").
func NewLister[T any](s *Store[T], gr apierrors.GroupResource) Lister[T] {
	return Lister[T]{store: s, gr: gr}
}

func (l Lister[T]) matching(objs []*T, sel labels.Selector) []*T {
	if sel == nil || sel.Empty() {
		return objs
	}
	out := objs[:0]
	for _, o := range objs {
		if sel.Matches(labels.Set(l.store.meta(o).Labels)) {
			out = append(out, o)
		}
	}
	return out
}

// List returns the objects of every namespace whose labels match sel; a nil
// selector matches everything.
func (l Lister[T]) List(sel labels.Selector) []*T {
	return l.matching(l.store.List(), sel)
}

// Get returns a cluster-scoped object by name, or a NotFound StatusError.
func (l Lister[T]) Get(name string) (*T, error) {
	obj, ok := l.store.GetByKey(name)
	if !ok {
		return nil, apierrors.NewNotFound(l.gr, name)
	}
	return obj, nil
}

// Namespace returns a lister of one namespace.
func (l Lister[T]) Namespace(ns string) NamespaceLister[T] {
	return NamespaceLister[T]{l: l, ns: ns}
}

// NamespaceLister reads the objects of one namespace.
type NamespaceLister[T any] struct {
	l  Lister[T]
	ns string
}

// List returns the namespace's objects whose labels match sel; a nil
// selector matches everything.
func (nl NamespaceLister[T]) List(sel labels.Selector) []*T {
	objs, _ := nl.l.store.ByIndex(NamespaceIndex, nl.ns) // the index always exists
	return nl.l.matching(objs, sel)
}

// Get returns the named object of the namespace, or a NotFound StatusError.
func (nl NamespaceLister[T]) Get(name string) (*T, error) {
	obj, ok := nl.l.store.GetByKey(MetaNamespaceKey(nl.ns, name))
	if !ok {
		return nil, apierrors.NewNotFound(nl.l.gr, name)
	}
	return obj, nil
}
