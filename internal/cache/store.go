package cache

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// MetaNamespaceKeyFunc returns the store key of obj: "namespace/name", or
// "name" when the object has no namespace.
func MetaNamespaceKeyFunc(obj api.Object) string {
	m := obj.GetObjectMeta()
	return MetaNamespaceKey(m.Namespace, m.Name)
}

// MetaNamespaceKey returns the key of the object namespace/name.
func MetaNamespaceKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// SplitMetaNamespaceKey splits a key made by MetaNamespaceKeyFunc.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return "", parts[0], nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("unexpected key format: %q", key)
}

// IndexFunc computes the index values of an object. It must depend only on
// the object.
type IndexFunc[T any] func(obj *T) []string

// Indexers names index functions.
type Indexers[T any] map[string]IndexFunc[T]

// NamespaceIndex is the name of the built-in index by metadata.namespace.
const NamespaceIndex = "namespace"

// Store is a thread-safe map of objects by key with secondary indexes. See
// the package documentation: the objects are shared and must not be
// modified.
type Store[T any] struct {
	meta func(*T) *api.ObjectMeta

	mu       sync.RWMutex
	items    map[string]*T
	indexers Indexers[T]
	// indices[indexName][value] is the set of keys with that index value.
	indices map[string]map[string]map[string]struct{}
	rv      string
}

// NewStore returns an empty store with the given indexers plus
// NamespaceIndex.
func NewStore[T any, PT interface {
	*T
	api.Object
}](indexers Indexers[T]) *Store[T] {
	s := &Store[T]{
		meta:     func(o *T) *api.ObjectMeta { return PT(o).GetObjectMeta() },
		items:    map[string]*T{},
		indexers: Indexers[T]{},
		indices:  map[string]map[string]map[string]struct{}{},
	}
	s.indexers[NamespaceIndex] = func(o *T) []string { return []string{s.meta(o).Namespace} }
	s.indices[NamespaceIndex] = map[string]map[string]struct{}{}
	if err := s.AddIndexers(indexers); err != nil {
		panic(err) // only a duplicate of NamespaceIndex can fail on an empty store
	}
	return s
}

// KeyOf returns the key of obj.
func (s *Store[T]) KeyOf(obj *T) string {
	m := s.meta(obj)
	return MetaNamespaceKey(m.Namespace, m.Name)
}

// Meta returns obj's metadata (read only, like the object).
func (s *Store[T]) Meta(obj *T) *api.ObjectMeta { return s.meta(obj) }

// AddIndexers adds index functions and indexes the objects already stored.
// Adding an existing index name is an error.
func (s *Store[T]) AddIndexers(indexers Indexers[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range indexers {
		if _, ok := s.indexers[name]; ok {
			return fmt.Errorf("indexer conflict: %s", name)
		}
	}
	for name, f := range indexers {
		s.indexers[name] = f
		idx := map[string]map[string]struct{}{}
		s.indices[name] = idx
		for key, obj := range s.items {
			for _, v := range f(obj) {
				addToIndex(idx, v, key)
			}
		}
	}
	return nil
}

func addToIndex(idx map[string]map[string]struct{}, value, key string) {
	set := idx[value]
	if set == nil {
		set = map[string]struct{}{}
		idx[value] = set
	}
	set[key] = struct{}{}
}

// updateIndices moves key from the index values of old (nil: none) to those
// of cur (nil: none). Callers hold mu.
func (s *Store[T]) updateIndices(key string, old, cur *T) {
	for name, f := range s.indexers {
		idx := s.indices[name]
		if old != nil {
			for _, v := range f(old) {
				if set := idx[v]; set != nil {
					delete(set, key)
					if len(set) == 0 {
						delete(idx, v)
					}
				}
			}
		}
		if cur != nil {
			for _, v := range f(cur) {
				addToIndex(idx, v, key)
			}
		}
	}
}

// Add inserts or replaces obj.
func (s *Store[T]) Add(obj *T) { s.Update(obj) }

// Update inserts or replaces obj.
func (s *Store[T]) Update(obj *T) {
	key := s.KeyOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updateIndices(key, s.items[key], obj)
	s.items[key] = obj
}

// Delete removes the object with obj's key.
func (s *Store[T]) Delete(obj *T) { s.DeleteByKey(s.KeyOf(obj)) }

// DeleteByKey removes the object stored under key.
func (s *Store[T]) DeleteByKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.items[key]; ok {
		s.updateIndices(key, old, nil)
		delete(s.items, key)
	}
}

// Replace makes items the entire content of the store and records the
// resourceVersion of the list they came from.
func (s *Store[T]) Replace(items []*T, resourceVersion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = make(map[string]*T, len(items))
	for name := range s.indices {
		s.indices[name] = map[string]map[string]struct{}{}
	}
	for _, obj := range items {
		key := s.KeyOf(obj)
		s.updateIndices(key, s.items[key], obj)
		s.items[key] = obj
	}
	s.rv = resourceVersion
}

// SetResourceVersion records the resourceVersion the content reflects.
func (s *Store[T]) SetResourceVersion(rv string) {
	s.mu.Lock()
	s.rv = rv
	s.mu.Unlock()
}

// ResourceVersion returns the last recorded resourceVersion.
func (s *Store[T]) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Get returns the stored object with obj's key.
func (s *Store[T]) Get(obj *T) (*T, bool) { return s.GetByKey(s.KeyOf(obj)) }

// GetByKey returns the object stored under key.
func (s *Store[T]) GetByKey(key string) (*T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, ok := s.items[key]
	return obj, ok
}

// Len returns the number of objects.
func (s *Store[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// List returns every object, in no particular order.
func (s *Store[T]) List() []*T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*T, 0, len(s.items))
	for _, obj := range s.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every key, sorted.
func (s *Store[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.items))
	for k := range s.items {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ByIndex returns the objects whose index indexName has value.
func (s *Store[T]) ByIndex(indexName, value string) ([]*T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, ok := s.indices[indexName]
	if !ok {
		return nil, fmt.Errorf("index with name %s does not exist", indexName)
	}
	set := idx[value]
	out := make([]*T, 0, len(set))
	for key := range set {
		out = append(out, s.items[key])
	}
	return out, nil
}

// IndexKeys returns the sorted keys of the objects whose index indexName has
// value.
func (s *Store[T]) IndexKeys(indexName, value string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, ok := s.indices[indexName]
	if !ok {
		return nil, fmt.Errorf("index with name %s does not exist", indexName)
	}
	out := make([]string, 0, len(idx[value]))
	for key := range idx[value] {
		out = append(out, key)
	}
	sort.Strings(out)
	return out, nil
}

// IndexValues returns the sorted values present in index indexName.
func (s *Store[T]) IndexValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.indices[indexName]))
	for v := range s.indices[indexName] {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
