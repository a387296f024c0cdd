package volumebinding

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// assumeCache lays the scheduler's assumed versions of objects (a volume
// pre-bound to a claim, a claim with selected-node) over an informer's
// cache until the informer delivers a newer version: the one the API
// write produced, or anybody else's change, which then wins.
type assumeCache[T any] struct {
	get  func(key string) (*T, error)
	meta func(*T) *api.ObjectMeta

	mu      sync.Mutex
	assumed map[string]assumedObject[T]
}

type assumedObject[T any] struct {
	obj    *T
	baseRV string // the informer's resourceVersion when assumed
}

func newAssumeCache[T any](get func(key string) (*T, error), meta func(*T) *api.ObjectMeta) *assumeCache[T] {
	return &assumeCache[T]{get: get, meta: meta, assumed: map[string]assumedObject[T]{}}
}

// Get returns the assumed version of key, or the informer's when it has
// none or the informer moved on.
func (c *assumeCache[T]) Get(key string) (*T, error) {
	cur, err := c.get(key)
	if err != nil {
		return nil, err
	}
	return c.overlay(key, cur), nil
}

func (c *assumeCache[T]) overlay(key string, cur *T) *T {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.assumed[key]
	if !ok {
		return cur
	}
	if c.meta(cur).ResourceVersion == a.baseRV {
		return a.obj
	}
	delete(c.assumed, key)
	return cur
}

// GetAPIObj returns the informer's version, ignoring any assumption.
func (c *assumeCache[T]) GetAPIObj(key string) (*T, error) { return c.get(key) }

// Assume records obj as key's version; obj must derive from the version
// the informer holds (same resourceVersion).
func (c *assumeCache[T]) Assume(key string, obj *T) error {
	cur, err := c.get(key)
	if err != nil {
		return err
	}
	have, want := c.meta(cur).ResourceVersion, c.meta(obj).ResourceVersion
	if newer(have, want) {
		return fmt.Errorf("%q is out of sync (stored: %s, assume: %s)", key, have, want)
	}
	c.mu.Lock()
	c.assumed[key] = assumedObject[T]{obj: obj, baseRV: have}
	c.mu.Unlock()
	return nil
}

// Restore drops key's assumption.
func (c *assumeCache[T]) Restore(key string) {
	c.mu.Lock()
	delete(c.assumed, key)
	c.mu.Unlock()
}

// newer reports whether resourceVersion a is newer than b (etcd revisions;
// unparsable versions compare as strings).
func newer(a, b string) bool {
	ai, errA := strconv.ParseUint(a, 10, 64)
	bi, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return a != b && a > b
	}
	return ai > bi
}
